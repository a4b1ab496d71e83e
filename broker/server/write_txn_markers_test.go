package server

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// produceTxn sends one transactional batch of values from producer pid to
// t-0 on broker `to` (acks=all) and returns the outcome pointer.
func (c *cluster) produceTxn(to int, pid int64, epoch int16, seq int32, values ...string) *string {
	var recs []storage.Record
	for _, v := range values {
		recs = append(recs, storage.Record{Value: []byte(v)})
	}
	b := storage.NewBatch(0, recs)
	b.Attributes = storage.TransactionalFlagMask
	b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, seq
	out := new(string)
	req := kmsg.NewPtrProduceRequest()
	req.Version = 7
	req.Acks = -1
	req.TimeoutMillis = 30000
	txnID := fmt.Sprint("txn-", pid)
	req.TransactionID = &txnID
	req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: b.AppendTo(nil)}}}}
	c.call(to, req, func(r kmsg.Response) {
		p := r.(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		if p.ErrorCode != 0 {
			*out = kerr.ErrorForCode(p.ErrorCode).Error()
		} else {
			*out = fmt.Sprintf("ok@%d", p.BaseOffset)
		}
	})
	c.run(sim.Second)
	return out
}

// writeMarker sends WriteTxnMarkers for t-0 to broker `to` and returns the
// partition's answer ("ok" or the error name) once it comes.
func (c *cluster) writeMarker(to int, topic string, pid int64, epoch int16, coordEpoch int32, commit bool) *string {
	req := kmsg.NewPtrWriteTxnMarkersRequest()
	req.Version = 1
	m := kmsg.NewWriteTxnMarkersRequestMarker()
	m.ProducerID, m.ProducerEpoch, m.CoordinatorEpoch, m.Committed = pid, epoch, coordEpoch, commit
	m.Topics = []kmsg.WriteTxnMarkersRequestMarkerTopic{{Topic: topic, Partitions: []int32{0}}}
	req.Markers = []kmsg.WriteTxnMarkersRequestMarker{m}
	out := new(string)
	c.call(to, req, func(r kmsg.Response) {
		rm := r.(*kmsg.WriteTxnMarkersResponse).Markers[0]
		if code := rm.Topics[0].Partitions[0].ErrorCode; code != 0 {
			*out = kerr.ErrorForCode(code).Error()
		} else {
			*out = "ok"
		}
	})
	c.run(sim.Second)
	return out
}

// fetchCommitted fetches t-0 from offset on broker `to` with the isolation
// level and returns the partition's answer.
func (c *cluster) fetchIsolated(to int, offset int64, isolation int8) kmsg.FetchResponseTopicPartition {
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.ReplicaID, req.MaxBytes, req.IsolationLevel = 11, -1, 1<<20, isolation
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes, fp.CurrentLeaderEpoch = 0, offset, 1<<20, -1
	req.Topics = []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{fp}}}
	var out kmsg.FetchResponseTopicPartition
	c.call(to, req, func(r kmsg.Response) { out = r.(*kmsg.FetchResponse).Topics[0].Partitions[0] })
	c.run(100 * sim.Millisecond)
	return out
}

func (c *cluster) latestOffset(to int, isolation int8) int64 {
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID, req.IsolationLevel = 4, -1, isolation
	rp := kmsg.NewListOffsetsRequestTopicPartition()
	rp.Partition, rp.Timestamp, rp.CurrentLeaderEpoch = 0, storage.LatestTimestamp, -1
	req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsRequestTopicPartition{rp}}}
	out := int64(-2)
	c.call(to, req, func(r kmsg.Response) { out = r.(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0].Offset })
	c.run(100 * sim.Millisecond)
	return out
}

func fetchedValues(t *testing.T, data []byte) []string {
	t.Helper()
	bs, err := storage.DecodeBatches(data)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, b := range bs {
		for _, r := range b.Records {
			if b.Attributes&storage.ControlFlagMask != 0 {
				out = append(out, "<marker>")
				continue
			}
			out = append(out, string(r.Value))
		}
	}
	return out
}

// KIP-98: transactional batches hold the LSO at the first ongoing
// transaction; an ABORT marker, answered once replicated, ends the
// transaction and lets the LSO pass it; a read_committed fetch reads below
// the LSO and names the aborted transaction; a new leader knows the
// ongoing transactions from its replicated log.
func TestReadCommittedAfterAbortMarker(t *testing.T) {
	c := newCluster(t, 2, nil)
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
	}
	c.run(100 * sim.Millisecond)
	c.expectAck("plain", c.produceAndWait(0, -1, "p0", sim.Second), "ok@0")
	c.expectAck("txn 10", c.produceTxn(0, 10, 0, 0, "a1", "a2"), "ok@1")
	c.expectAck("txn 11", c.produceTxn(0, 11, 0, 0, "b1"), "ok@3")
	p0, _ := c.broker(0).Partition(tp0)
	if lso := p0.LastStableOffset(); lso != 1 || p0.HighWatermark() != 4 {
		t.Fatalf("LSO %d HW %d, want 1 and 4", lso, p0.HighWatermark())
	}
	r := c.fetchIsolated(0, 0, 1)
	if r.LastStableOffset != 1 || !reflect.DeepEqual(fetchedValues(t, r.RecordBatches), []string{"p0"}) {
		t.Fatalf("read_committed before the marker: LSO %d, %v", r.LastStableOffset, fetchedValues(t, r.RecordBatches))
	}
	if got := c.latestOffset(0, 1); got != 1 {
		t.Fatalf("ListOffsets read_committed latest %d, want the LSO 1", got)
	}
	if got := c.latestOffset(0, 0); got != 4 {
		t.Fatalf("ListOffsets read_uncommitted latest %d, want the HW 4", got)
	}

	if got := *c.writeMarker(0, "t", 10, 0, 5, false); got != "ok" {
		t.Fatalf("ABORT marker: %s\n%s", got, c.timeline())
	}
	if lso := p0.LastStableOffset(); lso != 3 {
		t.Fatalf("LSO after the abort %d, want 3 (pid 11's transaction)", lso)
	}
	r = c.fetchIsolated(0, 0, 1)
	wantAborted := []kmsg.FetchResponseTopicPartitionAbortedTransaction{{ProducerID: 10, FirstOffset: 1}}
	if r.LastStableOffset != 3 || !reflect.DeepEqual(fetchedValues(t, r.RecordBatches), []string{"p0", "a1", "a2"}) ||
		!reflect.DeepEqual(r.AbortedTransactions, wantAborted) {
		t.Fatalf("read_committed after the abort: LSO %d, %v, aborted %+v", r.LastStableOffset, fetchedValues(t, r.RecordBatches), r.AbortedTransactions)
	}
	if r := c.fetchIsolated(0, 0, 0); r.AbortedTransactions != nil || len(fetchedValues(t, r.RecordBatches)) != 5 || r.LastStableOffset != 3 {
		t.Fatalf("read_uncommitted: %v, aborted %+v, LSO %d", fetchedValues(t, r.RecordBatches), r.AbortedTransactions, r.LastStableOffset)
	}

	// Fencing, as Kafka: a stale coordinator epoch, an older producer epoch.
	if got := *c.writeMarker(0, "t", 10, 0, 4, false); got != kerr.TransactionCoordinatorFenced.Error() {
		t.Fatalf("stale coordinator epoch: %s", got)
	}
	if got := *c.writeMarker(0, "t", 10, 1, 5, false); got != "ok" { // the coordinator bumps pid 10's epoch
		t.Fatalf("fencing marker: %s", got)
	}
	if got := *c.produceTxn(0, 10, 0, 2, "late"); got != kerr.InvalidProducerEpoch.Error() {
		t.Fatalf("zombie batch: %s", got)
	}
	if got := *c.writeMarker(0, "t", 10, 0, 5, true); got != kerr.InvalidProducerEpoch.Error() {
		t.Fatalf("marker with an old producer epoch: %s", got)
	}
	if got := *c.writeMarker(1, "t", 11, 0, 5, true); got != kerr.NotLeaderForPartition.Error() {
		t.Fatalf("marker to a follower: %s", got)
	}
	if got := *c.produceAndWait(0, -1, "plain-11", sim.Second); got != "ok@6" {
		t.Fatalf("plain batch: %s", got)
	}

	// b1 takes over: it learnt pid 11's ongoing transaction by replication.
	c.crash(0, false)
	c.leaderAndISR(1, 1, 1, []int32{1}, []int32{0, 1})
	c.run(100 * sim.Millisecond)
	p1, _ := c.broker(1).Partition(tp0)
	if f, ok := p1.Log().FirstUnstableOffset(); !ok || f != 3 {
		t.Fatalf("new leader's first unstable offset %d %v, want 3", f, ok)
	}
	if got := *c.writeMarker(1, "t", 11, 0, 5, true); got != "ok" {
		t.Fatalf("COMMIT on the new leader: %s", got)
	}
	if lso, hw := p1.LastStableOffset(), p1.HighWatermark(); lso != hw {
		t.Fatalf("after the commit LSO %d, HW %d: want equal", lso, hw)
	}
	r = c.fetchIsolated(1, 3, 1)
	if !reflect.DeepEqual(fetchedValues(t, r.RecordBatches), []string{"b1", "<marker>", "<marker>", "plain-11", "<marker>"}) || len(r.AbortedTransactions) != 2 { // the abort ending at 4 and the fencing one at 5
		t.Fatalf("read_committed from 3 on the new leader: %v, aborted %+v", fetchedValues(t, r.RecordBatches), r.AbortedTransactions)
	}
}

// The marker waits for acks=all, as Kafka's appendRecords with
// RequiredAcks -1: with the follower cut off it is not answered until the
// HW passes it (the follower leaves the ISR after replica.lag.time.max.ms)
// or the 30 s request timeout passes.
func TestTxnMarkerWaitsForReplication(t *testing.T) {
	c := newCluster(t, 2, nil)
	for i := 0; i < 2; i++ {
		c.leaderAndISR(i, 0, 0, []int32{0, 1}, []int32{0, 1})
	}
	c.run(100 * sim.Millisecond)
	c.expectAck("txn", c.produceTxn(0, 10, 0, 0, "a"), "ok@0")
	c.cut(1, 0)
	c.cut(0, 1)
	out := c.writeMarker(0, "t", 10, 0, 0, true)
	if *out != "" {
		t.Fatalf("marker answered %q before its replication", *out)
	}
	c.run(60 * sim.Second)
	if *out == "" {
		t.Fatal("marker never answered")
	}
}

type verifier struct {
	asked  []string
	answer *kerr.Error
	later  []func(*kerr.Error)
}

func (v *verifier) VerifyTxn(txnID string, pid int64, epoch int16, tp storage.TopicPartition, done func(*kerr.Error)) {
	v.asked = append(v.asked, fmt.Sprintf("%s/%d/%d/%s", txnID, pid, epoch, tp))
	v.later = append(v.later, done)
}

// KIP-890 part 1: the first transactional batch of a producer in a
// partition waits for the coordinator's verification; a refused one gets
// INVALID_TXN_STATE and is not appended; later batches of an ongoing
// transaction are not verified.
func TestTxnVerificationHook(t *testing.T) {
	c := newCluster(t, 1, nil)
	c.leaderAndISR(0, 0, 0, []int32{0}, []int32{0})
	c.run(100 * sim.Millisecond)
	v := &verifier{}
	c.broker(0).SetTxnVerifier(v)
	out := c.produceTxn(0, 10, 0, 0, "a")
	if *out != "" || len(v.asked) != 1 || v.asked[0] != "txn-10/10/0/t-0" {
		t.Fatalf("before the verification: %q, asked %v", *out, v.asked)
	}
	c.must(c.w.Act(c.brokers[0], func(*sim.Context) { v.later[0](kerr.InvalidTxnState) }))
	c.run(sim.Second)
	if *out != kerr.InvalidTxnState.Error() || len(c.values(0)) != 0 {
		t.Fatalf("refused verification: %q, log %v", *out, c.values(0))
	}
	out = c.produceTxn(0, 10, 0, 0, "a")
	c.must(c.w.Act(c.brokers[0], func(*sim.Context) { v.later[1](nil) }))
	c.run(sim.Second)
	if *out != "ok@0" {
		t.Fatalf("accepted verification: %q", *out)
	}
	if got := *c.produceTxn(0, 10, 0, 1, "b"); got != "ok@1" || len(v.asked) != 2 {
		t.Fatalf("second batch of the transaction: %q, asked %v", got, v.asked)
	}
}

// A marker on a __consumer_offsets partition reaches the group
// coordinator's hook once replicated.
func TestTxnMarkerGroupHook(t *testing.T) {
	c := newCluster(t, 1, nil)
	req := kmsg.NewPtrLeaderAndISRRequest()
	req.Version, req.ControllerEpoch = 1, c.cEpoch
	req.PartitionStates = []kmsg.LeaderAndISRRequestTopicPartition{{Topic: "__consumer_offsets", Partition: 0, ControllerEpoch: c.cEpoch, Leader: 0, LeaderEpoch: 0, ISR: []int32{0}, Replicas: []int32{0}}}
	c.call(0, req, func(kmsg.Response) {})
	c.run(sim.Second)
	var got []string
	c.broker(0).SetTxnMarkerHook(func(partition int32, pid int64, epoch int16, commit bool) {
		got = append(got, fmt.Sprint(partition, pid, epoch, commit))
	})
	if out := *c.writeMarker(0, "__consumer_offsets", 10, 0, 0, true); out != "ok" {
		t.Fatalf("marker: %s", out)
	}
	if !reflect.DeepEqual(got, []string{"0 10 0 true"}) {
		t.Fatalf("hook calls %v", got)
	}
}
