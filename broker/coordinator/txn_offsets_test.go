package coordinator

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// batchLog is one __consumer_offsets partition as batches: the
// coordinator's appends (committed at once, or held) and the markers a
// test writes.
type batchLog struct {
	batches []storage.RecordBatch
	next    int64
	held    []func()
	hold    bool
}

func (l *batchLog) add(b storage.RecordBatch) {
	b.BaseOffset = l.next
	for i := range b.Records {
		b.Records[i].Offset = l.next + int64(i)
	}
	b.LastOffsetDelta = int32(max(len(b.Records)-1, 0))
	l.batches = append(l.batches, b)
	l.next = b.NextOffset()
}

func (l *batchLog) done(f func()) {
	if l.hold {
		l.held = append(l.held, f)
		return
	}
	f()
}

func newTxnCoordinator(t *testing.T) (*Coordinator, *batchLog) {
	l := &batchLog{}
	var c *Coordinator
	c = New(testConfig(), Env{
		Append: func(p int32, recs []storage.Record, done func(sim.Time, *kerr.Error)) {
			l.add(storage.NewBatch(0, recs))
			l.done(func() { done(0, nil) })
		},
		AppendTxn: func(p int32, pid int64, epoch int16, recs []storage.Record, done func(sim.Time, *kerr.Error)) {
			b := storage.NewBatch(0, recs)
			b.Attributes, b.ProducerID, b.ProducerEpoch, b.BaseSequence = storage.TransactionalFlagMask, pid, epoch, 0
			l.add(b)
			l.done(func() { done(0, nil) })
		},
	})
	return c, l
}

// txnCommit sends TxnOffsetCommit v3 of in-p; the answer's code lands in
// the result (-1 until answered).
func txnCommit(c *Coordinator, group, member string, gen int32, pid int64, p int32, off int64) *int16 {
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = 3, "app", group, pid, 0
	req.Generation, req.MemberID = gen, member
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "in", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: p, Offset: off, LeaderEpoch: -1}}}}
	code := new(int16)
	*code = -1
	c.TxnOffsetCommit(0, req, func(r *kmsg.TxnOffsetCommitResponse) { *code = r.Topics[0].Partitions[0].ErrorCode })
	return code
}

// fetch answers OffsetFetch v7 of in-p: the offset, or the error's name.
func fetch(c *Coordinator, group string, p int32, stable bool) any {
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Version, req.Group, req.RequireStable = 7, group, stable
	req.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "in", Partitions: []int32{p}}}
	rp := c.OffsetFetch(0, req).Topics[0].Partitions[0]
	if rp.ErrorCode != 0 {
		return kerr.ErrorForCode(rp.ErrorCode).(*kerr.Error).Message
	}
	return rp.Offset
}

func marker(l *batchLog, pid int64, commit bool) {
	l.add(storage.NewControlBatch(pid, 0, 0, commit, 0))
}

// KIP-98 / KIP-447, GroupCoordinator.handleTxnCommitOffsets: the group
// checks (v3's member and generation), pending offsets invisible to
// OffsetFetch and UNSTABLE_OFFSET_COMMIT with require_stable (also while
// the append is in flight), a COMMIT marker installing them, an ABORT
// dropping them.
func TestTxnOffsetCommitPendingUntilMarker(t *testing.T) {
	c, l := newTxnCoordinator(t)
	g := "g"
	part := c.PartitionFor(g)
	if code := txnCommit(c, g, "", -1, 7, 0, 5); *code != kerr.NotCoordinator.Code {
		t.Fatalf("before leading: %d", *code)
	}
	c.BecomeLeader(0, part)
	if code := txnCommit(c, g, "", -1, 7, 0, 5); *code != kerr.CoordinatorLoadInProgress.Code {
		t.Fatalf("while loading: %d", *code)
	}
	if err := c.LoadBatches(0, part, nil); err != nil {
		t.Fatal(err)
	}
	// v3 with a member the group does not have, or a generation it is not at.
	if code := txnCommit(c, g, "m-1", 1, 7, 0, 5); *code != kerr.UnknownMemberID.Code {
		t.Fatalf("unknown member: %d", *code)
	}
	if code := txnCommit(c, g, "", 3, 7, 0, 5); *code != kerr.IllegalGeneration.Code {
		t.Fatalf("wrong generation: %d", *code)
	}
	// Without member and generation (v0-v2 style): accepted, pending.
	l.hold = true
	code := txnCommit(c, g, "", -1, 7, 0, 5)
	if *code != -1 {
		t.Fatalf("answered before the append committed: %d", *code)
	}
	if got := fetch(c, g, 0, true); got != kerr.UnstableOffsetCommit.Message {
		t.Fatalf("require_stable while appending: %v", got)
	}
	l.hold = false
	l.held[0]()
	if *code != 0 {
		t.Fatalf("TxnOffsetCommit: %d", *code)
	}
	if got := fetch(c, g, 0, false); got != int64(-1) {
		t.Fatalf("OffsetFetch before the marker: %v, want -1", got)
	}
	if got := fetch(c, g, 0, true); got != kerr.UnstableOffsetCommit.Message {
		t.Fatalf("require_stable before the marker: %v", got)
	}
	if got := fetch(c, g, 1, true); got != int64(-1) {
		t.Fatalf("require_stable of another partition: %v", got)
	}
	c.CompleteTxn(0, part, 7, true)
	if got := fetch(c, g, 0, true); got != int64(5) {
		t.Fatalf("after COMMIT: %v, want 5", got)
	}
	if code := txnCommit(c, g, "", -1, 7, 0, 9); *code != 0 {
		t.Fatalf("second TxnOffsetCommit: %d", *code)
	}
	c.CompleteTxn(0, part, 7, false)
	if got := fetch(c, g, 0, true); got != int64(5) {
		t.Fatalf("after ABORT: %v, want 5", got)
	}
	if _, ok := c.PendingTxnOffset(g, 7, "in", 0); ok {
		t.Fatal("pending offset left after the ABORT")
	}
}

// GroupMetadata.completePendingTxnOffsetCommit: a transactional offset
// whose record precedes the committed offset's record (a plain
// OffsetCommit appended while the transaction was open) does not replace
// it on COMMIT; a later one does.
func TestTxnOffsetCommitOnlyIfNewer(t *testing.T) {
	c, _ := newTxnCoordinator(t)
	g := "g"
	part := c.PartitionFor(g)
	c.BecomeLeader(0, part)
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(c.LoadBatches(0, part, nil))
	if code := txnCommit(c, g, "", -1, 7, 0, 5); *code != 0 {
		t.Fatalf("TxnOffsetCommit: %d", *code)
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Version, req.Group, req.Generation = 7, g, -1
	req.Topics = []kmsg.OffsetCommitRequestTopic{{Topic: "in", Partitions: []kmsg.OffsetCommitRequestTopicPartition{{Partition: 0, Offset: 8, LeaderEpoch: -1}}}}
	c.OffsetCommit(0, req, func(*kmsg.OffsetCommitResponse) {})
	c.CompleteTxn(0, part, 7, true)
	if got := fetch(c, g, 0, false); got != int64(8) {
		t.Fatalf("after COMMIT of an older record: %v, want 8", got)
	}
	if code := txnCommit(c, g, "", -1, 7, 0, 11); *code != 0 {
		t.Fatalf("TxnOffsetCommit: %d", *code)
	}
	c.CompleteTxn(0, part, 7, true)
	if got := fetch(c, g, 0, false); got != int64(11) {
		t.Fatalf("after COMMIT of a newer record: %v, want 11", got)
	}
}

// GroupMetadataManager.loadGroupsAndOffsets: a coordinator that loads the
// partition after a fail-over completes the transactional offsets whose
// marker is in the log (COMMIT: installed if newer; ABORT: dropped) and
// keeps pending those without one, which a later marker completes.
func TestTxnOffsetsRebuiltAtLoad(t *testing.T) {
	c, l := newTxnCoordinator(t)
	g := "g"
	part := c.PartitionFor(g)
	c.BecomeLeader(0, part)
	if err := c.LoadBatches(0, part, nil); err != nil {
		t.Fatal(err)
	}
	txnCommit(c, g, "", -1, 7, 0, 5) // committed below
	txnCommit(c, g, "", -1, 8, 1, 6) // aborted below
	txnCommit(c, g, "", -1, 9, 2, 7) // still open at the fail-over
	marker(l, 7, true)
	marker(l, 8, false)

	c2, _ := newTxnCoordinator(t)
	c2.BecomeLeader(0, part)
	if err := c2.LoadBatches(0, part, l.batches); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[int32]any{0: int64(5), 1: int64(-1), 2: kerr.UnstableOffsetCommit.Message} {
		if got := fetch(c2, g, p, true); got != want {
			t.Errorf("in-%d after the load: %v, want %v", p, got, want)
		}
	}
	c2.CompleteTxn(0, part, 9, true)
	if got := fetch(c2, g, 2, true); got != int64(7) {
		t.Fatalf("in-2 after the marker: %v, want 7", got)
	}
}
