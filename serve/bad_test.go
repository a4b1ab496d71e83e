package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"hash/crc32"
	"strings"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestMalformedFramesCloseOnlyTheirConnection: garbage, an unknown api
// and an unsupported version each close the connection they came on
// (Kafka's SocketServer does the same); another connection keeps working.
func TestMalformedFramesCloseOnlyTheirConnection(t *testing.T) {
	s := startServer(t, 20, nil, nil)
	good := dial(t, s.Addrs()[0])
	if _, err := good.do(metadataReq()); err != nil {
		t.Fatal(err)
	}
	unsupported := kmsg.NewPtrMetadataRequest()
	unsupported.Version = 99
	for name, frame := range map[string][]byte{
		"a frame size of -7":       {0xff, 0xff, 0xff, 0xf9},
		"api key 999":              {0, 0, 0, 10, 0x03, 0xe7, 0, 0, 0, 0, 0, 1, 0, 0},
		"Metadata v99":             {0, 0, 0, 10, 0, 3, 0, 99, 0, 0, 0, 1, 0, 0},
		"a body cut short":         AppendRequest(nil, 1, "x", produceReq("t", 0, -1, "a"))[:40],
		"a client id past the end": {0, 0, 0, 10, 0, 3, 0, 7, 0, 0, 0, 1, 0x7f, 0},
	} {
		bad := dial(t, s.Addrs()[0])
		if n := binary.BigEndian.Uint32(frame); int(n) != len(frame)-4 && len(frame) > 4 && name == "a body cut short" {
			binary.BigEndian.PutUint32(frame, uint32(len(frame)-4)) // a whole frame whose body is cut
		}
		if _, err := bad.nc.Write(frame); err != nil {
			t.Fatal(err)
		}
		_ = bad.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
		if _, err := ReadFrame(bad.r); err == nil || strings.Contains(err.Error(), "timeout") {
			t.Errorf("%s: the connection was not closed (%v)", name, err)
		}
		if _, err := good.do(metadataReq()); err != nil {
			t.Fatalf("after %s, the other connection broke: %v", name, err)
		}
	}
}

// TestApiVersionsUnsupportedVersion: KIP-511's answer at v0.
func TestApiVersionsUnsupportedVersion(t *testing.T) {
	s := startServer(t, 20, nil, nil)
	c := dial(t, s.Addrs()[1])
	req := kmsg.NewPtrApiVersionsRequest()
	req.Version = 99
	// A client cannot encode v99; write v3's body under a v99 header.
	frame := AppendRequest(nil, 5, "x", func() kmsg.Request { r := kmsg.NewPtrApiVersionsRequest(); r.Version = 3; return r }())
	binary.BigEndian.PutUint16(frame[6:], 99)
	if _, err := c.nc.Write(frame); err != nil {
		t.Fatal(err)
	}
	resp, err := ReadFrame(c.r)
	if err != nil {
		t.Fatal(err)
	}
	var av kmsg.ApiVersionsResponse
	av.Version = 0
	if err := av.ReadFrom(resp[4:]); err != nil {
		t.Fatal(err)
	}
	if av.ErrorCode != kerr.UnsupportedVersion.Code || len(av.ApiKeys) == 0 {
		t.Fatalf("ApiVersions v99 answered error %d with %d api keys", av.ErrorCode, len(av.ApiKeys))
	}
}

// compressBatch rebuilds batch with its records compressed by codec.
func compressBatch(t *testing.T, b []byte, codec int) []byte {
	recs := b[61:]
	var out []byte
	switch codec {
	case 1:
		var buf bytes.Buffer
		w := gzip.NewWriter(&buf)
		w.Write(recs)
		w.Close()
		out = buf.Bytes()
	case 2:
		out = s2.EncodeSnappy(nil, recs)
	case 3:
		var buf bytes.Buffer
		w := lz4.NewWriter(&buf)
		w.Write(recs)
		w.Close()
		out = buf.Bytes()
	case 4:
		enc, _ := zstd.NewWriter(nil)
		out = enc.EncodeAll(recs, nil)
	}
	c := append(append([]byte(nil), b[:61]...), out...)
	binary.BigEndian.PutUint32(c[8:], uint32(len(c)-12))
	binary.BigEndian.PutUint16(c[21:], uint16(codec))
	binary.BigEndian.PutUint32(c[17:], crc32.Checksum(c[21:], castagnoli))
	return c
}

// TestCompressedProduce: every codec a client may use is decompressed on
// the way in; a consumer reads the records back.
func TestCompressedProduce(t *testing.T) {
	for codec := 1; codec <= 4; codec++ {
		in := produceReq("t", 0, -1, "x", "y", "z")
		in.Topics[0].Partitions[0].Records = compressBatch(t, in.Topics[0].Partitions[0].Records, codec)
		if err := decompressProduce(in); err != nil {
			t.Fatalf("%s: %v", storage.CodecName(int16(codec)), err)
		}
		var got []string
		eachRecord(in.Topics[0].Partitions[0].Records, func(_ *kmsg.RecordBatch, r *kmsg.Record) { got = append(got, string(r.Value)) })
		if strings.Join(got, "") != "xyz" {
			t.Fatalf("%s: decompressed to %q", storage.CodecName(int16(codec)), got)
		}
		b := in.Topics[0].Partitions[0].Records
		if crc32.Checksum(b[21:], castagnoli) != binary.BigEndian.Uint32(b[17:]) {
			t.Fatalf("%s: CRC not recomputed", storage.CodecName(int16(codec)))
		}
	}
	bad := produceReq("t", 0, -1, "x")
	bad.Topics[0].Partitions[0].Records[22] |= 4 // zstd, but the records are plain
	if err := decompressProduce(bad); err == nil {
		t.Fatal("a batch that is not zstd decompressed without an error")
	}
}
