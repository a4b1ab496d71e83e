package txn

// This file serves the transaction APIs, as Kafka's TransactionCoordinator:
//
//   - InitProducerId v0-v5 with a transactional.id (KIP-98; v3+ carries the
//     producer's id and epoch to recover after an abortable error, KIP-360;
//     v4+ answers PRODUCER_FENCED where older versions get
//     INVALID_PRODUCER_EPOCH, KIP-588). A new id gets a producer id and
//     epoch 0; a known one an epoch bump, or a new producer id when the
//     epoch is exhausted; an ongoing transaction is fenced and aborted
//     first, and the caller told CONCURRENT_TRANSACTIONS until it is done.
//   - AddPartitionsToTxn v0-v3 (one transaction) and v4-v5 (a batch;
//     VerifyOnly entries check, without writing, that the partitions are in
//     the transaction: KIP-890 part 1). PRODUCER_FENCED from v2.
//   - AddOffsetsToTxn v0-v4: adds the group's __consumer_offsets partition.
//   - EndTxn v0-v5: writes PrepareCommit or PrepareAbort, answers, sends
//     the markers and writes CompleteCommit or CompleteAbort. With
//     transaction version 2 (EndTxn v5+, KIP-890 part 2) the epoch is
//     bumped by every end and returned; a retry of an end that succeeded
//     (the previous epoch) is answered with success.
//
// The client transaction version of a request is 2 when the coordinator's
// transaction.version is 2 and the request is new enough (EndTxn v5+,
// AddPartitionsToTxn v5+, AddOffsetsToTxn v4+), else 1.
//
// Simplifications: no ACLs (TRANSACTIONAL_ID_AUTHORIZATION_FAILED is never
// returned), no topic-existence check on AddPartitionsToTxn; a fence whose
// PrepareAbort write fails is not remembered (Kafka's hasFailedEpochFence):
// the in-memory epoch bump is simply not applied, and the next attempt
// bumps from the same epoch.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fenced returns PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH for request
// versions older than since (KIP-588).
func fenced(err *kerr.Error, version, since int16) *kerr.Error {
	if err == kerr.ProducerFenced && version < since {
		return kerr.InvalidProducerEpoch
	}
	return err
}

func (c *Coordinator) tv(version, since int16) int16 {
	if c.cfg.Version >= 2 && version >= since {
		return 2
	}
	return 1
}

// InitProducerID serves InitProducerId for a transactional id (a request
// without one is the host's: an idempotent producer needs no coordinator).
func (c *Coordinator) InitProducerID(now sim.Time, req *kmsg.InitProducerIDRequest, reply func(*kmsg.InitProducerIDResponse)) {
	answer := func(pid int64, epoch int16, err *kerr.Error) {
		resp := kmsg.NewPtrInitProducerIDResponse()
		resp.Version, resp.ProducerID, resp.ProducerEpoch = req.Version, pid, epoch
		if err != nil {
			resp.ProducerID, resp.ProducerEpoch = -1, -1
			resp.ErrorCode = fenced(err, req.Version, 4).Code
		}
		reply(resp)
	}
	fail := func(err *kerr.Error) { answer(-1, -1, err) }
	if req.TransactionalID == nil || *req.TransactionalID == "" {
		fail(kerr.InvalidRequest)
		return
	}
	id, timeout := *req.TransactionalID, req.TransactionTimeoutMillis
	if timeout <= 0 || int64(timeout) > c.cfg.MaxTimeout.Milliseconds() {
		fail(kerr.InvalidTransactionTimeout)
		return
	}
	if err := c.check(id); err != nil {
		fail(err)
		return
	}
	expPID, expEpoch := NoProducerID, NoProducerEpoch
	if req.Version >= 3 {
		expPID, expEpoch = req.ProducerID, req.ProducerEpoch
	}
	if e := c.txns[id]; e != nil {
		c.initExisting(now, e, timeout, expPID, expEpoch, answer)
		return
	}
	if c.producing[id] {
		fail(kerr.ConcurrentTransactions)
		return
	}
	c.producing[id] = true
	p := c.PartitionFor(id)
	gen := c.owned[p].gen
	c.env.NewProducerID(func(pid int64, err *kerr.Error) {
		delete(c.producing, id)
		if err != nil {
			fail(err)
			return
		}
		if o := c.owned[p]; o == nil || o.gen != gen {
			fail(kerr.NotCoordinator)
			return
		}
		e := c.txns[id]
		if e == nil {
			e = &entry{partition: p, m: &Metadata{TransactionalID: id, ProducerID: pid, LastProducerID: NoProducerID,
				NextProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, LastProducerEpoch: NoProducerEpoch,
				TxnTimeoutMs: timeout, State: Empty, TxnStartTimestamp: -1, TxnLastUpdateTimestamp: nowMs(now),
				ClientTransactionVersion: 0}}
			c.txns[id] = e
		}
		c.initExisting(now, e, timeout, expPID, expEpoch, answer)
	})
}

func (c *Coordinator) initExisting(now sim.Time, e *entry, timeout int32, expPID int64, expEpoch int16, answer func(int64, int16, *kerr.Error)) {
	m := e.m
	if e.pending != nil {
		answer(-1, -1, kerr.ConcurrentTransactions)
		return
	}
	// isValidProducerId: a just-created id, the current producer id, or the
	// previous one at an exhausted epoch (a retry of the rotation).
	if expPID != NoProducerID && !(m.ProducerEpoch == NoProducerEpoch || expPID == m.ProducerID ||
		(expPID == m.LastProducerID && epochExhausted(expEpoch))) {
		answer(-1, -1, kerr.ProducerFenced)
		return
	}
	written := func(next *Metadata) {
		c.write(now, e, next, func(_ sim.Time, err *kerr.Error) {
			if err != nil {
				answer(-1, -1, err)
				return
			}
			answer(next.ProducerID, next.ProducerEpoch, nil)
		})
	}
	switch m.State {
	case PrepareCommit, PrepareAbort:
		answer(-1, -1, kerr.ConcurrentTransactions)
	case Empty, CompleteCommit, CompleteAbort:
		if !epochExhausted(m.ProducerEpoch) || (expPID != NoProducerID && expEpoch != m.ProducerEpoch) {
			next, err := m.prepareIncrementEpoch(timeout, expEpoch, nowMs(now))
			if err != nil {
				if err == errEpochOverflow {
					c.env.Log("txn-epoch-exhausted", sim.S("txn", m.String()), sim.I("expected-epoch", int64(expEpoch)))
				}
				answer(-1, -1, err)
				return
			}
			if next.ProducerEpoch == m.ProducerEpoch && next.LastProducerEpoch == m.LastProducerEpoch && next.TxnTimeoutMs == m.TxnTimeoutMs {
				answer(m.ProducerID, m.ProducerEpoch, nil) // a retry: nothing to write
				return
			}
			written(next)
			return
		}
		gen := c.owned[e.partition].gen
		e.pending = m // hold the id while a new producer id is allocated
		c.env.NewProducerID(func(pid int64, err *kerr.Error) {
			if o := c.owned[e.partition]; o == nil || o.gen != gen || c.txns[m.TransactionalID] != e {
				answer(-1, -1, kerr.NotCoordinator)
				return
			}
			e.pending = nil
			if err != nil {
				answer(-1, -1, err)
				return
			}
			c.env.Log("txn-producer-id-rotated", sim.S("txn", m.TransactionalID), sim.I("from", m.ProducerID), sim.I("to", pid))
			written(m.prepareRotation(pid, timeout, nowMs(now), expPID != NoProducerID))
		})
	case Ongoing:
		c.fenceAndAbort(now, e, func(_ sim.Time, err *kerr.Error) {
			if err == nil {
				err = kerr.ConcurrentTransactions // retry once the abort is complete
			}
			answer(-1, -1, err)
		})
	default:
		panic(fmt.Sprintf("txn: InitProducerId for %s in state %s", m.TransactionalID, m.State))
	}
}

// fenceAndAbort aborts e's ongoing transaction on the coordinator's own
// initiative (a new producer's InitProducerId, or the transaction timeout),
// as Kafka's prepareFenceProducerEpoch then endTransaction(isFromClient
// false) with the server's transaction version: the epoch is bumped in
// memory (PrepareEpochFence, never written) and PrepareAbort is written
// with it, so the markers fence the old producer. With transaction
// version 2 Kafka 4.0.0 let PrepareAbort bump it once more (KAFKA-19367,
// Config.FenceBumpsEpochTwice: the old producer's abort is then no retry,
// it is fenced too); from 4.0.1 the fence's bump is the abort's
// (PR #19910), so the old producer's EndTxn(abort) at its epoch is a retry
// of a completed abort. The abort never rotates the producer id, even at
// an exhausted epoch (endTransaction's !isEpochFence): the producer's next
// InitProducerId does.
//
// It returns false when Kafka refuses the fence with an exception (see
// metadata.go): at Short.MAX_VALUE the fence itself, and on 4.0.0 with
// transaction version 2 at MAX_VALUE-1 the abort's second bump. done then
// gets UNKNOWN_SERVER_ERROR; nothing is written and the transaction stays
// Ongoing. NB: in the second case Kafka has already put the fenced epoch
// (MAX_VALUE) into the cached metadata and cleared its pending state when
// prepareAbortOrCommit throws, so it is kept here too: the ongoing
// producer is fenced in memory, and every later fence is refused at
// MAX_VALUE until a coordinator reloads the log.
func (c *Coordinator) fenceAndAbort(now sim.Time, e *entry, done func(sim.Time, *kerr.Error)) bool {
	m := e.m
	f, err := m.prepareFence()
	if err != nil {
		c.env.Log("txn-fence-refused", sim.S("txn", m.String()), sim.S("reason", "cannot fence producer with epoch equal to Short.MaxValue"))
		done(now, err)
		return false
	}
	from := f
	if c.cfg.Version >= 2 && !c.cfg.FenceBumpsEpochTwice {
		// 4.0.1 and later: the abort's bump is the fence's (from the
		// ongoing metadata, which the fence refused at Short.MAX_VALUE).
		from = m
	}
	next, err := from.prepareEnd(PrepareAbort, c.cfg.Version, NoProducerID, nowMs(now))
	if err != nil {
		kept := m.clone()
		kept.ProducerEpoch, kept.LastProducerEpoch = f.ProducerEpoch, f.LastProducerEpoch
		e.m = kept
		c.env.Log("txn-fence-refused", sim.S("txn", kept.String()), sim.S("reason", "illegal new producer epoch: the abort's bump overflows"))
		done(now, err)
		return false
	}
	c.env.Log("txn-fence", sim.S("txn", m.String()), sim.I("epoch", int64(next.ProducerEpoch)))
	c.write(now, e, next, func(now sim.Time, err *kerr.Error) {
		if err == nil {
			c.sendMarkers(e)
		}
		done(now, err)
	})
	return true
}

// txnFor returns the entry of (id, pid, epoch) or the error Kafka answers.
func (c *Coordinator) txnFor(id string, pid int64, epoch int16) (*entry, *kerr.Error) {
	if id == "" {
		return nil, kerr.InvalidRequest
	}
	if err := c.check(id); err != nil {
		return nil, err
	}
	e := c.txns[id]
	switch {
	case e == nil || e.m.ProducerID != pid:
		return nil, kerr.InvalidProducerIDMapping
	case e.m.ProducerEpoch != epoch:
		return nil, kerr.ProducerFenced
	}
	return e, nil
}

// addPartitions adds tps to id's transaction and calls done with the outcome.
func (c *Coordinator) addPartitions(now sim.Time, id string, pid int64, epoch int16, tps []storage.TopicPartition, tv int16, done func(*kerr.Error)) {
	e, err := c.txnFor(id, pid, epoch)
	switch {
	case err != nil:
		done(err)
	case e.pending != nil || e.m.State.preparing():
		done(kerr.ConcurrentTransactions)
	case e.m.State == Ongoing && e.m.hasPartitions(tps):
		done(nil)
	case e.m.State == Dead || e.m.State == PrepareEpochFence:
		panic(fmt.Sprintf("txn: AddPartitionsToTxn for %s in state %s", id, e.m.State))
	default:
		c.write(now, e, e.m.prepareAddPartitions(tps, nowMs(now), tv), func(_ sim.Time, err *kerr.Error) { done(err) })
	}
}

// VerifyPartitions is the check of KIP-890 part 1 (AddPartitionsToTxn v4+
// VerifyOnly, Kafka's handleVerifyPartitionsInTransaction): for each of
// tps, nil if it is in id's transaction with producer (pid, epoch), else
// TRANSACTION_ABORTABLE (or INVALID_PRODUCER_ID_MAPPING, PRODUCER_FENCED,
// CONCURRENT_TRANSACTIONS while markers are written, NOT_COORDINATOR,
// COORDINATOR_LOAD_IN_PROGRESS for all). Pending writes are not checked,
// as in Kafka: partitions join the metadata only once their write is
// committed. It writes nothing.
func (c *Coordinator) VerifyPartitions(id string, pid int64, epoch int16, tps []storage.TopicPartition) []*kerr.Error {
	out := make([]*kerr.Error, len(tps))
	e, err := c.txnFor(id, pid, epoch)
	if err == nil && e.m.State.preparing() {
		err = kerr.ConcurrentTransactions
	}
	for i, tp := range tps {
		switch {
		case err != nil:
			out[i] = err
		case !e.m.hasPartitions([]storage.TopicPartition{tp}):
			out[i] = kerr.TransactionAbortable
		}
	}
	return out
}

// AddPartitionsToTxn serves AddPartitionsToTxn.
func (c *Coordinator) AddPartitionsToTxn(now sim.Time, req *kmsg.AddPartitionsToTxnRequest, reply func(*kmsg.AddPartitionsToTxnResponse)) {
	resp := kmsg.NewPtrAddPartitionsToTxnResponse()
	resp.Version = req.Version
	if req.Version <= 3 {
		var tps []storage.TopicPartition
		for _, t := range req.Topics {
			for _, p := range t.Partitions {
				tps = append(tps, storage.TopicPartition{Topic: t.Topic, Partition: p})
			}
		}
		c.addPartitions(now, req.TransactionalID, req.ProducerID, req.ProducerEpoch, tps, 1, func(err *kerr.Error) {
			code := fenced(err, req.Version, 2)
			for _, t := range req.Topics {
				rt := kmsg.AddPartitionsToTxnResponseTopic{Topic: t.Topic}
				for _, p := range t.Partitions {
					rt.Partitions = append(rt.Partitions, kmsg.AddPartitionsToTxnResponseTopicPartition{Partition: p, ErrorCode: errCode(code)})
				}
				resp.Topics = append(resp.Topics, rt)
			}
			reply(resp)
		})
		return
	}
	resp.Transactions = make([]kmsg.AddPartitionsToTxnResponseTransaction, len(req.Transactions))
	left := len(req.Transactions)
	finish := func() {
		if left--; left == 0 {
			reply(resp)
		}
	}
	left++ // held until every entry is started, so a synchronous answer cannot reply early
	for i := range req.Transactions {
		t := &req.Transactions[i]
		var tps []storage.TopicPartition
		for _, tt := range t.Topics {
			for _, p := range tt.Partitions {
				tps = append(tps, storage.TopicPartition{Topic: tt.Topic, Partition: p})
			}
		}
		fill := func(errs []*kerr.Error) {
			rt := kmsg.AddPartitionsToTxnResponseTransaction{TransactionalID: t.TransactionalID}
			k := 0
			for _, tt := range t.Topics {
				top := kmsg.AddPartitionsToTxnResponseTransactionTopic{Topic: tt.Topic}
				for _, p := range tt.Partitions {
					top.Partitions = append(top.Partitions, kmsg.AddPartitionsToTxnResponseTransactionTopicPartition{Partition: p, ErrorCode: errCode(errs[k])})
					k++
				}
				rt.Topics = append(rt.Topics, top)
			}
			resp.Transactions[i] = rt
			finish()
		}
		if t.VerifyOnly {
			fill(c.VerifyPartitions(t.TransactionalID, t.ProducerID, t.ProducerEpoch, tps))
			continue
		}
		c.addPartitions(now, t.TransactionalID, t.ProducerID, t.ProducerEpoch, tps, c.tv(req.Version, 5), func(err *kerr.Error) {
			errs := make([]*kerr.Error, len(tps))
			for k := range errs {
				errs[k] = err
			}
			fill(errs)
		})
	}
	finish()
}

// AddOffsetsToTxn serves AddOffsetsToTxn: the group's __consumer_offsets
// partition joins the transaction, so that its markers complete the
// offsets the producer then commits with TxnOffsetCommit.
func (c *Coordinator) AddOffsetsToTxn(now sim.Time, req *kmsg.AddOffsetsToTxnRequest, reply func(*kmsg.AddOffsetsToTxnResponse)) {
	resp := kmsg.NewPtrAddOffsetsToTxnResponse()
	resp.Version = req.Version
	if req.Group == "" {
		resp.ErrorCode = kerr.InvalidGroupID.Code
		reply(resp)
		return
	}
	tp := storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: int32(coordinator.CoordinatorPartition(req.Group, c.cfg.OffsetsPartitions))}
	c.addPartitions(now, req.TransactionalID, req.ProducerID, req.ProducerEpoch, []storage.TopicPartition{tp}, c.tv(req.Version, 4), func(err *kerr.Error) {
		resp.ErrorCode = errCode(fenced(err, req.Version, 2))
		reply(resp)
	})
}

// EndTxn serves EndTxn.
func (c *Coordinator) EndTxn(now sim.Time, req *kmsg.EndTxnRequest, reply func(*kmsg.EndTxnResponse)) {
	answer := func(pid int64, epoch int16, err *kerr.Error) {
		resp := kmsg.NewPtrEndTxnResponse()
		resp.Version, resp.ProducerID, resp.ProducerEpoch = req.Version, pid, epoch
		if err != nil {
			resp.ProducerID, resp.ProducerEpoch = -1, -1
			resp.ErrorCode = fenced(err, req.Version, 2).Code
		}
		reply(resp)
	}
	id, pid, epoch, tv := req.TransactionalID, req.ProducerID, req.ProducerEpoch, c.tv(req.Version, 5)
	if id == "" {
		answer(-1, -1, kerr.InvalidRequest)
		return
	}
	if err := c.check(id); err != nil {
		answer(-1, -1, err)
		return
	}
	e := c.txns[id]
	if e == nil {
		answer(-1, -1, kerr.InvalidProducerIDMapping)
		return
	}
	m := e.m
	retryOnBump := tv >= 2 && int(m.ProducerEpoch) == int(epoch)+1
	retryOnOverflow := tv >= 2 && m.LastProducerID == pid && epoch == maxEpoch-1 && m.ProducerEpoch == 0
	retry := retryOnBump || retryOnOverflow
	validEpoch := m.ProducerEpoch == epoch
	if tv >= 2 {
		// With version 2 the same epoch is the next end, not a retry: each
		// state admits its own epochs (Kafka's isValidEpoch).
		switch m.State {
		case PrepareCommit, PrepareAbort:
			validEpoch = retryOnBump
		case CompleteCommit, CompleteAbort:
			validEpoch = retry || m.ProducerEpoch == epoch
		}
	}
	switch {
	case m.ProducerID != pid && !retryOnOverflow:
		answer(-1, -1, kerr.InvalidProducerIDMapping)
		return
	case !validEpoch:
		answer(-1, -1, kerr.ProducerFenced)
		return
	case e.pending != nil:
		answer(-1, -1, kerr.ConcurrentTransactions)
		return
	}
	state, want := m.State, PrepareAbort
	if req.Commit {
		want = PrepareCommit
	}
	ok := func() { answer(m.ProducerID, m.ProducerEpoch, nil) }
	switch {
	case state == Ongoing:
		c.end(now, e, want, tv, answer)
	case state == CompleteCommit && req.Commit, state == CompleteAbort && !req.Commit:
		if tv < 2 || retry {
			ok()
		} else if !req.Commit {
			c.end(now, e, PrepareAbort, tv, answer) // v2: abort with no partition added
		} else {
			answer(-1, -1, kerr.InvalidTxnState)
		}
	case (state == CompleteCommit || state == Empty) && !req.Commit && tv >= 2 && !retry:
		c.end(now, e, PrepareAbort, tv, answer)
	case state == PrepareCommit && req.Commit, state == PrepareAbort && !req.Commit:
		answer(-1, -1, kerr.ConcurrentTransactions)
	case state == Dead || state == PrepareEpochFence:
		panic(fmt.Sprintf("txn: EndTxn for %s in state %s", id, state))
	default:
		answer(-1, -1, kerr.InvalidTxnState)
	}
}

// end writes the Prepare* of a client's EndTxn, answers, and sends the
// markers. With transaction version 2 an exhausted epoch first gets the
// producer id the transaction completes to.
func (c *Coordinator) end(now sim.Time, e *entry, s State, tv int16, answer func(int64, int16, *kerr.Error)) {
	m := e.m
	prepare := func(nextPID int64) {
		next, err := m.prepareEnd(s, tv, nextPID, nowMs(now))
		if err != nil {
			c.env.Log("txn-end-refused", sim.S("txn", m.String()), sim.S("reason", "illegal new producer epoch: the bump overflows"))
			answer(-1, -1, err)
			return
		}
		c.write(now, e, next, func(now sim.Time, err *kerr.Error) {
			if err != nil {
				answer(-1, -1, err)
				return
			}
			if next.NextProducerID != NoProducerID {
				answer(next.NextProducerID, 0, nil)
			} else {
				answer(next.ProducerID, next.ProducerEpoch, nil)
			}
			c.sendMarkers(e)
		})
	}
	if tv < 2 || !epochExhausted(m.ProducerEpoch) {
		prepare(NoProducerID)
		return
	}
	gen := c.owned[e.partition].gen
	e.pending = m
	c.env.NewProducerID(func(pid int64, err *kerr.Error) {
		if o := c.owned[e.partition]; o == nil || o.gen != gen || c.txns[m.TransactionalID] != e {
			answer(-1, -1, kerr.NotCoordinator)
			return
		}
		e.pending = nil
		if err != nil {
			answer(-1, -1, err)
			return
		}
		prepare(pid)
	})
}

func errCode(err *kerr.Error) int16 {
	if err == nil {
		return 0
	}
	return err.Code
}
