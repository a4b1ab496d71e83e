// history.go: the client history of a simulated run, recorded Jepsen style.
//
// What it records: every client operation (a produce of one record, a fetch
// from one partition, a high-watermark read) with its invocation and
// completion virtual times and an outcome: ok, fail (certainly not applied)
// or info (unknown).
//
// What it simplifies: one operation touches one partition and, for a send,
// one record; a consumer poll over several partitions is recorded as one
// Poll per partition. A group consumer records what it delivered to its
// application (Consume), its offset commits (Commit) and the partitions a
// rebalance gave it and took away (Assign, Revoke); see consumer.go.

package checkers

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// Kind is the kind of a client operation.
type Kind uint8

// The kinds of client operations.
const (
	// Send produces one record (ProduceRequest). A read of one offset is a
	// Poll whose FetchOffset is that offset.
	Send Kind = iota + 1
	// Poll fetches from one partition at FetchOffset (FetchRequest) and
	// records what it saw in Records.
	Poll
	// ReadHW reads the partition's high watermark (ListOffsets latest).
	ReadHW
	// Consume is a consumer's poll as its application processed it: the
	// records of one partition Poll returned, FetchOffset being the
	// position before them. It completes OK once processed; one that never
	// completes (the consumer crashed first) delivered nothing.
	Consume
	// Commit commits Offset for the partition in Group (OffsetCommit).
	Commit
	// Assign: a rebalance (or a manual assign) gave the partition to the
	// process at Generation. It completes at once.
	Assign
	// Revoke: the process gave the partition up (OnRevoked, OnLost, or it
	// crashed). It completes at once.
	Revoke
	// FetchCommitted: a group consumer read the group's committed offset
	// of the partition (OffsetFetch), Offset (-1: none), to resume from it.
	// It completes OK with the answer.
	FetchCommitted
	// ShareAcquire: a share consumer's ShareFetch (KIP-932) acquired the
	// Records of one partition for its member, each with the delivery
	// count the broker gave it (share.go). Group and Member name the share
	// group and member.
	ShareAcquire
	// ShareAck: a share consumer acknowledged the Records (offsets) of one
	// partition with AckType (ShareAcknowledge, or piggybacked on a
	// ShareFetch): OK when the partition's answer had no error.
	ShareAck
	// ShareLeave: the share member closed its share session and left the
	// group, releasing what it held. It completes at once.
	ShareLeave
)

// String returns "send", "poll" or "hw".
func (k Kind) String() string {
	switch k {
	case Send:
		return "send"
	case Poll:
		return "poll"
	case ReadHW:
		return "hw"
	case Consume:
		return "consume"
	case Commit:
		return "commit"
	case Assign:
		return "assign"
	case Revoke:
		return "revoke"
	case FetchCommitted:
		return "fetch-committed"
	case ShareAcquire:
		return "share-acquire"
	case ShareAck:
		return "share-ack"
	case ShareLeave:
		return "share-leave"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Outcome is how an operation completed, as Jepsen's :type.
type Outcome uint8

// The outcomes of an operation.
const (
	// Pending: invoked, not completed yet. A finished History has none.
	Pending Outcome = iota
	// OK: the operation took effect; a Send carries its Offset.
	OK
	// Fail: the operation certainly did not take effect (for example
	// NOT_ENOUGH_REPLICAS before append, INVALID_REQUIRED_ACKS).
	Fail
	// Info: unknown whether it took effect (request timeout, connection
	// lost, NOT_ENOUGH_REPLICAS_AFTER_APPEND, acks=0, pending at the end).
	Info
)

// String returns "pending", "ok", "fail" or "info".
func (o Outcome) String() string {
	switch o {
	case Pending:
		return "pending"
	case OK:
		return "ok"
	case Fail:
		return "fail"
	case Info:
		return "info"
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}

// Record is one (offset, value) pair a poll saw.
type Record struct {
	Offset int64
	Value  string
	// LeaderEpoch is the partition leader epoch of the record's batch as
	// the consumer fetched it (0 when not recorded; scripted reads do not).
	LeaderEpoch int32 `json:",omitempty"`
	// HighWatermark is the high watermark of the fetch response that
	// carried the record, and LastStableOffset its last stable offset,
	// recorded for a read_committed consumer only: a consumer's fetch
	// returns records below the HW (read_committed: below the LSO), so
	// the record's offset must be below them (fetchbound.go). 0 means not
	// recorded. NB: a record never sits below a bound of 0, so a response
	// carrying records with an HW of 0 goes unjudged.
	HighWatermark    int64 `json:",omitempty"`
	LastStableOffset int64 `json:",omitempty"`
	// CurrentLeaderEpoch is the leader epoch the consumer's Fetch carried
	// (KIP-320), from a consumer with truncation detection; 0 otherwise.
	CurrentLeaderEpoch int32 `json:",omitempty"`
	// DeliveryCount is the delivery count a ShareFetch gave the record
	// (KIP-932's AcquiredRecords.DeliveryCount); 0 outside share groups.
	DeliveryCount int16 `json:",omitempty"`
}

// Op is one client operation of a history.
type Op struct {
	// Index is the operation's position in History.Ops (set by Recorder).
	Index int
	// Process names the client: a producer or consumer id such as "p1".
	Process string
	Kind    Kind
	// Topic and Partition name the topic-partition the operation touches.
	Topic     string
	Partition int32
	// Key is the record key of a Send (may be empty).
	Key string
	// Value is the value of a Send. Values are unique in a run, so every
	// record can be traced to the operation that sent it.
	Value string
	// Acks is the producer's acks setting for a Send: 0, 1 or -1 (all).
	Acks int16
	// Leader is the broker the Send was sent to (the leader the producer
	// believed in), or -1 if unknown. acked-loss uses it for acks=1.
	Leader int32
	// Invoke and Complete are the virtual times of the invocation and the
	// completion (Complete is meaningless while Pending).
	Invoke, Complete sim.Time
	Outcome          Outcome
	// Offset is the offset an OK Send was acknowledged at.
	Offset int64
	// Error is the Kafka error name of a Fail or Info outcome
	// ("NOT_ENOUGH_REPLICAS", "REQUEST_TIMED_OUT", ...), or a short reason
	// when there is no Kafka error ("connection lost").
	Error string
	// ProducerID, ProducerEpoch and Sequence identify the record of an
	// idempotent producer (KIP-98); zero when the producer is not idempotent.
	ProducerID    int64
	ProducerEpoch int16
	Sequence      int32
	// FetchOffset is the offset a Poll fetched from.
	FetchOffset int64
	// Records are the (offset, value) pairs a Poll saw, in offset order.
	Records []Record
	// HighWatermark is the value a ReadHW returned.
	HighWatermark int64
	// Group, Generation and Member are a group consumer's group, the
	// generation it was in and its member id (Consume, Commit, Assign,
	// Revoke); Generation is -1 outside group management.
	Group      string
	Generation int32
	Member     string
	// AckType is a ShareAck's acknowledge type (AckAccept, AckRelease,
	// AckReject: Kafka's AcknowledgeType 1, 2, 3); 0 otherwise.
	AckType int8 `json:",omitempty"`
}

// TopicPartition returns the operation's partition as "topic-0".
func (o Op) TopicPartition() string { return tpString(o.Topic, o.Partition) }

// String renders the operation on one line, e.g.
// "#3 p1 send t-0 m2 acks=-1 [1ms,4ms] ok offset=1".
func (o Op) String() string {
	var b strings.Builder
	b.WriteString("#" + strconv.Itoa(o.Index) + " " + o.Process + " " + o.Kind.String() + " " + o.TopicPartition())
	switch o.Kind {
	case Send:
		b.WriteString(" " + o.Value + " acks=" + strconv.Itoa(int(o.Acks)))
	case Poll, Consume:
		b.WriteString(" from=" + strconv.FormatInt(o.FetchOffset, 10))
	case ShareAcquire, ShareAck, ShareLeave:
		b.WriteString(" " + o.Group + " member=" + o.Member)
		if o.Kind == ShareAck {
			b.WriteString(" " + AckTypeName(o.AckType))
		}
	case Commit, FetchCommitted:
		b.WriteString(" " + o.Group + " offset=" + strconv.FormatInt(o.Offset, 10) + " gen=" + strconv.Itoa(int(o.Generation)))
	case Assign, Revoke:
		b.WriteString(" " + o.Group + " gen=" + strconv.Itoa(int(o.Generation)))
	}
	b.WriteString(" [" + o.Invoke.String() + "," + o.Complete.String() + "] " + o.Outcome.String())
	switch {
	case o.Outcome == OK && o.Kind == Send:
		b.WriteString(" offset=" + strconv.FormatInt(o.Offset, 10))
	case o.Outcome == OK && (o.Kind == Poll || o.Kind == Consume || o.Kind == ShareAcquire):
		b.WriteString(" [")
		for i, r := range o.Records {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatInt(r.Offset, 10) + ":" + r.Value)
			if o.Kind == ShareAcquire {
				b.WriteString("#" + strconv.Itoa(int(r.DeliveryCount)))
			}
		}
		b.WriteByte(']')
	case o.Outcome == OK && o.Kind == ReadHW:
		b.WriteString(" hw=" + strconv.FormatInt(o.HighWatermark, 10))
	}
	if o.Error != "" {
		b.WriteString(" " + o.Error)
	}
	return b.String()
}

// Producer is the configuration of one producing client that the
// duplicates and ordering checkers need, as the producer really has it
// (after Kafka's implicit adjustments, e.g. idempotence turned off by
// acks=1 left at its default).
type Producer struct {
	// Process is the client's name, as Op.Process.
	Process string
	// Acks is acks as the producer's property reads: "all", "1" or "0";
	// "" when the client has none (each send names its own acks).
	Acks string `json:",omitempty"`
	// Idempotent is enable.idempotence.
	Idempotent bool
	// MaxInFlight is max.in.flight.requests.per.connection (Kafka's default
	// is 5).
	MaxInFlight int
	// Retries is retries (0 disables them).
	Retries int
	// Independent marks a client that is no Kafka producer: the scripted
	// client of the KIP traces, which sends each record on its own (its own
	// metadata lookup and request, one attempt, no order kept between
	// records). Its records may land in any order; it never writes one
	// twice. MaxInFlight and Retries are then meaningless.
	Independent bool `json:",omitempty"`
}

// Properties renders p as the producer properties that decide ordering and
// duplicates, in Kafka's names: "acks=all
// max.in.flight.requests.per.connection=5 retries=2147483647
// enable.idempotence=true" (acks left out when the client has none).
func (p Producer) Properties() string {
	if p.Independent {
		return "a scripted client: one attempt per record, records sent independently"
	}
	var b strings.Builder
	if p.Acks != "" {
		b.WriteString("acks=" + p.Acks + " ")
	}
	b.WriteString("max.in.flight.requests.per.connection=" + strconv.Itoa(p.MaxInFlight) +
		" retries=" + strconv.Itoa(p.Retries) + " enable.idempotence=" + strconv.FormatBool(p.Idempotent))
	return b.String()
}

// History is what the clients of a run recorded, in invocation order.
type History struct {
	Ops []Op
	// Producers lists the producing clients' configurations; a Send whose
	// Process is not listed is judged as if its producer promised ordering
	// and no duplicates (the strict reading).
	Producers []Producer
	// Consumers lists the group consumers and their delivery patterns.
	Consumers []Consumer
	// ShareGroups lists the share groups (KIP-932) the share checker
	// judges, and ShareLoads the share-partition states recovered from
	// __share_group_state during the run (share_history.go).
	ShareGroups []ShareGroup `json:",omitempty"`
	ShareLoads  []ShareLoad  `json:",omitempty"`
}

// Producer returns the configuration of the named producer, and false if
// the history does not list it.
func (h History) Producer(process string) (Producer, bool) {
	for _, p := range h.Producers {
		if p.Process == process {
			return p, true
		}
	}
	return Producer{}, false
}

// Len returns the number of operations.
func (h History) Len() int { return len(h.Ops) }

// tp identifies a topic-partition inside the checkers.
type tp struct {
	topic     string
	partition int32
}

func (k tp) String() string { return tpString(k.topic, k.partition) }

func (k tp) less(o tp) bool {
	if k.topic != o.topic {
		return k.topic < o.topic
	}
	return k.partition < o.partition
}

func tpString(topic string, partition int32) string {
	return topic + "-" + strconv.Itoa(int(partition))
}

// sortedTPs returns the keys of a map keyed by tp in topic, partition order,
// so map order never reaches an output.
func sortedTPs[V any](m map[tp]V) []tp {
	keys := make([]tp, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	return keys
}
