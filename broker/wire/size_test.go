package wire

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSizeMatchesEncoding is size.go's property test: on random messages
// of every version it covers, a computed length is the encoding's.
func TestSizeMatchesEncoding(t *testing.T) {
	r := rand.New(rand.NewPCG(17, 4))
	str := func() string { return strings.Repeat("t", []int{0, 1, 5, 126, 127, 200}[r.IntN(6)]) }
	count := func() int {
		if r.IntN(50) == 0 {
			return 130 // a two-byte compact length
		}
		return r.IntN(4)
	}
	bytes := func() []byte {
		switch r.IntN(4) {
		case 0:
			return nil
		case 1:
			return []byte{}
		}
		return make([]byte, []int{1, 126, 127, 128, 20000}[r.IntN(5)]>>(r.IntN(2)*10))
	}
	check := func(what string, version int16, m interface{ AppendTo([]byte) []byte }) bool {
		n, ok := encodedSize(m)
		if ok && n != len(m.AppendTo(nil)) {
			t.Fatalf("%s v%d: computed %d bytes, encoding has %d", what, version, n, len(m.AppendTo(nil)))
		}
		return ok
	}
	covered := map[string]int{}
	for i := 0; i < 500; i++ {
		for v := int16(0); v <= 13; v++ {
			fr := kmsg.NewFetchRequest()
			fr.Version, fr.ReplicaID, fr.Rack = v, r.Int32(), str()
			if r.IntN(10) == 0 {
				fr.ForgottenTopics = []kmsg.FetchRequestForgottenTopic{{Topic: "f"}}
			}
			for range count() {
				ft := kmsg.FetchRequestTopic{Topic: str()}
				for range count() {
					p := kmsg.FetchRequestTopicPartition{Partition: r.Int32(), FetchOffset: r.Int64(), LastFetchedEpoch: -1}
					if r.IntN(2) == 0 {
						p.Default()
					}
					if r.IntN(4) == 0 {
						p.ReplicaDirectoryID[3] = 1
					}
					ft.Partitions = append(ft.Partitions, p)
				}
				fr.Topics = append(fr.Topics, ft)
			}
			if check("FetchRequest", v, &fr) {
				covered["FetchRequest"]++
			}

			fs := kmsg.NewFetchResponse()
			fs.Version = v
			for range count() {
				ft := kmsg.FetchResponseTopic{Topic: str()}
				for range count() {
					p := kmsg.NewFetchResponseTopicPartition()
					p.RecordBatches = bytes()
					if r.IntN(3) == 0 {
						p.DivergingEpoch.Epoch, p.DivergingEpoch.EndOffset = 3, 4
					}
					if r.IntN(8) == 0 {
						p.CurrentLeader.LeaderID = 2
					}
					switch r.IntN(3) {
					case 0:
						p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 1}, {ProducerID: 2}}
					case 1:
						p.AbortedTransactions = []kmsg.FetchResponseTopicPartitionAbortedTransaction{}
					}
					ft.Partitions = append(ft.Partitions, p)
				}
				fs.Topics = append(fs.Topics, ft)
			}
			if check("FetchResponse", v, &fs) {
				covered["FetchResponse"]++
			}

			pr := kmsg.NewProduceRequest()
			pr.Version = v
			if r.IntN(2) == 0 {
				s := str()
				pr.TransactionID = &s
			}
			for range count() {
				pt := kmsg.ProduceRequestTopic{Topic: str()}
				for range count() {
					pt.Partitions = append(pt.Partitions, kmsg.ProduceRequestTopicPartition{Partition: 1, Records: bytes()})
				}
				pr.Topics = append(pr.Topics, pt)
			}
			if check("ProduceRequest", v, &pr) {
				covered["ProduceRequest"]++
			}

			ps := kmsg.NewProduceResponse()
			ps.Version = v
			for range count() {
				pt := kmsg.ProduceResponseTopic{Topic: str()}
				for range count() {
					p := kmsg.NewProduceResponseTopicPartition()
					if r.IntN(2) == 0 {
						s := str()
						p.ErrorMessage = &s
						p.ErrorRecords = []kmsg.ProduceResponseTopicPartitionErrorRecord{{ErrorMessage: &s}, {}}
					}
					pt.Partitions = append(pt.Partitions, p)
				}
				ps.Topics = append(ps.Topics, pt)
			}
			if check("ProduceResponse", v, &ps) {
				covered["ProduceResponse"]++
			}
		}
	}
	for _, k := range []string{"FetchRequest", "FetchResponse", "ProduceRequest", "ProduceResponse"} {
		if covered[k] < 500 {
			t.Errorf("%s: only %d messages computed", k, covered[k])
		}
	}
	t.Log(covered)
}
