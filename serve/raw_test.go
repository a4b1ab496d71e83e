package serve

import (
	"bufio"
	"encoding/binary"
	"hash/crc32"
	"net"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// rawClient speaks the wire protocol by hand: one request at a time.
type rawClient struct {
	t    *testing.T
	nc   net.Conn
	r    *bufio.Reader
	corr int32
}

func dial(t *testing.T, addr string) *rawClient {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { nc.Close() })
	return &rawClient{t: t, nc: nc, r: bufio.NewReader(nc)}
}

// do sends req and reads its response (nil, err when the connection
// closed first).
func (c *rawClient) do(req kmsg.Request) (kmsg.Response, error) {
	c.corr++
	if _, err := c.nc.Write(AppendRequest(nil, c.corr, "raw", req)); err != nil {
		return nil, err
	}
	_ = c.nc.SetReadDeadline(time.Now().Add(30 * time.Second))
	frame, err := ReadFrame(c.r)
	if err != nil {
		return nil, err
	}
	if got := int32(binary.BigEndian.Uint32(frame)); got != c.corr {
		c.t.Fatalf("correlation id %d, want %d", got, c.corr)
	}
	body := frame[4:]
	resp := req.ResponseKind()
	resp.SetVersion(req.GetVersion())
	if resp.IsFlexible() && req.Key() != int16(kmsg.ApiVersions) {
		body = body[1:] // empty tagged fields
	}
	if err := resp.ReadFrom(body); err != nil {
		c.t.Fatalf("decoding %T: %v", resp, err)
	}
	return resp, nil
}

// batch builds an uncompressed v2 record batch of values, as a client
// without idempotence writes it.
func batch(values ...string) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		body := r.AppendTo(nil)
		// AppendTo wrote Length 0 first: rewrite it with the real length.
		r.Length = int32(len(body) - 1)
		recs = r.AppendTo(recs)
	}
	b := kmsg.RecordBatch{Magic: 2, LastOffsetDelta: int32(len(values) - 1), ProducerID: -1, ProducerEpoch: -1, FirstSequence: -1,
		NumRecords: int32(len(values)), Records: recs, FirstTimestamp: 1, MaxTimestamp: 1}
	out := b.AppendTo(nil)
	binary.BigEndian.PutUint32(out[8:], uint32(len(out)-12))
	binary.BigEndian.PutUint32(out[17:], crc32.Checksum(out[21:], crc32.MakeTable(crc32.Castagnoli)))
	return out
}

func metadataReq() *kmsg.MetadataRequest {
	req := kmsg.NewPtrMetadataRequest()
	req.Version = 7
	return req
}

func produceReq(topic string, p int32, acks int16, values ...string) *kmsg.ProduceRequest {
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks, req.TimeoutMillis = acks, 10000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: topic, Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: p, Records: batch(values...)}}}}
	return req
}

func fetchReq(topic string, p int32, offset int64) *kmsg.FetchRequest {
	req := kmsg.NewPtrFetchRequest()
	req.Version = 11
	req.ReplicaID, req.MaxWaitMillis, req.MaxBytes = -1, 100, 1<<20
	req.Topics = []kmsg.FetchRequestTopic{{Topic: topic, Partitions: []kmsg.FetchRequestTopicPartition{{Partition: p, FetchOffset: offset, PartitionMaxBytes: 1 << 20, CurrentLeaderEpoch: -1, LogStartOffset: -1}}}}
	return req
}
