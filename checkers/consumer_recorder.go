// consumer_recorder.go: recording group consumers' operations.
//
// What it records: a consumer's declaration (group, delivery pattern), the
// records each poll delivered and the application processed (Consume),
// offset commits with their outcome (Commit), and the partitions
// rebalances gave and took (Assign, Revoke).

package checkers

import "github.com/kafkasim/kafkasim/sim"

// The delivery patterns a Consumer declares.
const (
	// AtLeastOnce: process, then commit (a crash between re-delivers).
	AtLeastOnce = "at-least-once"
	// AtMostOnce: commit, then process (a crash between loses).
	AtMostOnce = "at-most-once"
	// ExactlyOnce: process into an idempotent sink, then commit; the
	// sink absorbs re-deliveries, so each value takes effect once. A
	// Consume of such a consumer records the values the sink applied, not
	// every value the poll delivered.
	ExactlyOnce = "exactly-once"
)

// Consumer is the declaration of one group consumer.
type Consumer struct {
	Process string
	Group   string
	// Semantics is AtLeastOnce, AtMostOnce, ExactlyOnce or "" (not judged).
	Semantics string
	// UnfencedCommits: the consumer commits with OffsetCommit v0
	// (offsets.storage=zookeeper), which carries no generation, so the
	// coordinator cannot refuse a fenced member's stale commit.
	UnfencedCommits bool `json:",omitempty"`
	// TruncationDetection: the consumer validates its position after a
	// leader change (KIP-320, a 2.1+ client with kafkasim.truncation.
	// detection), so its deliveries carry the fetch's CurrentLeaderEpoch
	// and it rewinds after a truncation below its position (consumer.go's
	// kip320-skip).
	TruncationDetection bool `json:",omitempty"`
	// AutoOffsetReset is the consumer's auto.offset.reset ("earliest",
	// "latest", "none"; "" when not recorded).
	AutoOffsetReset string `json:",omitempty"`
	// GroupInstanceID is the consumer's group.instance.id (KIP-345), ""
	// for a dynamic member; SessionTimeout and HeartbeatInterval are its
	// session.timeout.ms and heartbeat.interval.ms. The group checker
	// judges a static member's restarts with them.
	GroupInstanceID   string       `json:",omitempty"`
	SessionTimeout    sim.Duration `json:",omitempty"`
	HeartbeatInterval sim.Duration `json:",omitempty"`
	// Crashes are when the consumer's process died, Restarts when a new
	// process under the same name started after one.
	Crashes  []sim.Time `json:",omitempty"`
	Restarts []sim.Time `json:",omitempty"`
	// GroupProtocol is the consumer's group.protocol: "consumer" (KIP-848:
	// Generation is the member epoch, which the coordinator hands out only
	// once its records are committed) or "" / "classic".
	GroupProtocol string `json:",omitempty"`
	// Pauses are when the consumer's process was stalled (a long GC
	// pause: no poll, no heartbeat), each from its start to its end.
	Pauses []ConsumerPause `json:",omitempty"`
	// GroupRestarts are when the coordinator started its group's
	// generations over: a group of the other protocol replaced an empty
	// one (KIP-848's migration; Kafka's maybeDeleteEmptyClassicGroup and
	// maybeDeleteEmptyConsumerGroup), whose epoch starts from 0 again. The
	// group checker keys generations by them.
	GroupRestarts []sim.Time `json:",omitempty"`
}

// GroupGenerationsRestarted records that group's generations started over
// at t (Consumer.GroupRestarts of each of its consumers).
func (r *Recorder) GroupGenerationsRestarted(t sim.Time, group string) {
	if r.groupRestarts == nil {
		r.groupRestarts = map[string][]sim.Time{}
	}
	r.groupRestarts[group] = append(r.groupRestarts[group], t)
}

// incarnation counts group's generation restarts up to t: generations of
// different incarnations are different generations.
func (h History) incarnation(group string, t sim.Time) int {
	for _, c := range h.Consumers {
		if c.Group == group {
			n := 0
			for _, at := range c.GroupRestarts {
				if at <= t {
					n++
				}
			}
			return n
		}
	}
	return 0
}

// ConsumerPause is one stall of a consumer's process, [From, To).
type ConsumerPause struct {
	From, To sim.Time
}

// Consumer declares a consuming client; declaring a process again
// replaces its declaration.
func (r *Recorder) Consumer(c Consumer) {
	for i := range r.consumers {
		if r.consumers[i].Process == c.Process {
			r.consumers[i] = c
			return
		}
	}
	r.consumers = append(r.consumers, c)
}

// ConsumerCrashed records that a declared consumer's process died at t.
func (r *Recorder) ConsumerCrashed(t sim.Time, process string) {
	for i := range r.consumers {
		if r.consumers[i].Process == process {
			r.consumers[i].Crashes = append(r.consumers[i].Crashes, t)
			return
		}
	}
}

// ConsumerRestarted records that a declared consumer's process started
// again at t after a crash.
func (r *Recorder) ConsumerRestarted(t sim.Time, process string) {
	for i := range r.consumers {
		if r.consumers[i].Process == process {
			r.consumers[i].Restarts = append(r.consumers[i].Restarts, t)
			return
		}
	}
}

// ConsumerPaused records that a declared consumer's process stalled from
// t until until (it sends nothing, heartbeats included, meanwhile).
func (r *Recorder) ConsumerPaused(t, until sim.Time, process string) {
	for i := range r.consumers {
		if r.consumers[i].Process == process {
			r.consumers[i].Pauses = append(r.consumers[i].Pauses, ConsumerPause{From: t, To: until})
			return
		}
	}
}

// Consume records the invocation of the delivery of one partition's
// records by a poll at position from; complete it with Consumed.
func (r *Recorder) Consume(t sim.Time, process, group, member string, generation int32, topic string, partition int32, from int64) OpID {
	return r.Invoke(Op{Process: process, Kind: Consume, Topic: topic, Partition: partition, FetchOffset: from,
		Group: group, Member: member, Generation: generation, Leader: -1, Invoke: t})
}

// Consumed completes a Consume as OK with the records processed.
func (r *Recorder) Consumed(id OpID, t sim.Time, records []Record) {
	op := r.complete(id, t, OK, "", Consume)
	op.Records = append([]Record(nil), records...)
}

// Commit records the invocation of a commit of offset; complete it with
// Committed, Fail or Info.
func (r *Recorder) Commit(t sim.Time, process, group, member string, generation int32, topic string, partition int32, offset int64) OpID {
	return r.Invoke(Op{Process: process, Kind: Commit, Topic: topic, Partition: partition, Offset: offset,
		Group: group, Member: member, Generation: generation, Leader: -1, Invoke: t})
}

// Committed completes a Commit as OK.
func (r *Recorder) Committed(id OpID, t sim.Time) { r.complete(id, t, OK, "", Commit) }

// Assign records that process got a partition at generation.
func (r *Recorder) Assign(t sim.Time, process, group, member string, generation int32, topic string, partition int32) {
	id := r.Invoke(Op{Process: process, Kind: Assign, Topic: topic, Partition: partition, Group: group, Member: member, Generation: generation, Leader: -1, Invoke: t})
	r.complete(id, t, OK, "", Assign)
}

// FetchedCommitted records that process, in group at generation, asked
// the group's committed offset of a partition at invoke (OffsetFetch) and
// got offset (-1: none) at t.
func (r *Recorder) FetchedCommitted(invoke, t sim.Time, process, group, member string, generation int32, topic string, partition int32, offset int64) {
	id := r.Invoke(Op{Process: process, Kind: FetchCommitted, Topic: topic, Partition: partition, Offset: offset, Group: group, Member: member, Generation: generation, Leader: -1, Invoke: invoke})
	r.complete(id, t, OK, "", FetchCommitted)
}

// Revoke records that process gave a partition up (reason: "revoked",
// "lost", "crashed").
func (r *Recorder) Revoke(t sim.Time, process, group, member string, generation int32, topic string, partition int32, reason string) {
	id := r.Invoke(Op{Process: process, Kind: Revoke, Topic: topic, Partition: partition, Group: group, Member: member, Generation: generation, Leader: -1, Invoke: t})
	r.complete(id, t, OK, reason, Revoke)
}
