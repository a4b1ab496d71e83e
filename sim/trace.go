package sim

import (
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
)

// Field is one key/value of a trace record. Values are strings or integers
// so that hashing a record needs no formatting and no allocation.
type Field struct {
	Key   string
	Str   string
	Int   int64
	IsInt bool
}

// I returns an integer field.
func I(key string, v int64) Field { return Field{Key: key, Int: v, IsInt: true} }

// S returns a string field.
func S(key, v string) Field { return Field{Key: key, Str: v} }

// String renders f as key=value.
func (f Field) String() string {
	if f.IsInt {
		return f.Key + "=" + strconv.FormatInt(f.Int, 10)
	}
	return f.Key + "=" + f.Str
}

// Record is one entry of the trace: something the world did (deliver,
// drop, timer, fault) or a transition a node logged.
type Record struct {
	Event  uint64 // number of the event during which it was written
	Time   Time
	Node   NodeID // -1 for the world itself
	Name   string // the node's name, "world" for the world
	Kind   string
	Fields []Field
}

// String renders r as one timeline line.
func (r Record) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%12s %6d %-8s %-10s", r.Time, r.Event, r.Name, r.Kind)
	for _, f := range r.Fields {
		b.WriteByte(' ')
		b.WriteString(f.String())
	}
	return b.String()
}

// Get returns the value of the field named key, as a string.
func (r Record) Get(key string) (string, bool) {
	for _, f := range r.Fields {
		if f.Key == key {
			if f.IsInt {
				return strconv.FormatInt(f.Int, 10), true
			}
			return f.Str, true
		}
	}
	return "", false
}

// Trace is the running record of a world. The hash covers every record,
// kept or not, so two runs can be compared at the cost of a few multiplies
// per record even with recording off.
type Trace struct {
	keep  bool
	kinds map[string]bool // kept even when keep is off (a copy: never changes)
	// hot says, for the kernel's own kinds (send, recv, timer), whether
	// they are kept: read once, as a map lookup per record cost more than
	// hashing it (trace_hot.go).
	hot     [3]bool
	hash    uint64
	count   uint64
	records []Record
}

const hashSeed = 0xcbf29ce484222325

func mix(h, v uint64) uint64 {
	h ^= v
	h *= 0x9e3779b97f4a7c15 // odd, so each step is a bijection
	return h ^ h>>29
}

// mixString mixes s's length, then each of its whole 8-byte words read
// big-endian, then the last partial word (its bytes big-endian in the low
// end; 0 when none). The whole words are read with one load each (the
// compiler combines the eight byte loads): this runs for every field of
// every trace record, and byte at a time it was a sixth of a cluster run's
// instructions.
func mixString(h uint64, s string) uint64 {
	h = mix(h, uint64(len(s)))
	for len(s) >= 8 {
		_ = s[7]
		h = mix(h, uint64(s[0])<<56|uint64(s[1])<<48|uint64(s[2])<<40|uint64(s[3])<<32|
			uint64(s[4])<<24|uint64(s[5])<<16|uint64(s[6])<<8|uint64(s[7]))
		s = s[8:]
	}
	// The tail, at most 7 bytes (most keys and names are shorter than 8),
	// in at most three steps.
	var w uint64
	if len(s) >= 4 {
		w = uint64(s[0])<<24 | uint64(s[1])<<16 | uint64(s[2])<<8 | uint64(s[3])
		s = s[4:]
	}
	if len(s) >= 2 {
		w = w<<16 | uint64(s[0])<<8 | uint64(s[1])
		s = s[2:]
	}
	if len(s) == 1 {
		w = w<<8 | uint64(s[0])
	}
	return mix(h, w)
}

// setKeep sets what is kept: every record, or those of kinds.
func (t *Trace) setKeep(all bool, kinds map[string]bool) {
	t.keep, t.kinds = all, maps.Clone(kinds)
	for i, k := range hotKinds {
		t.hot[i] = t.keeps(k)
	}
}

// keeps reports whether records of kind are kept (every record is hashed;
// only these are kept).
func (t *Trace) keeps(kind string) bool { return t.keep || (t.kinds != nil && t.kinds[kind]) }

// head mixes what every record starts with.
func (t *Trace) head(event uint64, now Time, node NodeID) uint64 {
	return mix(mix(mix(t.hash, event), uint64(now)), uint64(node))
}

func (t *Trace) add(event uint64, now Time, node NodeID, name, kind string, fields []Field) {
	t.hash = mixFields(mixString(t.head(event, now, node), kind), fields)
	t.count++
	if t.keeps(kind) {
		t.records = append(t.records, Record{Event: event, Time: now, Node: node, Name: name, Kind: kind, Fields: append([]Field(nil), fields...)})
	}
}

// addFirst is add with first before fields, without building that slice.
func (t *Trace) addFirst(event uint64, now Time, node NodeID, name, kind string, first Field, fields []Field) {
	t.hash = mixFields(mixField(mixString(t.head(event, now, node), kind), &first), fields)
	t.count++
	if t.keeps(kind) {
		t.records = append(t.records, Record{Event: event, Time: now, Node: node, Name: name, Kind: kind, Fields: append([]Field{first}, fields...)})
	}
}

func mixField(h uint64, f *Field) uint64 {
	h = mixString(h, f.Key)
	if f.IsInt {
		return mix(h, uint64(f.Int))
	}
	return mixString(h, f.Str)
}

func mixFields(h uint64, fields []Field) uint64 {
	for i := range fields {
		h = mixField(h, &fields[i])
	}
	return h
}

// Hash returns the running 64-bit hash of every record so far.
func (t *Trace) Hash() uint64 { return t.hash }

// Len returns the number of records written (kept or not).
func (t *Trace) Len() uint64 { return t.count }

// Records returns the kept records (none when recording is off, or only
// those of Config.KeepKinds).
func (t *Trace) Records() []Record { return t.records }

// WriteTimeline prints records, one per line, as a readable timeline.
func WriteTimeline(w io.Writer, records []Record) error {
	for _, r := range records {
		if _, err := io.WriteString(w, r.String()+"\n"); err != nil {
			return err
		}
	}
	return nil
}
