// partition.go: the porcupine model of a Kafka partition's committed log.
//
// What it checks: that a history of produce, fetch and high-watermark reads
// on one partition could have come from a single, append-only, committed
// sequence of values, each operation taking effect at one instant between its
// invocation and its completion (linearizability). The model is partitioned
// per topic-partition: a history is linearizable iff each partition's is.
//
// What it simplifies:
//   - The state is the committed log only (offsets below the true high
//     watermark). An append takes effect when its record becomes committed;
//     under acks=all that is before the acknowledgement, under acks=1 it may be
//     after (the caller then gives the operation an infinite completion time).
//   - An append with an unknown outcome (Output.Unknown) may take effect at any
//     time after its invocation, or never: the caller gives it an infinite
//     completion time, so porcupine may place it after every other operation,
//     where it constrains nothing (Jepsen's :info, porcupine's convention).
//   - A read only checks the records it returned: each (offset, value) must be
//     committed. An empty read is always legal, and reads are not required to
//     be contiguous (that is a consumer property, not a log property).
//   - A high-watermark read must return exactly the committed length. NB: a
//     newly elected Kafka leader may report a stale HW for a while (reference
//     §4.1), which this model calls a violation.
//   - One record per append: a producer retry that writes a value twice is not
//     linearizable (the duplicates checker says whether Kafka permits it).

package model

import (
	"sort"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Key names one topic-partition, the unit the model partitions on.
type Key struct {
	Topic     string
	Partition int32
}

// String renders the key as Kafka tools do: "topic-0".
func (k Key) String() string { return k.Topic + "-" + itoa(int64(k.Partition)) }

// Less orders keys by topic, then partition.
func (k Key) Less(o Key) bool {
	if k.Topic != o.Topic {
		return k.Topic < o.Topic
	}
	return k.Partition < o.Partition
}

// OpKind is the kind of an operation on a partition.
type OpKind uint8

// The operations of the partition-log model.
const (
	// Append produces one value; its output is the offset or Unknown.
	Append OpKind = iota
	// Read fetches from Input.Offset; its output is the records returned.
	Read
	// HighWatermark reads the partition's high watermark (ListOffsets latest).
	HighWatermark
)

// String returns the operation's name in DescribeOperation.
func (k OpKind) String() string {
	switch k {
	case Append:
		return "append"
	case Read:
		return "read"
	case HighWatermark:
		return "hw"
	case Truncate:
		return "truncate"
	}
	return "op(" + itoa(int64(k)) + ")"
}

// Input is the input of one operation, as porcupine.Operation.Input.
type Input struct {
	Key  Key
	Kind OpKind
	// Value is the appended value (Append only). Values are unique in a run.
	Value string
	// Offset is the fetch offset (Read only).
	Offset int64
	// Excused are the values a Truncate may remove (contract model only);
	// Value then names the fact that permits it.
	Excused map[string]bool
}

// Record is one (offset, value) pair a read returned.
type Record struct {
	Offset int64
	Value  string
}

// Output is the output of one operation, as porcupine.Operation.Output.
type Output struct {
	// Unknown marks an append whose outcome the client does not know
	// (timeout, lost connection, NOT_ENOUGH_REPLICAS_AFTER_APPEND, acks=0).
	Unknown bool
	// Offset is the offset an append was acknowledged at.
	Offset int64
	// Records are the records a read returned.
	Records []Record
	// HighWatermark is the value an HW read returned.
	HighWatermark int64
	// Unobserved narrows an Unknown append whose value no operation of the
	// history names (the checker knows this): if it takes effect, it lands at
	// an offset in Gaps (sorted offsets below Tail that no operation names)
	// or at or after Tail, and the log stores it as Hidden, since no
	// operation can tell which unobserved value sits there. This keeps
	// porcupine's search from trying every unobserved append at every offset.
	Unobserved bool
	Gaps       []int64
	Tail       int64
	// Copies (contract model only; ContractStep) is how many offsets just
	// below Offset may hold earlier copies of an acknowledged append's
	// value that no operation observed: the earlier attempts of a producer
	// that retries without idempotence, each of which may have written the
	// record. The checker sets it only where such a copy can matter (an
	// offset whose every observer may come after a loss fact that excuses
	// the send); 0 means none.
	Copies int64
}

// Hidden is the value the model stores for an Unobserved append.
const Hidden = "<unobserved>"

// Step is the model's pure transition: it reports whether the operation
// (in, out) is legal in state log and returns the next state. It never
// mutates log.
//
//   - Append, Unknown: always legal; the value is appended at log.Len().
//   - Append, Unobserved: legal iff log.Len() is in Gaps or >= Tail; Hidden
//     is appended.
//   - Append at Offset o: legal iff o == log.Len(); the value is appended.
//   - Read: legal iff every returned record is committed with that value.
//   - HighWatermark h: legal iff h == log.Len().
func Step(log Log, in Input, out Output) (bool, Log) {
	switch in.Kind {
	case Append:
		switch {
		case out.Unobserved:
			n := log.Len()
			if n < out.Tail {
				i := sort.Search(len(out.Gaps), func(i int) bool { return out.Gaps[i] >= n })
				if i == len(out.Gaps) || out.Gaps[i] != n {
					return false, log
				}
			}
			return true, log.Append(Hidden)
		case !out.Unknown && out.Offset != log.Len():
			return false, log
		}
		return true, log.Append(in.Value)
	case Read:
		return log.holds(out.Records), log
	case HighWatermark:
		return out.HighWatermark == log.Len(), log
	}
	return false, log
}

// Model returns the porcupine model of partition logs: state Log, inputs
// Input, outputs Output, partitioned per Key. Operation.Metadata, when set,
// should be a string (shown as is) or an int (a history index, shown "#n").
func Model() porcupine.Model {
	return porcupine.Model{
		Partition: Partition,
		Init:      func() any { return Log{} },
		Step: func(state, input, output any) (bool, any) {
			return Step(state.(Log), input.(Input), output.(Output))
		},
		Equal:                     func(a, b any) bool { return a.(Log).Equal(b.(Log)) },
		Hash:                      func(s any) uint64 { return s.(Log).Hash() },
		DescribeOperation:         func(in, out any) string { return DescribeOperation(in.(Input), out.(Output)) },
		DescribeState:             func(s any) string { return DescribeState(s.(Log)) },
		DescribeOperationMetadata: describeMetadata,
	}
}

// Partition splits a history into one sub-history per Key, in Key order
// (topic, then partition), keeping each sub-history in the input order. The
// order is deterministic so verdicts can name the failing partition.
func Partition(history []porcupine.Operation) [][]porcupine.Operation {
	keys := PartitionKeys(history)
	index := make(map[Key]int, len(keys))
	for i, k := range keys {
		index[k] = i
	}
	out := make([][]porcupine.Operation, len(keys))
	for _, op := range history {
		i := index[op.Input.(Input).Key]
		out[i] = append(out[i], op)
	}
	return out
}

// PartitionKeys returns the distinct keys of a history in Key order: the
// i-th key names the i-th sub-history of Partition.
func PartitionKeys(history []porcupine.Operation) []Key {
	seen := make(map[Key]bool)
	var keys []Key
	for _, op := range history {
		k := op.Input.(Input).Key
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].Less(keys[j]) })
	return keys
}

// DescribeOperation renders an operation for porcupine's visualization and
// for checker evidence: "append(m2) -> 1", "append(m3) -> ?",
// "read(1) -> [1:m2 2:m3]", "hw() -> 2"; a read of more than 8 records
// shows its first and last 3 and the count.
func DescribeOperation(in Input, out Output) string {
	var b strings.Builder
	switch in.Kind {
	case Append:
		b.WriteString("append(" + in.Value + ") -> ")
		if out.Unknown {
			b.WriteString("?")
		} else {
			b.WriteString(itoa(out.Offset))
		}
	case Read:
		b.WriteString("read(" + itoa(in.Offset) + ") -> [")
		recs := out.Records
		for i, r := range recs {
			if len(recs) > 8 && i == 3 {
				b.WriteString(" …") // a final read returns the whole log: its first and last 3
				continue
			}
			if len(recs) > 8 && i > 3 && i < len(recs)-3 {
				continue
			}
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(itoa(r.Offset) + ":" + r.Value)
		}
		b.WriteByte(']')
		if len(recs) > 8 {
			b.WriteString(" (" + itoa(int64(len(recs))) + " records)")
		}
	case HighWatermark:
		b.WriteString("hw() -> " + itoa(out.HighWatermark))
	case Truncate:
		b.WriteString("truncate(" + in.Value + ")")
	default:
		b.WriteString(in.Kind.String())
	}
	return b.String()
}

// DescribeState renders a state for porcupine's visualization: the
// committed values, as Log.String.
func DescribeState(l Log) string { return l.String() }

// describeMetadata renders Operation.Metadata: strings as they are, ints
// as "#n" (a history index), anything else as nothing.
func describeMetadata(m any) string {
	switch m := m.(type) {
	case string:
		return m
	case int:
		return "#" + itoa(int64(m))
	}
	return ""
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
