package client

// This file is the transactional producer's sender side
// (TransactionManager's handlers): it builds the next transactional
// request, finds the coordinator it goes to, and applies the answers,
// sorting errors into retried, abortable and fatal as transactions.go's
// header states.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// maybeSendTxn sends the next transactional request, if one is due.
func (p *Producer) maybeSendTxn(ctx *sim.Context) {
	t := p.txn
	if t == nil || t.inflight {
		return
	}
	if len(t.newParts) > 0 && (t.state == txnInTransaction || t.state == txnCommitting) && !t.hasOp(opAddPartitions) {
		t.ops = slices.Insert(t.ops, 0, &txnOp{kind: opAddPartitions, api: "Send"})
	}
	if len(t.ops) == 0 {
		return
	}
	op := t.ops[0]
	now := ctx.Now()
	if op.retryAt > now {
		return
	}
	if op.kind == opEndTxn {
		if !p.endTxnReady() {
			return
		}
		if op.commit && t.state == txnAbortableError {
			t.ops = t.ops[1:]
			if op.cb != nil {
				op.cb(ctx, &TxnError{Op: op.api, Err: t.lastErr})
			}
			return
		}
		if len(t.added) == 0 && !t.offsets {
			t.ops = t.ops[1:]
			p.txnCompleted(ctx, op) // nothing reached the coordinator: no EndTxn
			return
		}
	}
	coord := t.coordinator
	if op.kind == opTxnOffsetCommit {
		coord = -1
		if c, ok := t.groupCoords[op.group.GroupID]; ok {
			coord = c
		}
	}
	if coord < 0 {
		p.sendFindCoordinator(ctx, op)
		return
	}
	var body kmsg.Request
	tv2 := p.TransactionVersion >= 2
	pid, epoch := p.idem.producerID, p.idem.epoch
	switch op.kind {
	case opInitProducerID:
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version, req.TransactionalID = 4, &t.id
		req.TransactionTimeoutMillis = int32(p.cfg.TransactionTimeout.Milliseconds())
		req.ProducerID, req.ProducerEpoch = -1, -1
		if op.bump {
			req.ProducerID, req.ProducerEpoch = pid, epoch
		}
		body = req
	case opAddPartitions:
		op.parts = slices.Clone(t.newParts)
		req := kmsg.NewPtrAddPartitionsToTxnRequest()
		if tv2 {
			req.Version = 5
			tx := kmsg.AddPartitionsToTxnRequestTransaction{TransactionalID: t.id, ProducerID: pid, ProducerEpoch: epoch}
			for _, tp := range op.parts {
				if n := len(tx.Topics); n == 0 || tx.Topics[n-1].Topic != tp.Topic {
					tx.Topics = append(tx.Topics, kmsg.AddPartitionsToTxnRequestTransactionTopic{Topic: tp.Topic})
				}
				tx.Topics[len(tx.Topics)-1].Partitions = append(tx.Topics[len(tx.Topics)-1].Partitions, tp.Partition)
			}
			req.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{tx}
		} else {
			req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch = 3, t.id, pid, epoch
			for _, tp := range op.parts {
				if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != tp.Topic {
					req.Topics = append(req.Topics, kmsg.AddPartitionsToTxnRequestTopic{Topic: tp.Topic})
				}
				req.Topics[len(req.Topics)-1].Partitions = append(req.Topics[len(req.Topics)-1].Partitions, tp.Partition)
			}
		}
		body = req
	case opAddOffsets:
		req := kmsg.NewPtrAddOffsetsToTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Group = 3, t.id, pid, epoch, op.group.GroupID
		if tv2 {
			req.Version = 4
		}
		body = req
	case opTxnOffsetCommit:
		req := kmsg.NewPtrTxnOffsetCommitRequest()
		req.Version, req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = 3, t.id, op.group.GroupID, pid, epoch
		req.Generation, req.MemberID = op.group.Generation, op.group.MemberID
		for _, o := range op.offsets {
			if n := len(req.Topics); n == 0 || req.Topics[n-1].Topic != o.Topic {
				req.Topics = append(req.Topics, kmsg.TxnOffsetCommitRequestTopic{Topic: o.Topic})
			}
			md := o.Metadata
			tt := &req.Topics[len(req.Topics)-1]
			tt.Partitions = append(tt.Partitions, kmsg.TxnOffsetCommitRequestTopicPartition{Partition: o.Partition, Offset: o.Offset, LeaderEpoch: o.LeaderEpoch, Metadata: &md})
		}
		body = req
	case opEndTxn:
		req := kmsg.NewPtrEndTxnRequest()
		req.Version, req.TransactionalID, req.ProducerID, req.ProducerEpoch, req.Commit = 3, t.id, pid, epoch, op.commit
		if tv2 {
			req.Version = 5
		}
		body = req
	}
	t.inflight = true
	p.call(ctx, coord, body, &request{kind: reqTxn, op: op})
	ctx.Log("producer-txn-send", sim.S("transactional-id", t.id), sim.S("api", kmsg.NameForKey(body.Key())), sim.I("broker", int64(coord)),
		sim.I("producer-id", pid), sim.I("epoch", int64(epoch)))
}

func (p *Producer) sendFindCoordinator(ctx *sim.Context, op *txnOp) {
	req := kmsg.NewPtrFindCoordinatorRequest()
	req.Version, req.CoordinatorKey, req.CoordinatorType = 3, p.txn.id, 1
	if op.kind == opTxnOffsetCommit {
		req.CoordinatorKey, req.CoordinatorType = op.group.GroupID, 0
	}
	p.txn.inflight = true
	p.call(ctx, p.metadataBroker(), req, &request{kind: reqTxn, op: &txnOp{kind: opFindCoordinator, find: op}})
}

// handleTxnResponse applies the answer to a transactional request; body is
// nil when the request failed (timed out, connection lost).
func (p *Producer) handleTxnResponse(ctx *sim.Context, r *request, body kmsg.Response) {
	t := p.txn
	t.inflight = false
	op := r.op
	now := ctx.Now()
	retry := func(target *txnOp, rediscover bool) {
		target.retryAt = now.Add(p.cfg.RetryBackoff)
		if rediscover {
			if target.kind == opTxnOffsetCommit {
				delete(t.groupCoords, target.group.GroupID)
			} else {
				t.coordinator = -1
			}
		}
	}
	if body == nil {
		if op.kind == opFindCoordinator {
			p.meta.cursor++
			retry(op.find, false)
		} else {
			retry(op, true)
		}
		return
	}
	if op.kind == opFindCoordinator {
		resp, _ := body.(*kmsg.FindCoordinatorResponse)
		if resp == nil || resp.ErrorCode != 0 {
			p.meta.cursor++
			retry(op.find, false)
			return
		}
		if op.find.kind == opTxnOffsetCommit {
			t.groupCoords[op.find.group.GroupID] = resp.NodeID
		} else {
			t.coordinator = resp.NodeID
		}
		return
	}
	if len(t.ops) == 0 || t.ops[0] != op {
		return // dropped meanwhile (a fatal error)
	}
	var code int16
	switch resp := body.(type) {
	case *kmsg.InitProducerIDResponse:
		code = resp.ErrorCode
		if code == 0 {
			t.ops = t.ops[1:]
			p.txnNewEpoch(ctx, resp.ProducerID, resp.ProducerEpoch)
			if op.bump {
				p.txnCompleted(ctx, op)
				return
			}
			p.txnTransition(ctx, txnReady)
			if op.cb != nil {
				op.cb(ctx, nil)
			}
			return
		}
	case *kmsg.AddPartitionsToTxnResponse:
		code = addPartitionsCode(resp)
		if code == 0 {
			t.ops = t.ops[1:]
			for _, tp := range op.parts {
				t.added[tp] = true
			}
			t.newParts = slices.DeleteFunc(t.newParts, func(tp storage.TopicPartition) bool { return t.added[tp] })
			ctx.Log("producer-txn-added", sim.S("transactional-id", t.id), sim.I("partitions", int64(len(op.parts))))
			return
		}
	case *kmsg.AddOffsetsToTxnResponse:
		code = resp.ErrorCode
		if code == 0 {
			t.offsets = true
			t.ops[0] = &txnOp{kind: opTxnOffsetCommit, api: op.api, group: op.group, offsets: op.offsets, cb: op.cb}
			return
		}
	case *kmsg.TxnOffsetCommitResponse:
		for _, tt := range resp.Topics {
			for _, pp := range tt.Partitions {
				if pp.ErrorCode != 0 && code == 0 {
					code = pp.ErrorCode
				}
			}
		}
		if code == 0 {
			t.ops = t.ops[1:]
			if op.cb != nil {
				op.cb(ctx, nil)
			}
			return
		}
		switch kerr.TypedErrorForCode(code) {
		case kerr.UnknownMemberID, kerr.IllegalGeneration, kerr.FencedInstanceID, kerr.GroupAuthorizationFailed:
			t.ops = t.ops[1:]
			t.lastErr = kerr.TypedErrorForCode(code)
			p.txnTransition(ctx, txnAbortableError)
			if op.cb != nil {
				op.cb(ctx, &TxnError{Op: op.api, Err: t.lastErr})
			}
			return
		}
	case *kmsg.EndTxnResponse:
		code = resp.ErrorCode
		if code == 0 {
			t.ops = t.ops[1:]
			if resp.Version >= 5 && resp.ProducerID >= 0 {
				p.txnNewEpoch(ctx, resp.ProducerID, resp.ProducerEpoch)
			}
			if !op.commit && t.needBump && p.TransactionVersion < 2 {
				// KIP-360: restart the sequences of the failed partitions
				// with a new epoch before the next transaction.
				t.ops = slices.Insert(t.ops, 0, &txnOp{kind: opInitProducerID, api: op.api, bump: true, cb: op.cb})
				return
			}
			p.txnCompleted(ctx, op)
			return
		}
	default:
		retry(op, true) // not the answer asked for: a broken connection
		return
	}
	err := kerr.TypedErrorForCode(code)
	switch err {
	case kerr.CoordinatorNotAvailable, kerr.NotCoordinator:
		retry(op, true)
	case kerr.CoordinatorLoadInProgress, kerr.ConcurrentTransactions, kerr.UnknownTopicOrPartition:
		retry(op, false)
	default:
		ctx.Log("producer-txn-error", sim.S("transactional-id", t.id), sim.S("api", kmsg.NameForKey(body.Key())), sim.S("error", err.Error()))
		p.txnFatal(ctx, op.api, err)
	}
}

// addPartitionsCode returns the first error of an AddPartitionsToTxn answer.
func addPartitionsCode(resp *kmsg.AddPartitionsToTxnResponse) int16 {
	if resp.ErrorCode != 0 {
		return resp.ErrorCode
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if p.ErrorCode != 0 {
				return p.ErrorCode
			}
		}
	}
	for _, tx := range resp.Transactions {
		for _, t := range tx.Topics {
			for _, p := range t.Partitions {
				if p.ErrorCode != 0 {
					return p.ErrorCode
				}
			}
		}
	}
	return 0
}
