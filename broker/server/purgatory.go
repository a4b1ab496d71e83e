package server

// This file is the purgatory: produce requests with acks=all wait here until
// the HW passes their records (Kafka's DelayedProduce), and fetches that
// found fewer than fetch.min.bytes wait until data arrives or
// fetch.max.wait.ms passes (DelayedFetch). Each waits on a timer; every
// append and every HW advance re-checks what waits.
//
// Simplification: Kafka keys waiters by partition; the simulation re-checks
// all of them (a handful at a time), in arrival order.

import (
	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// producePartition is one partition of a delayed produce.
type producePartition struct {
	tp       storage.TopicPartition
	required int64 // the HW that acknowledges the records: last offset + 1
	resp     *kmsg.ProduceResponseTopicPartition
	done     bool
}

type delayedProduce struct {
	from  sim.NodeID
	req   *wire.Request
	resp  *kmsg.ProduceResponse
	ans   *wire.Response // when not nil, the envelope resp is sent in
	parts []*producePartition
	timer sim.TimerID
	// onDone, when set, is called instead of answering resp: a
	// WriteTxnMarkers request waits here for its markers like a produce.
	onDone func()
}

// answer sends d's response, or hands it to onDone.
func (b *Broker) answer(d *delayedProduce) {
	if d.onDone != nil {
		d.onDone()
		return
	}
	if d.ans != nil {
		d.resp.SetVersion(d.req.Body.GetVersion())
		b.ctx.Send(d.from, b.enc.ReplyIn(d.ans, d.req, d.resp))
		return
	}
	b.respond(d.from, d.req, d.resp)
}

type delayedFetch struct {
	from  sim.NodeID
	req   *wire.Request
	body  *kmsg.FetchRequest
	ans   *fetchAnswer // the node's own until sent
	timer sim.TimerID
}

type purgatory struct {
	produces []*delayedProduce
	fetches  []delayedFetch
}

func (b *Broker) delayProduce(d *delayedProduce, timeout sim.Duration) {
	d.timer = b.ctx.SetTimer(timeout, timerDelayed)
	b.produces = append(b.produces, d)
	b.completeProduces()
}

func (b *Broker) delayFetch(from sim.NodeID, req *wire.Request, body *kmsg.FetchRequest, a *fetchAnswer, wait sim.Duration) {
	d := delayedFetch{from: from, req: req, body: body, ans: a}
	d.timer = b.ctx.SetTimer(wait, timerDelayed)
	b.fetches = append(b.fetches, d)
}

// hwIncremented is called whenever a leader's HW moves.
func (b *Broker) hwIncremented(p *Partition) {
	b.logp("hw", p, sim.I("hw", p.hw), sim.I("leo", p.LogEndOffset()))
	b.tryCompleteDelayed()
}

// tryCompleteDelayed answers every waiting request that can be answered.
func (b *Broker) tryCompleteDelayed() {
	b.completeProduces()
	b.completeFetches()
	b.completeGroupAppends()
	b.completeShareFetches()
}

// completeProduces answers the waiting produces that are decided. Only a
// HW advance or a lost leadership decides one, so appends that move no HW
// need not call it.
func (b *Broker) completeProduces() {
	kept := b.produces[:0]
	for _, d := range b.produces {
		if b.checkProduce(d) {
			b.ctx.CancelTimer(d.timer)
			b.answer(d)
		} else {
			kept = append(kept, d)
		}
	}
	clearTail(b.produces, len(kept))
	b.produces = kept
}

// completeFetches answers the waiting fetches that now have data.
func (b *Broker) completeFetches() { b.completeFetchesIf(nil) }

// completeFollowerReads answers the waiting KIP-392 consumer fetches that a
// follower's new HW lets through (ReplicaFetcherThread completes delayed
// fetches of partitions whose HW moved); the other waiting fetches are left
// to the leader's events, as before.
func (b *Broker) completeFollowerReads() {
	b.completeFetchesIf(func(d *delayedFetch) bool { return followerRead(d.body) })
}

func (b *Broker) completeFetchesIf(only func(*delayedFetch) bool) {
	keptF := b.fetches[:0]
	for i := range b.fetches {
		d := &b.fetches[i]
		if (only != nil && !only(d)) || !b.fetchMayComplete(d) {
			keptF = append(keptF, *d)
			continue
		}
		bytes, anyErr := b.readForFetch(d.ans, d.body, d.body.ReplicaID >= 0, false)
		if bytes >= int(d.body.MinBytes) || anyErr {
			b.ctx.CancelTimer(d.timer)
			b.respondFetch(d.from, d.req, d.ans)
		} else {
			keptF = append(keptF, *d)
		}
	}
	clear(b.fetches[len(keptF):])
	b.fetches = keptF
}

// fetchMayComplete is a cheap test that a delayed fetch could now be
// answered: some partition has data past its fetch offset (below the LEO
// for a follower, the HW for a consumer) or can no longer be served here.
func (b *Broker) fetchMayComplete(d *delayedFetch) bool {
	follower := d.body.ReplicaID >= 0
	for _, t := range d.body.Topics {
		for _, fp := range t.Partitions {
			p := b.partition(storage.TopicPartition{Topic: t.Topic, Partition: fp.Partition})
			if p == nil || (p.role != Leader && !(p.role == Follower && followerRead(d.body))) {
				return true
			}
			end := p.hw
			if follower {
				end = p.LogEndOffset()
			}
			if end > fp.FetchOffset {
				return true
			}
		}
	}
	return false
}

func clearTail[T any](s []*T, n int) {
	for i := n; i < len(s); i++ {
		s[i] = nil
	}
}

// checkProduce reports whether every partition of d is decided: the HW
// passed its records (NONE, or NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR
// is now below min.insync.replicas), or the replica is no longer leader.
func (b *Broker) checkProduce(d *delayedProduce) bool {
	all := true
	for _, pp := range d.parts {
		if pp.done {
			continue
		}
		p := b.partition(pp.tp)
		switch {
		case p == nil || p.role != Leader:
			pp.resp.ErrorCode = kerr.NotLeaderForPartition.Code
			pp.done = true
		case p.hw >= pp.required:
			if len(p.isr) < p.minISR && !b.cfg.Mutants.On(mutant.AcksAllBelowMinISR) {
				pp.resp.ErrorCode = kerr.NotEnoughReplicasAfterAppend.Code
			}
			pp.done = true
		default:
			all = false
		}
	}
	return all
}

// failDelayedProduce decides tp's waiting produces with err (the replica
// stopped leading).
func (b *Broker) failDelayedProduce(tp storage.TopicPartition, err *kerr.Error) {
	for _, d := range b.produces {
		for _, pp := range d.parts {
			if pp.tp == tp && !pp.done {
				pp.resp.ErrorCode = err.Code
				pp.done = true
			}
		}
	}
	b.completeProduces()
	b.offsetsLost(tp, err)
}

// expireDelayed answers the request whose timer t fired: a produce with
// REQUEST_TIMED_OUT for its undecided partitions, a fetch with what there is.
func (b *Broker) expireDelayed(t sim.TimerID) {
	for i, d := range b.produces {
		if d.timer == t {
			for _, pp := range d.parts {
				if !pp.done {
					pp.resp.ErrorCode = kerr.RequestTimedOut.Code
				}
			}
			b.produces = append(b.produces[:i], b.produces[i+1:]...)
			b.answer(d)
			return
		}
	}
	for i, d := range b.fetches {
		if d.timer == t {
			b.fetches = append(b.fetches[:i], b.fetches[i+1:]...)
			b.readForFetch(d.ans, d.body, d.body.ReplicaID >= 0, false)
			b.respondFetch(d.from, d.req, d.ans)
			return
		}
	}
}
