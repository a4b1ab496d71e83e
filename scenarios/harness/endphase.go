package harness

// This file is a run's end phase, after the script's last step: Jepsen's
// final heal and final reads, and TigerBeetle's liveness mode.
//
//  1. Heal: the network is healed (cut links restored, lossy links made
//     perfect again), paused brokers are waited for, and every broker that
//     is down — crashed, shut down, or halted (a halted Kafka process has
//     exited: it is crashed and started again, as an operator would) — is
//     restarted. Each is a trace record ("end-phase phase=heal", "heal",
//     "crash", "start"), so the timeline shows where the script ends.
//     With 'end-phase keep-cuts' the links the script cut stay cut (with
//     keep-cuts=A,B,... those between two of the named nodes; the others
//     are healed): "end-phase phase=heal keep-cuts=..." lists them, and
//     the liveness phase and the final reads run under them. Lossy links,
//     pauses and restarts are as without it.
//  2. Liveness: every 100ms of simulated time, until all hold or
//     kafkasim.liveness.timeout.ms (default 60000) passes, the conditions
//     of checkers/liveness.go are sampled: a live leader at the current
//     epoch for every partition, every assigned replica in its ISR, every
//     broker running, an acks=all probe produce acknowledged on every
//     partition once its ISR is whole (client "checker", recorded in the
//     history like every send), and every consumer group with a running member Stable with its
//     members at the HW.
//  3. Final reads (finalread.go), unless the script says 'final-read off'.
//
// What it simplifies: __consumer_offsets is neither probed nor read, even
// when a script declares it (clients cannot produce to it; it is judged
// through its groups), though its leaders and ISRs are checked; crashed consumers are
// clients and are not restarted (a group with no running member is not
// judged); with 'controller manual' nobody elects, so a broker the end
// phase restarts is sent its partitions' last leader-and-isr step (the
// controller does that on a broker's startup), and the leader is the one
// the script last chose.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

const (
	livenessPeriod = 100 * sim.Millisecond // how often the conditions are sampled
	probeTimeout   = 10 * sim.Second       // one probe produce's request timeout
)

// CheckerClient is the client that probes in the end phase (final reads,
// liveness); its operations are in the history but are not the workload.
const CheckerClient = "checker"

// endOptions are the end phase's settings and the command that replays
// the run (the liveness verdict's evidence names it).
type endOptions struct {
	scenarios.EndOptions
	replay string
}

// endPhase heals the cluster, runs the liveness phase and the final reads.
// A run that broke before gets no end phase (its liveness is unknown).
func (r *Runner) endPhase(res *Result, o endOptions) {
	if res.Failed != "" {
		r.live = &checkers.Liveness{Skipped: "the run broke before its end phase: " + res.Failed, Replay: o.replay}
		return
	}
	fail := func(what string, err error) {
		res.Failed = "end phase (" + what + "): " + err.Error()
		if r.live == nil {
			r.live = &checkers.Liveness{Replay: o.replay}
		}
		if len(r.live.Samples) == 0 || r.live.Samples[len(r.live.Samples)-1].Time < r.live.Deadline {
			r.live.Skipped = res.Failed
		}
	}
	if err := r.finalHeal(o.EndOptions); err != nil {
		fail("heal", err)
		return
	}
	r.ObserveClientTopics() // those the store could not tell before the heal (client_topics.go)
	if err := r.liveness(o); err != nil {
		fail("liveness", err)
		return
	}
	if err := r.shareDrain(); err != nil { // share groups (share_consumer.go)
		fail("share drain", err)
		return
	}
	if o.FinalRead {
		if err := r.finalReads(); err != nil {
			fail("final reads", err)
			return
		}
	}
	// Let what the clients started finish (a consumer processing the
	// records it just polled, a probe's acknowledgement on its way).
	if err := r.Advance(r.World.Now().Add(sim.Second)); err != nil {
		fail("settle", err)
		return
	}
	// A producer's backlog flushed at the very end (records retried all
	// through a partition) may still be on its way to the followers: wait
	// for the fetch round, so the final state is not taken in its middle.
	for deadline := r.World.Now().Add(settleMax); !r.replicasCaughtUp() && r.World.Now() < deadline; {
		if err := r.Advance(r.World.Now().Add(settleStep)); err != nil {
			fail("settle", err)
			return
		}
	}
}

// settleMax bounds the wait for followers to catch up at the very end;
// settleStep is how often it looks.
const (
	settleMax  = 5 * sim.Second
	settleStep = 50 * sim.Millisecond
)

// replicasCaughtUp reports whether every running replica has the log end
// offset of its partition's leader (the running leader of the highest
// epoch).
func (r *Runner) replicasCaughtUp() bool {
	type lead struct {
		epoch int32
		leo   int64
	}
	leaders := map[storage.TopicPartition]lead{}
	for i := range r.Cluster.Brokers {
		b := r.Cluster.Broker(i)
		if b == nil || b.Halted() {
			continue
		}
		for _, p := range b.Partitions() {
			if l, ok := leaders[p.TopicPartition()]; p.Role() == server.Leader && (!ok || p.LeaderEpoch() > l.epoch) {
				leaders[p.TopicPartition()] = lead{p.LeaderEpoch(), p.LogEndOffset()}
			}
		}
	}
	for i := range r.Cluster.Brokers {
		b := r.Cluster.Broker(i)
		if b == nil || b.Halted() {
			continue
		}
		for _, p := range b.Partitions() {
			if l, ok := leaders[p.TopicPartition()]; ok && p.LogEndOffset() != l.leo {
				return false
			}
		}
	}
	return true
}

// endMark writes an "end-phase" record into the trace, from the checker
// client.
func (r *Runner) endMark(fields ...sim.Field) error {
	id, _, err := r.client(CheckerClient)
	if err != nil {
		return err
	}
	return r.World.Act(id, func(ctx *sim.Context) { ctx.Log("end-phase", fields...) })
}

// finalHeal heals the network (but the cuts o keeps), waits out pauses and
// restarts every broker that is not running.
func (r *Runner) finalHeal(o scenarios.EndOptions) error {
	if o.KeepCuts {
		if err := r.healKeeping(o.KeepCutsBetween); err != nil {
			return err
		}
	} else if err := r.healAll(); err != nil {
		return err
	}
	return r.restartAll()
}

// healAll restores every cut link (a "heal" step, when any is cut).
func (r *Runner) healAll() error {
	w := r.World
	if err := r.endMark(sim.S("phase", "heal")); err != nil {
		return err
	}
	cut := false
	for a := 0; a < w.Nodes() && !cut; a++ {
		for b := 0; b < w.Nodes(); b++ {
			if a != b && w.Cut(sim.NodeID(a), sim.NodeID(b)) {
				cut = true
				break
			}
		}
	}
	if cut {
		if err := r.Step(scenarios.Step{Op: "heal"}); err != nil {
			return err
		}
	}
	return nil
}

// healKeeping restores the cut links but those between two of between
// (every cut link, when between is empty): 'end-phase keep-cuts'. The
// brokers and controllers at an end of a kept link stay isolated in the
// observer's failures.
func (r *Runner) healKeeping(between []string) error {
	w := r.World
	var keep []sim.Cut
	var kept []string
	ends := map[sim.NodeID]bool{}
	healed := false
	for a := 0; a < w.Nodes(); a++ {
		for b := 0; b < w.Nodes(); b++ {
			from, to := sim.NodeID(a), sim.NodeID(b)
			if a == b || !w.Cut(from, to) {
				continue
			}
			if len(between) > 0 && (!slices.Contains(between, w.Name(from)) || !slices.Contains(between, w.Name(to))) {
				healed = true
				continue
			}
			keep = append(keep, sim.Cut{From: from, To: to})
			kept = append(kept, w.Name(from)+"->"+w.Name(to))
			ends[from], ends[to] = true, true
		}
	}
	desc := strings.Join(kept, ",")
	if desc == "" {
		desc = "none"
	}
	if err := r.endMark(sim.S("phase", "heal"), sim.S("keep-cuts", desc)); err != nil {
		return err
	}
	if !healed {
		return nil
	}
	if err := w.Inject(sim.Heal{Keep: keep}); err != nil {
		return err
	}
	for b, id := range r.Cluster.Brokers {
		if !ends[id] {
			r.Observer.recover(int32(b), checkers.Isolated)
		}
	}
	for i, id := range r.Cluster.Controllers {
		if !ends[id] {
			r.Observer.recover(server.FirstControllerID+int32(i), checkers.Isolated)
		}
	}
	return nil
}

// restartAll makes lossy links perfect again, waits out pauses and
// restarts every controller and broker that is not running.
func (r *Runner) restartAll() error {
	w := r.World
	for _, l := range r.lossyLinks {
		if err := w.SetLink(l[0], l[1], sim.DefaultLink); err != nil {
			return err
		}
	}
	until := w.Now()
	for _, f := range r.Observer.Facts.Failures {
		if f.Kind == checkers.Paused && f.End > until {
			until = f.End
		}
	}
	if until > w.Now() {
		if err := r.endMark(sim.S("phase", "resume"), sim.I("until", int64(until))); err != nil {
			return err
		}
		if err := r.Advance(until); err != nil {
			return err
		}
	}
	if err := r.restartControllers(); err != nil { // KRaft's dedicated controllers first
		return err
	}
	for i, id := range r.Cluster.Brokers {
		name := server.NodeName(int32(i))
		switch b := r.Cluster.Broker(i); {
		case !w.Up(id):
		case b != nil && b.Halted():
			// The halted process has exited: it is down until restarted.
			if err := w.Inject(sim.Crash{Node: id}); err != nil {
				return err
			}
			r.Observer.fail(int32(i), checkers.Crash, false)
		default:
			continue
		}
		if err := r.Step(scenarios.Step{Op: "restart", Args: []string{name}}); err != nil {
			return err
		}
		if r.s.Manual {
			for _, tp := range r.Observer.Partitions {
				if st, ok := r.manualSteps[tp]; ok {
					st.KV = withKV(st.KV, "to", name)
					if err := r.LeaderAndISR(st); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// withKV returns a copy of kv with k set to v.
func withKV(kv map[string]string, k, v string) map[string]string {
	out := make(map[string]string, len(kv)+1)
	for a, b := range kv {
		out[a] = b
	}
	out[k] = v
	return out
}

// probe is the liveness probe of one partition.
type probe struct {
	attempts int
	value    string // the probe in flight or last sent; "" before the first
	acked    bool
}

// liveness runs the liveness phase and keeps what it saw in r.live.
func (r *Runner) liveness(o endOptions) error {
	w := r.World
	l := &checkers.Liveness{Start: w.Now(), Deadline: w.Now().Add(o.LivenessTimeout), Replay: o.replay}
	r.live = l
	if err := r.endMark(sim.S("phase", "liveness"), sim.S("timeout", o.LivenessTimeout.String())); err != nil {
		return err
	}
	_, checker, err := r.client(CheckerClient)
	if err != nil {
		return err
	}
	probes := make([]probe, len(r.Observer.Partitions))
	var prev []checkers.LivenessCondition
	for first := true; ; first = false {
		now := w.Now()
		for k := range probes {
			if p := &probes[k]; p.value != "" && (checker.acked[p.value] || checker.outcomes[p.value].err == kerr.MessageTooLarge.Message) {
				// NB: MESSAGE_TOO_LARGE (a topic whose max.message.bytes is
				// below the probe's batch) comes after the leader's
				// min.insync.replicas check: the partition serves acks=all.
				p.acked = true
			}
		}
		unmet, ready := r.livenessConditions(probes)
		if first || !sameConditions(prev, unmet) || len(unmet) == 0 || now >= l.Deadline {
			l.Samples = append(l.Samples, checkers.LivenessSample{Time: now, Unmet: unmet})
		}
		prev = unmet
		if len(unmet) == 0 || now >= l.Deadline {
			outcome := "held"
			if len(unmet) > 0 {
				outcome = strconv.Itoa(len(unmet)) + " unmet"
			}
			r.unwritable(l)
			return r.endMark(sim.S("phase", "liveness-end"), sim.S("outcome", outcome))
		}
		// Probe the partitions that are whole and have no probe in flight.
		for k, tp := range r.Observer.Partitions {
			p := &probes[k]
			left := l.Deadline.Sub(now)
			if p.acked || !ready[k] || tp.Topic == coordinator.OffsetsTopic || (p.value != "" && !checker.done[p.value]) || left < livenessPeriod {
				continue
			}
			p.attempts++
			p.value = "probe-" + tp.String() + "-" + strconv.Itoa(p.attempts)
			value, topic, part := p.value, tp.Topic, tp.Partition
			id, _ := w.Lookup(CheckerClient)
			var key *string
			if tc, err := r.Cluster.TopicConfig(topic); err == nil && tc.CleanupPolicy.Compact() || err != nil && slices.Contains(r.clientTopics, topic) {
				// A compacted topic refuses records without key; a client's
				// topic may be one (its configs are the controller's).
				key = &value
			}
			if err := w.Act(id, func(ctx *sim.Context) { checker.produce(ctx, topic, part, value, key, -1, min(probeTimeout, left)) }); err != nil {
				return err
			}
		}
		if err := r.Advance(min(now.Add(livenessPeriod), l.Deadline)); err != nil {
			return err
		}
	}
}

func sameConditions(a, b []checkers.LivenessCondition) bool {
	return slices.EqualFunc(a, b, func(x, y checkers.LivenessCondition) bool {
		return x.Kind == y.Kind && x.Topic == y.Topic && x.Partition == y.Partition && x.Broker == y.Broker && x.Group == y.Group
	})
}

// livenessConditions samples the conditions now: the unmet ones, in a
// deterministic order, and which partitions have a live leader and every
// replica in the ISR (ready to be probed).
func (r *Runner) livenessConditions(probes []probe) ([]checkers.LivenessCondition, []bool) {
	w := r.World
	var unmet []checkers.LivenessCondition
	halted := func(i int) bool { b := r.Cluster.Broker(i); return b != nil && b.Halted() }
	running := func(i int) bool { return w.Up(r.Cluster.Brokers[i]) && !halted(i) }
	for i := range r.Cluster.Brokers {
		if !running(i) {
			desc := "down"
			if halted(i) {
				desc = "halted"
			}
			unmet = append(unmet, checkers.LivenessCondition{Kind: checkers.LivenessBrokerDown, Broker: int32(i), Description: desc})
		}
	}
	ready := make([]bool, len(r.Observer.Partitions))
	hws := map[storage.TopicPartition]int64{}
	for k, tp := range r.Observer.Partitions {
		if r.topicDeleted(tp) {
			continue // deletion.go: a deleted topic is owed nothing
		}
		cond := func(kind string, broker int32, desc string) checkers.LivenessCondition {
			return checkers.LivenessCondition{Kind: kind, Topic: tp.Topic, Partition: tp.Partition, Broker: broker, Description: desc}
		}
		leader, epoch, why := int32(-1), int32(-1), ""
		if r.s.Manual {
			if m, ok := r.manual[tp]; ok {
				leader, epoch = m[0], m[1]
			} else {
				why = "no leader-and-isr step elected one"
			}
		} else {
			leader, epoch, why = r.leaderOf(tp) // kraft.go: the ZooKeeper or the KRaft controller's
		}
		var p *server.Partition
		if why == "" {
			if !running(int(leader)) {
				why = "leader b" + strconv.Itoa(int(leader)) + " is not running"
			} else if q, ok := r.Cluster.Broker(int(leader)).Partition(tp); !ok || q.Role() != server.Leader || q.LeaderEpoch() != epoch {
				why = "b" + strconv.Itoa(int(leader)) + " is not leader at epoch " + strconv.Itoa(int(epoch)) + " yet"
			} else {
				p = q
			}
		}
		if p == nil {
			unmet = append(unmet, cond(checkers.LivenessNoLeader, leader, why))
		} else {
			// NB: a partition is probed only once its ISR is whole: a write
			// to a leader whose follower has not rejoined yet can hide what
			// stops it from rejoining (KAFKA-3410: a follower ahead of its
			// leader halts; one record later, it would not).
			ready[k] = true
			hws[tp] = p.HighWatermark()
			isr := p.ISR()
			for _, id := range r.Observer.Replicas[tp] {
				if !slices.Contains(isr, id) {
					desc := "leader b" + strconv.Itoa(int(leader)) + " e" + strconv.Itoa(int(epoch)) + " ISR " + brokerSet(isr)
					if halted(int(id)) {
						desc += "; b" + strconv.Itoa(int(id)) + " halted"
					}
					unmet = append(unmet, cond(checkers.LivenessNotInISR, id, desc))
					ready[k] = false
				}
			}
		}
		if pr := probes[k]; !pr.acked && tp.Topic != coordinator.OffsetsTopic {
			desc := "none sent: no leader, or its ISR is not whole"
			if pr.attempts > 0 {
				desc = strconv.Itoa(pr.attempts) + " sent, none acknowledged"
			}
			unmet = append(unmet, cond(checkers.LivenessProbeFailed, -1, desc))
		}
	}
	return append(unmet, r.groupConditions(hws)...), ready
}

func brokerSet(ids []int32) string {
	var s []string
	for _, id := range ids {
		s = append(s, strconv.Itoa(int(id)))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// groupConditions samples the consumer groups: each group with a running
// member must be Stable, every member in its generation, and every
// partition of its topic owned by a member whose position is at the HW
// (hws: the leaders' HWs; a partition without a leader is not judged here).
func (r *Runner) groupConditions(hws map[storage.TopicPartition]int64) []checkers.LivenessCondition {
	var groups []string
	members := map[string][]groupMember{}
	for _, name := range r.consumers {
		id, _ := r.World.Lookup(name)
		n, ok := r.World.Node(id).(*consumerNode)
		if !ok || !r.World.Up(id) || n.c == nil || n.c.Closed() {
			continue
		}
		g := n.s.cfg.GroupID
		if _, seen := members[g]; !seen {
			groups = append(groups, g)
		}
		members[g] = append(members[g], groupMember{name, n})
	}
	var unmet []checkers.LivenessCondition
	for _, g := range groups {
		unstable := func(desc string) {
			unmet = append(unmet, checkers.LivenessCondition{Kind: checkers.LivenessGroupUnstable, Broker: -1, Group: g, Description: desc})
		}
		b, err := r.coordinatorOf(g)
		if err != nil {
			unstable(err.Error())
			continue
		}
		if desc, is848 := consumerGroupUnstable(r.Cluster.Broker(int(b)).Coordinator(), b, g, members[g]); is848 {
			if desc != "" {
				unstable(desc)
				continue
			}
		} else {
			state, gen, _, ids, ok := r.Cluster.Broker(int(b)).Coordinator().Group(g)
			if !ok || state != coordinator.Stable {
				unstable("coordinator b" + strconv.Itoa(int(b)) + ": " + state.String() + " generation " + strconv.Itoa(int(gen)))
				continue
			}
			in := true
			for _, m := range members[g] {
				mg, mid := m.n.c.Generation()
				if mg != gen || !slices.Contains(ids, mid) {
					unstable(m.name + " is not a member of generation " + strconv.Itoa(int(gen)))
					in = false
					break
				}
			}
			if !in {
				continue
			}
		}
		for _, t := range r.s.Topics {
			for part := 0; part < t.Partitions; part++ {
				tp := storage.TopicPartition{Topic: t.Name, Partition: int32(part)}
				hw, ok := hws[tp]
				if !ok {
					continue
				}
				owner, pos := "", int64(-1)
				for _, m := range members[g] {
					if m.n.s.topic != t.Name {
						continue
					}
					ctp := client.TopicPartition{Topic: t.Name, Partition: int32(part)}
					if slices.Contains(m.n.c.Assignment(), ctp) {
						owner = m.name
						if p, ok := m.n.c.Position(ctp); ok {
							pos = p
						}
					}
				}
				desc := ""
				switch {
				case owner == "" && !r.groupReads(members[g], t.Name):
					continue // the group does not consume this topic
				case owner == "":
					desc = tp.String() + " is owned by no member"
				case pos < hw:
					desc = owner + " at " + strconv.FormatInt(pos, 10) + " on " + tp.String() + ", HW " + strconv.FormatInt(hw, 10)
				default:
					continue
				}
				unmet = append(unmet, checkers.LivenessCondition{Kind: checkers.LivenessGroupLagging, Topic: tp.Topic, Partition: tp.Partition,
					Broker: -1, Group: g, Description: desc})
			}
		}
	}
	return unmet
}

// groupMember is a running consumer of a group.
type groupMember struct {
	name string
	n    *consumerNode
}

// groupReads reports whether any member consumes topic.
func (r *Runner) groupReads(ms []groupMember, topic string) bool {
	for _, m := range ms {
		if m.n.s.topic == topic {
			return true
		}
	}
	return false
}
