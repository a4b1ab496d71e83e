package cluster

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// retryTxn calls req on broker `to` until its error is not retriable
// (CONCURRENT_TRANSACTIONS, COORDINATOR_LOAD_IN_PROGRESS, ...).
func (a *apiCluster) retryTxn(to int, req kmsg.Request, code func(kmsg.Response) int16) kmsg.Response {
	a.t.Helper()
	for range 50 {
		r := a.call(to, req)
		if !retriable(code(r)) {
			return r
		}
		a.run(200 * sim.Millisecond)
	}
	a.t.Fatalf("%s v%d: still retriable after 50 tries", kmsg.NameForKey(req.Key()), req.GetVersion())
	return nil
}

// A transaction at every advertised version of its APIs, each at the
// version of its range nearest v: InitProducerId, AddPartitionsToTxn (v4
// the batched form), a transactional Produce, AddOffsetsToTxn,
// TxnOffsetCommit, EndTxn; the committed offset is then visible to a
// require_stable OffsetFetch.
func TestTransactionAPIsEveryVersion(t *testing.T) {
	for _, ibp := range []string{"3.9", "4.0"} {
		t.Run(ibp, func(t *testing.T) { testTransactionAPIsEveryVersion(t, ibp) })
	}
}

func testTransactionAPIsEveryVersion(t *testing.T, ibp string) {
	a := newAPICluster(t, map[string]string{"kafkasim.transactions": "true", "offsets.topic.num.partitions": "3",
		"transaction.state.log.num.partitions": "3", "inter.broker.protocol.version": ibp}, func(s *Spec) { s.OffsetsTopic = true })
	a.waitLeaders("__transaction_state", 3)
	a.waitLeaders("__consumer_offsets", 3)
	keys := []int16{22, 24, 25, 26, 28, 0}
	rng := map[int16][2]int16{}
	top := int16(0)
	for _, k := range keys {
		lo, hi := a.versions(k)
		rng[k] = [2]int16{lo, hi}
		if k != 0 {
			top = max(top, hi)
		}
	}
	at := func(k, v int16) int16 { return clamp(v, rng[k][0], rng[k][1]) }
	next := int64(0)
	for v := int16(0); v <= top; v++ {
		id, group := fmt.Sprintf("tx-v%d", v), fmt.Sprintf("txg-v%d", v)
		coord := a.findCoordinator(id, 1, 3)

		ip := kmsg.NewPtrInitProducerIDRequest()
		ip.Version, ip.TransactionalID, ip.TransactionTimeoutMillis = at(22, v), &id, 60000
		ir := a.retryTxn(coord, ip, func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }).(*kmsg.InitProducerIDResponse)
		if ir.ErrorCode != 0 || ir.ProducerID < 0 || ir.ProducerEpoch < 0 {
			t.Fatalf("InitProducerId v%d: %s %d/%d", ip.Version, errName(ir.ErrorCode), ir.ProducerID, ir.ProducerEpoch)
		}
		pid, epoch := ir.ProducerID, ir.ProducerEpoch

		ap := kmsg.NewPtrAddPartitionsToTxnRequest()
		ap.Version = at(24, v)
		var apCode func(kmsg.Response) int16
		if ap.Version >= 4 {
			ap.Transactions = []kmsg.AddPartitionsToTxnRequestTransaction{{TransactionalID: id, ProducerID: pid, ProducerEpoch: epoch,
				Topics: []kmsg.AddPartitionsToTxnRequestTransactionTopic{{Topic: "t", Partitions: []int32{0}}}}}
			apCode = func(r kmsg.Response) int16 {
				rr := r.(*kmsg.AddPartitionsToTxnResponse)
				if rr.ErrorCode != 0 || len(rr.Transactions) != 1 {
					return rr.ErrorCode
				}
				return rr.Transactions[0].Topics[0].Partitions[0].ErrorCode
			}
		} else {
			ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = id, pid, epoch
			ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0}}}
			apCode = func(r kmsg.Response) int16 {
				return r.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
			}
		}
		if c := apCode(a.retryTxn(coord, ap, apCode)); c != 0 {
			t.Fatalf("AddPartitionsToTxn v%d: %s", ap.Version, errName(c))
		}

		b := storage.NewBatch(0, []storage.Record{{Value: []byte(id)}})
		b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, 0
		b.Attributes |= storage.TransactionalFlagMask
		pr := kmsg.NewPtrProduceRequest()
		pr.Version, pr.Acks, pr.TimeoutMillis, pr.TransactionID = at(0, v), -1, 10000, &id
		pr.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: b.AppendTo(nil)}}}}
		if p := a.call(a.leader("t", 0), pr).(*kmsg.ProduceResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 || p.BaseOffset < next {
			t.Fatalf("transactional Produce v%d: %s at %d", pr.Version, errName(p.ErrorCode), p.BaseOffset)
		} else {
			next = p.BaseOffset + 1
		}

		ao := kmsg.NewPtrAddOffsetsToTxnRequest()
		ao.Version, ao.TransactionalID, ao.ProducerID, ao.ProducerEpoch, ao.Group = at(25, v), id, pid, epoch, group
		if r := a.retryTxn(coord, ao, func(r kmsg.Response) int16 { return r.(*kmsg.AddOffsetsToTxnResponse).ErrorCode }).(*kmsg.AddOffsetsToTxnResponse); r.ErrorCode != 0 {
			t.Fatalf("AddOffsetsToTxn v%d: %s", ao.Version, errName(r.ErrorCode))
		}

		gc := a.findCoordinator(group, 0, 2)
		tc := kmsg.NewPtrTxnOffsetCommitRequest()
		tc.Version, tc.TransactionalID, tc.Group, tc.ProducerID, tc.ProducerEpoch = at(28, v), id, group, pid, epoch
		tc.Generation, tc.MemberID = -1, ""
		tc.Topics = []kmsg.TxnOffsetCommitRequestTopic{{Topic: "t", Partitions: []kmsg.TxnOffsetCommitRequestTopicPartition{{Partition: 0, Offset: 3, LeaderEpoch: -1}}}}
		tcCode := func(r kmsg.Response) int16 {
			return r.(*kmsg.TxnOffsetCommitResponse).Topics[0].Partitions[0].ErrorCode
		}
		if c := tcCode(a.retryTxn(gc, tc, tcCode)); c != 0 {
			t.Fatalf("TxnOffsetCommit v%d: %s", tc.Version, errName(c))
		}

		et := kmsg.NewPtrEndTxnRequest()
		et.Version, et.TransactionalID, et.ProducerID, et.ProducerEpoch, et.Commit = at(26, v), id, pid, epoch, true
		if r := a.retryTxn(coord, et, func(r kmsg.Response) int16 { return r.(*kmsg.EndTxnResponse).ErrorCode }).(*kmsg.EndTxnResponse); r.ErrorCode != 0 {
			t.Fatalf("EndTxn v%d: %s", et.Version, errName(r.ErrorCode))
		}
		// The markers land; the offset becomes stable.
		var off int64 = -9
		for range 50 {
			of := kmsg.NewPtrOffsetFetchRequest()
			of.Version, of.Group, of.RequireStable = 7, group, true
			of.Topics = []kmsg.OffsetFetchRequestTopic{{Topic: "t", Partitions: []int32{0}}}
			p := a.call(gc, of).(*kmsg.OffsetFetchResponse).Topics[0].Partitions[0]
			if p.ErrorCode == 0 {
				off = p.Offset
				break
			}
			if p.ErrorCode != kerr.UnstableOffsetCommit.Code {
				t.Fatalf("OffsetFetch after EndTxn v%d: %s", et.Version, errName(p.ErrorCode))
			}
			a.run(100 * sim.Millisecond)
		}
		if off != 3 {
			t.Fatalf("txn v%d: committed offset %d, want 3", v, off)
		}
		// A fenced epoch after a new InitProducerId.
		ir2 := a.retryTxn(coord, ip, func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }).(*kmsg.InitProducerIDResponse)
		if ir2.ErrorCode != 0 || ir2.ProducerEpoch <= epoch {
			t.Fatalf("InitProducerId v%d again: %s epoch %d", ip.Version, errName(ir2.ErrorCode), ir2.ProducerEpoch)
		}
		if r := a.call(coord, ao).(*kmsg.AddOffsetsToTxnResponse); r.ErrorCode != kerr.ProducerFenced.Code && r.ErrorCode != kerr.InvalidProducerEpoch.Code {
			t.Fatalf("AddOffsetsToTxn v%d with the old epoch: %s", ao.Version, errName(r.ErrorCode))
		}
	}
}

// InitProducerId without a transactional id at every version: an
// idempotent producer id with epoch 0, from any broker.
func TestInitProducerIDIdempotentEveryVersion(t *testing.T) {
	a := newAPICluster(t, nil, nil)
	lo, hi := a.versions(22)
	seen := map[int64]bool{}
	for v := lo; v <= hi; v++ {
		req := kmsg.NewPtrInitProducerIDRequest()
		req.Version, req.TransactionTimeoutMillis = v, -1
		r := a.call(int(v)%3, req).(*kmsg.InitProducerIDResponse)
		if r.ErrorCode != 0 || r.ProducerID < 0 || r.ProducerEpoch != 0 || seen[r.ProducerID] {
			t.Fatalf("InitProducerId v%d: %s %d/%d", v, errName(r.ErrorCode), r.ProducerID, r.ProducerEpoch)
		}
		seen[r.ProducerID] = true
		if v >= 3 {
			req.ProducerID, req.ProducerEpoch = 5, -1
			if r := a.call(0, req).(*kmsg.InitProducerIDResponse); r.ErrorCode != kerr.InvalidRequest.Code {
				t.Fatalf("InitProducerId v%d, an id without an epoch: %s", v, errName(r.ErrorCode))
			}
			req.ProducerID, req.ProducerEpoch = r.ProducerID, 0 // an idempotent producer's epoch bump (KIP-360): a new id
			if r2 := a.call(0, req).(*kmsg.InitProducerIDResponse); r2.ErrorCode != 0 || r2.ProducerID == r.ProducerID || r2.ProducerEpoch != 0 {
				t.Fatalf("InitProducerId v%d with the current id: %s %d/%d", v, errName(r2.ErrorCode), r2.ProducerID, r2.ProducerEpoch)
			}
		}
	}
}

// OffsetForLeaderEpoch at every version, as a consumer validating its
// position (KIP-320): the end offset of epoch 0; v2+ fences on the
// current leader epoch.
func TestOffsetForLeaderEpochEveryVersion(t *testing.T) {
	a := newAPICluster(t, nil, nil)
	a.produce("t", 0, 7, "a", "b", "c")
	l := a.leader("t", 0)
	lo, hi := a.versions(23)
	for v := lo; v <= hi; v++ {
		for _, current := range []int32{0, 5} {
			if current != 0 && v < 2 {
				continue
			}
			req := kmsg.NewPtrOffsetForLeaderEpochRequest()
			req.Version, req.ReplicaID = v, -1
			p := kmsg.NewOffsetForLeaderEpochRequestTopicPartition()
			p.Partition, p.LeaderEpoch, p.CurrentLeaderEpoch = 0, 0, current
			req.Topics = []kmsg.OffsetForLeaderEpochRequestTopic{{Topic: "t", Partitions: []kmsg.OffsetForLeaderEpochRequestTopicPartition{p}}}
			rp := a.call(l, req).(*kmsg.OffsetForLeaderEpochResponse).Topics[0].Partitions[0]
			switch {
			case current == 5 && rp.ErrorCode != kerr.UnknownLeaderEpoch.Code:
				t.Fatalf("v%d with a future current epoch: %s", v, errName(rp.ErrorCode))
			case current == 0 && (rp.ErrorCode != 0 || rp.EndOffset != 3 || v >= 1 && rp.LeaderEpoch != 0):
				t.Fatalf("v%d: %s end %d epoch %d", v, errName(rp.ErrorCode), rp.EndOffset, rp.LeaderEpoch)
			}
		}
	}
}
