package client

// This file is the transactional producer (KIP-98; Kafka's
// TransactionManager): transactional.id, InitTransactions,
// BeginTransaction, SendOffsetsToTransaction, CommitTransaction and
// AbortTransaction. A node cannot block, so each call that Kafka makes
// blocking takes a TxnCallback that runs once with its outcome.
//
// Requests, one at a time, to the transaction coordinator found with
// FindCoordinator v3 key_type 1 (and to the group coordinator for
// TxnOffsetCommit, key_type 0):
//   - InitProducerId v4 with the transactional.id and
//     transaction.timeout.ms (KIP-588's PRODUCER_FENCED): the producer id
//     and epoch; every partition's sequence restarts at 0.
//   - AddPartitionsToTxn before the first batch of each partition of the
//     transaction is sent: v3 with transaction version 1, the v5 batch
//     form (VerifyOnly false) with version 2 (KIP-890 part 2's client).
//   - AddOffsetsToTxn v3 (v4 with version 2), then TxnOffsetCommit v3
//     (KIP-447: generation and member id) to the group coordinator.
//   - EndTxn v3 (v5 with version 2, whose answer carries the bumped epoch,
//     KIP-890 part 2) once every batch of the transaction is answered.
//
// Errors, as Kafka's TransactionManager sorts them:
//   - retried: COORDINATOR_NOT_AVAILABLE and NOT_COORDINATOR (after a new
//     FindCoordinator), COORDINATOR_LOAD_IN_PROGRESS, CONCURRENT_TRANSACTIONS,
//     UNKNOWN_TOPIC_OR_PARTITION, lost or timed-out requests, after
//     retry.backoff.ms;
//   - fatal (the producer can only be closed): PRODUCER_FENCED,
//     INVALID_PRODUCER_EPOCH, TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
//     INVALID_PRODUCER_ID_MAPPING, INVALID_TXN_STATE, UNSUPPORTED_VERSION,
//     INVALID_TRANSACTION_TIMEOUT, and any error Kafka does not expect;
//   - abortable (AbortTransaction, then carry on): a batch of the
//     transaction failed (TRANSACTION_ABORTABLE included), or
//     TxnOffsetCommit's UNKNOWN_MEMBER_ID / ILLEGAL_GENERATION /
//     FENCED_INSTANCE_ID (the group moved on).
//
// Simplified vs Kafka: no ACL errors beyond treating them as Kafka does;
// with transaction version 1, an abort after a batch failed with its
// sequence number used bumps the epoch with InitProducerId (KIP-360) so
// the partition can start again at sequence 0; Send outside a transaction,
// or in an error state, returns an error instead of failing the record's
// callback; the coordinator is asked for again only after a coordinator
// error or a lost request.

import (
	"errors"
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TxnCallback receives the outcome of a transactional call: nil, or a
// *TxnError.
type TxnCallback func(ctx *sim.Context, err error)

// TxnError is a failed transactional call.
type TxnError struct {
	Op  string // the call: "InitTransactions", "CommitTransaction", ...
	Err error  // the cause: a *kerr.Error, or one of this package's errors
	// Fatal: the producer can only be closed (PRODUCER_FENCED, ...);
	// otherwise the transaction must be aborted (abortable error).
	Fatal bool
}

func (e *TxnError) Error() string {
	kind := "abortable: call AbortTransaction"
	if e.Fatal {
		kind = "fatal: close the producer"
	}
	return fmt.Sprintf("%s failed (%s): %v", e.Op, kind, e.Err)
}

// Unwrap returns Err.
func (e *TxnError) Unwrap() error { return e.Err }

// ErrTransactionAborted fails the records of an aborted transaction that
// were never sent.
var ErrTransactionAborted = errors.New("transaction aborted before the batch was sent")

// TxnOffset is one offset SendOffsetsToTransaction commits.
type TxnOffset struct {
	Topic       string
	Partition   int32
	Offset      int64
	LeaderEpoch int32 // -1 when unknown
	Metadata    string
}

// GroupMetadata is the consumer's group metadata (ConsumerGroupMetadata).
type GroupMetadata struct {
	GroupID    string
	Generation int32  // -1 when unknown
	MemberID   string // "" when unknown
}

type txnState uint8

const (
	txnUninitialized txnState = iota
	txnInitializing
	txnReady
	txnInTransaction
	txnCommitting
	txnAborting
	txnAbortableError
	txnFatalError
)

func (s txnState) String() string {
	return [...]string{"UNINITIALIZED", "INITIALIZING", "READY", "IN_TRANSACTION", "COMMITTING_TRANSACTION",
		"ABORTING_TRANSACTION", "ABORTABLE_ERROR", "FATAL_ERROR"}[s]
}

type txnOpKind uint8

const (
	opInitProducerID txnOpKind = iota
	opAddPartitions
	opAddOffsets
	opTxnOffsetCommit
	opEndTxn
	opFindCoordinator
)

// txnOp is one transactional request to make (and remake until answered).
type txnOp struct {
	kind    txnOpKind
	api     string // the user's call, for errors
	commit  bool
	bump    bool // InitProducerId with the current id and epoch (KIP-360)
	group   GroupMetadata
	offsets []TxnOffset
	parts   []storage.TopicPartition // AddPartitions: the partitions sent
	cb      TxnCallback
	retryAt sim.Time
	// find: the op whose coordinator a FindCoordinator looks up.
	find *txnOp
}

// transactions is the TransactionManager's state.
type transactions struct {
	id          string
	state       txnState
	lastErr     error
	coordinator int32            // -1 unknown
	groupCoords map[string]int32 // group coordinators
	ops         []*txnOp         // ops[0] is the next or the one in flight
	inflight    bool
	added       map[storage.TopicPartition]bool // in the transaction
	newParts    []storage.TopicPartition        // waiting to be added, sorted
	offsets     bool                            // AddOffsetsToTxn done in this transaction
	needBump    bool                            // a sequenced batch failed: bump the epoch after the abort (tv1)
}

func newTransactions(id string) *transactions {
	return &transactions{id: id, coordinator: -1, groupCoords: map[string]int32{}, added: map[storage.TopicPartition]bool{}}
}

// TransactionState returns the transaction manager's state (Kafka's
// names: READY, IN_TRANSACTION, ...), "" for a producer without
// transactional.id.
func (p *Producer) TransactionState() string {
	if p.txn == nil {
		return ""
	}
	return p.txn.state.String()
}

func (p *Producer) txnCall(api string, want ...txnState) error {
	t := p.txn
	switch {
	case t == nil:
		return fmt.Errorf("client: %s: the producer has no transactional.id", api)
	case !p.started:
		return fmt.Errorf("client: %s before Start", api)
	case t.state == txnFatalError:
		return &TxnError{Op: api, Err: t.lastErr, Fatal: true}
	case !slices.Contains(want, t.state):
		return fmt.Errorf("client: %s in state %s: allowed in %v", api, t.state, want)
	}
	return nil
}

// InitTransactions gets the producer id and epoch of transactional.id,
// fencing earlier producers with the same id and letting the coordinator
// finish or abort their open transaction. cb runs once with the outcome.
func (p *Producer) InitTransactions(ctx *sim.Context, cb TxnCallback) error {
	if err := p.txnCall("InitTransactions", txnUninitialized); err != nil {
		return err
	}
	p.txnTransition(ctx, txnInitializing)
	p.txn.ops = append(p.txn.ops, &txnOp{kind: opInitProducerID, api: "InitTransactions", cb: cb})
	p.arm(ctx, ctx.Now())
	return nil
}

// BeginTransaction starts a transaction: the records sent until
// CommitTransaction or AbortTransaction belong to it.
func (p *Producer) BeginTransaction(ctx *sim.Context) error {
	if err := p.txnCall("BeginTransaction", txnReady); err != nil {
		return err
	}
	p.txnTransition(ctx, txnInTransaction)
	return nil
}

// SendOffsetsToTransaction adds the consumer group's offsets to the
// transaction: AddOffsetsToTxn to the transaction coordinator, then
// TxnOffsetCommit to the group coordinator; they become visible when the
// transaction commits.
func (p *Producer) SendOffsetsToTransaction(ctx *sim.Context, offsets []TxnOffset, group GroupMetadata, cb TxnCallback) error {
	if err := p.txnCall("SendOffsetsToTransaction", txnInTransaction); err != nil {
		return err
	}
	if group.GroupID == "" {
		return fmt.Errorf("client: SendOffsetsToTransaction: the group id is empty")
	}
	p.txn.ops = append(p.txn.ops, &txnOp{kind: opAddOffsets, api: "SendOffsetsToTransaction", group: group,
		offsets: slices.Clone(offsets), cb: cb})
	p.arm(ctx, ctx.Now())
	return nil
}

// CommitTransaction flushes the transaction's records and commits it once
// each is acknowledged. If one fails, cb gets an abortable *TxnError.
func (p *Producer) CommitTransaction(ctx *sim.Context, cb TxnCallback) error {
	if err := p.txnCall("CommitTransaction", txnInTransaction); err != nil {
		return err
	}
	p.txnTransition(ctx, txnCommitting)
	p.txn.ops = append(p.txn.ops, &txnOp{kind: opEndTxn, api: "CommitTransaction", commit: true, cb: cb})
	p.Flush(ctx)
	return nil
}

// AbortTransaction aborts the transaction: records not yet sent fail with
// ErrTransactionAborted; once those in flight are answered, EndTxn(abort)
// is sent (when the transaction added any partition or offsets).
func (p *Producer) AbortTransaction(ctx *sim.Context, cb TxnCallback) error {
	if err := p.txnCall("AbortTransaction", txnInTransaction, txnAbortableError); err != nil {
		return err
	}
	t := p.txn
	p.txnTransition(ctx, txnAborting)
	t.newParts = nil
	for _, w := range p.waiting {
		p.completeRecord(ctx, w, -1, -1, &SendError{Err: ErrTransactionAborted, Definite: true})
	}
	p.waiting = nil
	for _, ps := range p.partList {
		for len(ps.queue) > 0 {
			p.failBatch(ctx, ps, ps.queue[0], ErrTransactionAborted)
		}
	}
	// Drop the ops of the transaction that have not been sent (the one in
	// flight stays: its answer is awaited).
	var sent *txnOp
	if t.inflight && len(t.ops) > 0 {
		sent = t.ops[0]
	}
	var dropped []*txnOp
	t.ops = slices.DeleteFunc(t.ops, func(o *txnOp) bool {
		drop := (o.kind == opAddOffsets || o.kind == opTxnOffsetCommit || o.kind == opAddPartitions) && o != sent
		if drop {
			dropped = append(dropped, o)
		}
		return drop
	})
	for _, o := range dropped {
		if o.cb != nil {
			o.cb(ctx, &TxnError{Op: o.api, Err: ErrTransactionAborted})
		}
	}
	op := &txnOp{kind: opEndTxn, api: "AbortTransaction", cb: cb}
	if len(t.added) == 0 && !t.offsets && sent == nil {
		p.txnCompleted(ctx, op) // nothing reached the coordinator
		return nil
	}
	t.ops = append(t.ops, op)
	p.arm(ctx, ctx.Now())
	return nil
}

func (p *Producer) txnTransition(ctx *sim.Context, s txnState) {
	ctx.Log("producer-txn-state", sim.S("transactional-id", p.txn.id), sim.S("from", p.txn.state.String()), sim.S("to", s.String()))
	p.txn.state = s
}

// txnAdded reports whether the batches of ps may be drained now (always,
// for a producer that is not transactional): those of a partition in the
// transaction while it is open or committing; and, while it is aborting or
// in an abortable error, a batch sent before (a retry, with its sequence
// number), as Kafka's isSendToPartitionAllowed looks only at a fatal
// error and partitionsInTransaction, and abortUndrainedBatches leaves the
// batches that have a sequence to complete. NB: without this, a batch in
// flight when AbortTransaction was called and requeued for a retry after
// it stays queued for ever, and EndTxn(abort), which waits for every batch
// to be answered, is never sent: AbortTransaction never returns.
func (p *Producer) txnAdded(ps *partitionState) bool {
	t := p.txn
	if t == nil {
		return true
	}
	if p.idem.producerID < 0 || !t.added[ps.tp] {
		return false
	}
	switch t.state {
	case txnInTransaction, txnCommitting:
		return true
	case txnAborting, txnAbortableError:
		return len(ps.queue) > 0 && ps.queue[0].attempts > 0
	}
	return false
}

// txnWakeFor reports whether the ready batch of ps should wake the sender:
// not while the partition waits for AddPartitionsToTxn's answer, nor while
// the transaction cannot send (the answers the producer waits for wake it).
func (p *Producer) txnWakeFor(ps *partitionState) bool {
	t := p.txn
	if t == nil || p.txnAdded(ps) {
		return true
	}
	tp := ps.tp
	if p.idem.producerID < 0 || (t.state != txnInTransaction && t.state != txnCommitting) {
		return false
	}
	if _, found := slices.BinarySearchFunc(t.newParts, tp, cmpTP); found {
		return false
	}
	return !(t.inflight && len(t.ops) > 0 && t.ops[0].kind == opAddPartitions && slices.Contains(t.ops[0].parts, tp))
}

// txnCanSend reports whether the batches of ps may be drained now
// (txnAdded); a partition not in the transaction yet is registered for
// AddPartitionsToTxn.
func (p *Producer) txnCanSend(ps *partitionState) bool {
	if p.txnAdded(ps) {
		return true
	}
	t := p.txn
	if p.idem.producerID < 0 || (t.state != txnInTransaction && t.state != txnCommitting) || t.added[ps.tp] {
		return false
	}
	if i, found := slices.BinarySearchFunc(t.newParts, ps.tp, cmpTP); !found {
		t.newParts = slices.Insert(t.newParts, i, ps.tp)
	}
	return false
}

// txnBatchFailed is told that a batch of the transaction failed.
func (p *Producer) txnBatchFailed(ctx *sim.Context, b *batch, err error) {
	t := p.txn
	if t == nil || err == ErrTransactionAborted {
		if t != nil && b.seq >= 0 {
			t.needBump = true
		}
		return
	}
	if b.seq >= 0 {
		t.needBump = true
	}
	var ke *kerr.Error
	if errors.As(err, &ke) && (ke == kerr.ProducerFenced || ke == kerr.InvalidProducerEpoch || ke == kerr.TransactionalIDAuthorizationFailed) {
		p.txnFatal(ctx, "Send", ke)
		return
	}
	if t.state == txnInTransaction || t.state == txnCommitting {
		t.lastErr = err
		p.txnTransition(ctx, txnAbortableError)
	}
}

func (p *Producer) txnFatal(ctx *sim.Context, api string, err error) {
	t := p.txn
	t.lastErr = err
	if t.state != txnFatalError {
		p.txnTransition(ctx, txnFatalError)
	}
	ops := t.ops
	t.ops = nil
	for _, o := range ops {
		if o.cb != nil {
			o.cb(ctx, &TxnError{Op: o.api, Err: err, Fatal: true})
		}
	}
}

// txnBatchesDone reports whether every record sent has been answered.
func (p *Producer) txnBatchesDone() bool {
	if len(p.waiting) > 0 {
		return false
	}
	for _, ps := range p.partList {
		if len(ps.queue) > 0 || len(ps.inflight) > 0 {
			return false
		}
	}
	return true
}

// txnDue returns when maybeSendTxn has something to send, if it has.
func (p *Producer) txnDue() (sim.Time, bool) {
	t := p.txn
	if t == nil || t.inflight {
		return 0, false
	}
	if len(t.newParts) > 0 && (t.state == txnInTransaction || t.state == txnCommitting) && !t.hasOp(opAddPartitions) {
		return 0, true
	}
	if len(t.ops) == 0 {
		return 0, false
	}
	op := t.ops[0]
	if op.kind == opEndTxn && !p.endTxnReady() {
		return 0, false // the answers it waits for run the sender anyway
	}
	return op.retryAt, true
}

func (t *transactions) hasOp(k txnOpKind) bool {
	return slices.ContainsFunc(t.ops, func(o *txnOp) bool { return o.kind == k })
}

func (p *Producer) endTxnReady() bool {
	t := p.txn
	if t.state == txnAbortableError {
		return true // a commit fails at once
	}
	return p.txnBatchesDone() && len(t.newParts) == 0 && !t.hasOp(opAddPartitions)
}

// txnNewEpoch takes a producer id and epoch; a new one restarts every
// partition's sequence numbers at 0.
func (p *Producer) txnNewEpoch(ctx *sim.Context, pid int64, epoch int16) {
	if pid == p.idem.producerID && epoch == p.idem.epoch {
		return
	}
	p.idem.producerID, p.idem.epoch = pid, epoch
	ctx.Log("producer-init-id", sim.I("producer-id", pid), sim.I("epoch", int64(epoch)))
	for _, ps := range p.partList {
		ps.nextSeq, ps.acked, ps.firstAcked, ps.failed = 0, -1, -1, nil
	}
	p.txn.needBump = false
}

// txnCompleted ends the transaction: the producer is ready for the next.
func (p *Producer) txnCompleted(ctx *sim.Context, op *txnOp) {
	t := p.txn
	clear(t.added)
	t.newParts, t.offsets, t.lastErr = nil, false, nil
	p.txnTransition(ctx, txnReady)
	if op.cb != nil {
		op.cb(ctx, nil)
	}
}

// transactionalAttribute is bit 4 of a v2 batch's attributes (KIP-98).
const transactionalAttribute = 0x10

func txnFor(id string) *transactions {
	if id == "" {
		return nil
	}
	return newTransactions(id)
}
