package serve

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
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
	binary.BigEndian.PutUint32(c[17:], storage.CRC32C(c[21:]))
	return c
}

// TestCompressedBatchesStoredAsProduced: a batch of every codec is stored
// as produced (compression.type=producer, Kafka's default): a fetch
// returns each with its codec bits and its records as sent, and the
// history holds their records as acknowledged sends. A batch whose
// records do not decompress is refused with CORRUPT_MESSAGE, as Kafka's
// LogValidator refuses it, and the connection serves on.
func TestCompressedBatchesStoredAsProduced(t *testing.T) {
	s := startServer(t, 20, nil, nil)
	c := dial(t, leaderOf(t, s, 0))
	for codec := 1; codec <= 4; codec++ {
		in := produceReq("t", 0, -1, "x", "y", "z")
		in.Topics[0].Partitions[0].Records = compressBatch(t, in.Topics[0].Partitions[0].Records, codec)
		resp, err := c.do(in)
		if err != nil {
			t.Fatalf("%s: %v", storage.CodecName(int16(codec)), err)
		}
		if p := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.BaseOffset != int64(3*(codec-1)) {
			t.Fatalf("%s: error %d at offset %d", storage.CodecName(int16(codec)), p.ErrorCode, p.BaseOffset)
		}
	}
	bad := produceReq("t", 0, -1, "not gzip")
	recs := bad.Topics[0].Partitions[0].Records
	binary.BigEndian.PutUint16(recs[21:], 1) // gzip, but the records are plain
	binary.BigEndian.PutUint32(recs[17:], storage.CRC32C(recs[21:]))
	resp, err := c.do(bad)
	if err != nil {
		t.Fatalf("a corrupt gzip batch closed the connection: %v", err)
	}
	if code := resp.(*kmsg.ProduceResponse).Topics[0].Partitions[0].ErrorCode; code != kerr.CorruptMessage.Code {
		t.Fatalf("a corrupt gzip batch: error %d, want CORRUPT_MESSAGE (%d)", code, kerr.CorruptMessage.Code)
	}
	fresp, err := c.do(fetchReq("t", 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	data := fresp.(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches
	var codecs []int16
	for rest := data; len(rest) >= 61; {
		var b kmsg.RecordBatch
		n := int(binary.BigEndian.Uint32(rest[8:])) + 12
		if err := b.ReadFrom(rest[:n]); err != nil {
			t.Fatal(err)
		}
		codecs = append(codecs, b.Attributes&storage.CompressionCodecMask)
		rest = rest[n:]
	}
	var got []string
	eachRecord(data, func(_ *kmsg.RecordBatch, r *kmsg.Record) { got = append(got, string(r.Value)) })
	if !slices.Equal(codecs, []int16{1, 2, 3, 4}) || strings.Join(got, "") != "xyzxyzxyzxyz" {
		t.Fatalf("fetched batches of codecs %v holding %q, want codecs [1 2 3 4] holding xyz each", codecs, got)
	}
	res := stopAndWait(t, s)
	if n := ackedSends(res, "raw"); n != 12 {
		t.Fatalf("the history holds %d acknowledged sends, want the 12 compressed records", n)
	}
	for _, v := range res.Verdicts {
		if v.Result != checkers.ResultOK && v.Checker != checkers.NameLinearizability {
			t.Errorf("%s: %v", v.Checker, v)
		}
	}
}
