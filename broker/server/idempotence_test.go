package server

import (
	"fmt"
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceIdem sends one idempotent batch of values and returns the outcome
// pointer ("ok@<offset>" or the error code).
func (c *cluster) produceIdem(to int, pid int64, epoch int16, seq int32, values ...string) *string {
	var recs []storage.Record
	for _, v := range values {
		recs = append(recs, storage.Record{Value: []byte(v)})
	}
	b := storage.NewBatch(0, recs)
	b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, seq
	out := new(string)
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = -1
	req.TimeoutMillis = 30000
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: b.AppendTo(nil)}}}}
	c.call(to, req, func(r kmsg.Response) {
		p := r.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			*out = fmt.Sprint(p.ErrorCode)
		} else {
			*out = fmt.Sprintf("ok@%d", p.BaseOffset)
		}
	})
	c.run(sim.Second)
	return out
}

// Reference §4.6: duplicates return the original offset and are not
// written again; gaps and fenced epochs are refused; the state survives a
// leader change.
func TestIdempotentProducerSequenceRules(t *testing.T) {
	c := newCluster(t, 2, nil)
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
	}
	c.run(100 * sim.Millisecond)
	steps := []struct {
		epoch int16
		seq   int32
		vals  []string
		want  string
	}{
		{0, 0, []string{"a", "b"}, "ok@0"},
		{0, 0, []string{"a", "b"}, "ok@0"}, // retry of the same batch: duplicate
		{0, 5, []string{"x"}, "45"},        // gap: OUT_OF_ORDER_SEQUENCE_NUMBER
		{0, 2, []string{"c"}, "ok@2"},
		{1, 3, []string{"y"}, "45"}, // new epoch must start at 0
		{1, 0, []string{"d"}, "ok@3"},
		{0, 3, []string{"z"}, "47"}, // old epoch: INVALID_PRODUCER_EPOCH
	}
	for i, s := range steps {
		if got := *c.produceIdem(0, 7, s.epoch, s.seq, s.vals...); got != s.want {
			t.Fatalf("step %d (epoch %d seq %d): %q, want %q", i, s.epoch, s.seq, got, s.want)
		}
	}
	// b1 takes over in epoch 1 and rebuilds the state from its log.
	c.crash(0, false)
	c.leaderAndISR(1, 1, 1, []int32{1}, []int32{0, 1})
	c.run(100 * sim.Millisecond)
	if got := *c.produceIdem(1, 7, 1, 0, "d"); got != "ok@3" {
		t.Fatalf("retry on the new leader: %q, want the original offset ok@3", got)
	}
	if got := c.values(1); !slices.Equal(got, []string{"a", "b", "c", "d"}) {
		t.Fatalf("new leader's log %v, want [a b c d]", got)
	}
}

func TestInitProducerIDGivesDistinctIDs(t *testing.T) {
	c := newCluster(t, 1, nil)
	var ids []int64
	for i := 0; i < 3; i++ {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version = 1
		c.call(0, req, func(r kmsg.Response) { ids = append(ids, r.(*kmsg.InitProducerIDResponse).ProducerID) })
	}
	c.run(sim.Second)
	if len(ids) != 3 || ids[0] < 0 || ids[0] == ids[1] || ids[1] == ids[2] {
		t.Fatalf("producer ids %v: want three distinct ids", ids)
	}
}
