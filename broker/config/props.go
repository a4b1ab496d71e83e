package config

// This file holds the machinery shared by every kind of configuration: the
// Error type, and property descriptors that parse a string value, range-check
// it, store it in a struct field and render it back. It plays the part of
// Kafka's ConfigDef. Simplified vs Kafka: values are trimmed of spaces
// except free-text strings (group.id, client.id, broker.rack), as ConfigDef
// does; Kafka's PASSWORD, CLASS and nested types do not occur.

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// Never is a Duration that never elapses: Kafka's Long.MaxValue, the default
// of log.flush.interval.ms. A *.ms value too large for sim.Duration
// saturates to Never.
const Never = sim.Duration(math.MaxInt64)

// ErrorKind classifies a configuration error.
type ErrorKind int8

// The kinds of configuration error.
const (
	// UnknownProperty is a key no configuration kind knows.
	UnknownProperty ErrorKind = iota + 1
	// BadValue is a value of the wrong type or not among the allowed ones:
	// acks=maybe, min.insync.replicas=two.
	BadValue
	// OutOfRange is a value of the right type outside its limits:
	// min.insync.replicas=0.
	OutOfRange
	// Conflict is a combination that cannot hold: two properties, or a
	// property and the cluster (brokers, replication factor).
	Conflict
	// NotInRelease is a Kafka property that the selected release does not
	// have (zookeeper.connect in 4.0): Allowed names the releases that do.
	NotInRelease
)

var errorKindNames = [...]string{"", "unknown property", "bad value", "out of range", "conflict", "not in this release"}

// String names the kind.
func (k ErrorKind) String() string {
	if k >= UnknownProperty && k <= NotInRelease {
		return errorKindNames[k]
	}
	return "error kind " + strconv.Itoa(int(k))
}

// Error is a configuration error. It names the property, the value given,
// why it was refused and what is allowed.
type Error struct {
	Kind ErrorKind
	// Property is the key as the user wrote it (with its prefix, if any).
	Property string
	// Value is the value given (or in effect).
	Value string
	// Other and OtherValue name the second side of a Conflict: another
	// property, or "brokers" / "replication factor".
	Other, OtherValue string
	// Reason says what is wrong.
	Reason string
	// Allowed says what is accepted.
	Allowed string
	// Suggestion is, for an UnknownProperty, the nearest known key, and
	// Suggestions the nearest few (Suggestion first); none when no known
	// key is near enough to be a misspelling.
	Suggestion  string
	Suggestions []string
}

// Error renders the error as one line, e.g.
// `config: acks = "maybe": not one of the allowed values; allowed: 0, 1, -1, all`.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("config: ")
	switch e.Kind {
	case UnknownProperty:
		b.WriteString("unknown property " + strconv.Quote(e.Property))
		switch {
		case len(e.Suggestions) > 0:
			b.WriteString("; did you mean " + quoteList(e.Suggestions) + "?")
		case e.Suggestion != "":
			b.WriteString("; did you mean " + strconv.Quote(e.Suggestion) + "?")
		}
		return b.String()
	case NotInRelease:
		b.WriteString(e.Property + ": " + e.Reason)
		if e.Allowed != "" {
			b.WriteString(" (" + e.Allowed + ")")
		}
		return b.String()
	case Conflict:
		b.WriteString(e.Property + " = " + e.Value + " conflicts with " + e.Other)
		if e.OtherValue != "" {
			b.WriteString(" = " + e.OtherValue)
		}
	default:
		b.WriteString(e.Property + " = " + strconv.Quote(e.Value))
	}
	b.WriteString(": " + e.Reason)
	if e.Allowed != "" {
		b.WriteString("; allowed: " + e.Allowed)
	}
	return b.String()
}

// property describes one Kafka property of a configuration kind T.
type property[T any] struct {
	name string
	// overriddenBy, when set, names the property that wins when both are
	// given (log.roll.hours loses to log.roll.ms). Such an alias is parsed
	// but never rendered or checked on its own.
	overriddenBy []string
	set          func(c *T, v string) error
	get          func(c *T) string
	check        func(c *T) error
	// same, when set, reports whether get renders a and b alike, without
	// rendering them (diff runs for every run a scenario makes).
	same func(a, b *T) bool
}

// table is the list of a kind's properties, sorted by name.
type table[T any] []property[T]

func newTable[T any](ps ...property[T]) table[T] {
	sort.Slice(ps, func(i, j int) bool { return ps[i].name < ps[j].name })
	for i := 1; i < len(ps); i++ {
		if ps[i].name == ps[i-1].name {
			panic("config: property " + ps[i].name + " declared twice")
		}
	}
	return ps
}

func (t table[T]) find(name string) (property[T], bool) {
	i := sort.Search(len(t), func(i int) bool { return t[i].name >= name })
	if i < len(t) && t[i].name == name {
		return t[i], true
	}
	return property[T]{}, false
}

// names returns every key the kind accepts, sorted.
func (t table[T]) names() []string {
	out := make([]string, len(t))
	for i, p := range t {
		out[i] = p.name
	}
	return out
}

// apply parses props into c, keys in sorted order, and returns the first
// error. A key whose overriding property is also present is checked but not
// stored.
func (t table[T]) apply(c *T, props map[string]string) error {
	for _, k := range sortedKeys(props) {
		p, ok := t.find(k)
		if !ok {
			return unknown(k, t.names())
		}
		target := c
		if overridden(p.overriddenBy, props) {
			// NB: an overridden spelling is still checked, as Kafka's
			// ConfigDef parses every key, but its value is dropped.
			var scratch T
			target = &scratch
		}
		if err := p.set(target, props[k]); err != nil {
			return err
		}
	}
	return nil
}

// validate range-checks every property, in name order.
func (t table[T]) validate(c *T) error {
	for _, p := range t {
		if p.check == nil {
			continue
		}
		if err := p.check(c); err != nil {
			return err
		}
	}
	return nil
}

// pairs renders every rendered property as key=value, sorted by key.
func (t table[T]) pairs(c *T) []string {
	var out []string
	for _, p := range t {
		if len(p.overriddenBy) == 0 {
			out = append(out, p.name+"="+p.get(c))
		}
	}
	return out
}

// diff renders the properties whose value in c differs from that in base.
func (t table[T]) diff(c, base *T) []string {
	var out []string
	for _, p := range t {
		if len(p.overriddenBy) != 0 {
			continue
		}
		if p.same != nil {
			if p.same(c, base) {
				continue
			}
		} else if p.get(c) == p.get(base) {
			continue
		}
		out = append(out, p.name+"="+p.get(c))
	}
	return out
}

// overridden reports whether any of the winners is present in props.
func overridden(winners []string, props map[string]string) bool {
	for _, w := range winners {
		if _, ok := props[w]; ok {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// unknown builds the UnknownProperty error for key, suggesting the nearest
// of the candidates (sorted, so ties resolve to the first name).
func unknown(key string, candidates []string) error {
	best, bestD := "", math.MaxInt
	for _, c := range candidates {
		if d := EditDistance(key, c); d < bestD {
			best, bestD = c, d
		}
	}
	return &Error{Kind: UnknownProperty, Property: key, Suggestion: best,
		Reason: "not a known property"}
}

// EditDistance is the Levenshtein distance between a and b, by bytes
// (for did-you-mean suggestions, here and in the script checker).
func EditDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// rangeText describes [lo, hi] for integers of the given unit.
func rangeText(lo, hi int64, unit string) string {
	s := "an integer"
	if unit != "" {
		s = "an integer of " + unit
	}
	switch {
	case hi == math.MaxInt64:
		return s + " >= " + strconv.FormatInt(lo, 10)
	default:
		return s + " in [" + strconv.FormatInt(lo, 10) + ", " + strconv.FormatInt(hi, 10) + "]"
	}
}

func outOfRange(name string, v int64, lo, hi int64, unit string) error {
	return &Error{Kind: OutOfRange, Property: name, Value: strconv.FormatInt(v, 10),
		Reason: "out of range", Allowed: rangeText(lo, hi, unit)}
}

// parseInt parses an integer value for property name, within [lo, hi].
func parseInt(name, v string, lo, hi int64, unit string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, &Error{Kind: BadValue, Property: name, Value: v,
			Reason: "not an integer", Allowed: rangeText(lo, hi, unit)}
	}
	if n < lo || n > hi {
		return 0, outOfRange(name, n, lo, hi, unit)
	}
	return n, nil
}

// intProp is a Kafka INT (or SHORT) property held in an int field.
func intProp[T any](name string, f func(*T) *int, lo, hi int64) property[T] {
	return property[T]{
		name: name,
		set: func(c *T, v string) error {
			n, err := parseInt(name, v, lo, hi, "")
			if err == nil {
				*f(c) = int(n)
			}
			return err
		},
		get: func(c *T) string { return strconv.Itoa(*f(c)) },
		check: func(c *T) error {
			if n := int64(*f(c)); n < lo || n > hi {
				return outOfRange(name, n, lo, hi, "")
			}
			return nil
		},
	}
}

// longProp is a Kafka LONG property held in an int64 field.
func longProp[T any](name string, f func(*T) *int64, lo, hi int64) property[T] {
	return property[T]{
		name: name,
		set: func(c *T, v string) error {
			n, err := parseInt(name, v, lo, hi, "")
			if err == nil {
				*f(c) = n
			}
			return err
		},
		get:  func(c *T) string { return strconv.FormatInt(*f(c), 10) },
		same: func(a, b *T) bool { return *f(a) == *f(b) },
		check: func(c *T) error {
			if n := *f(c); n < lo || n > hi {
				return outOfRange(name, n, lo, hi, "")
			}
			return nil
		},
	}
}

// durProp is a time property counted in unit (milliseconds for *.ms,
// seconds, minutes, hours), converted to sim.Duration once, here. A value
// too large for sim.Duration saturates to Never; Never renders as Kafka's
// Long.MaxValue.
func durProp[T any](name string, unit sim.Duration, unitName string, f func(*T) *sim.Duration, lo, hi int64) property[T] {
	toDur := func(n int64) sim.Duration {
		if n > int64(Never/unit) {
			return Never
		}
		return sim.Duration(n) * unit
	}
	fromDur := func(d sim.Duration) int64 {
		if d == Never {
			return math.MaxInt64
		}
		return int64(d / unit)
	}
	return property[T]{
		name: name,
		set: func(c *T, v string) error {
			n, err := parseInt(name, v, lo, hi, unitName)
			if err == nil {
				*f(c) = toDur(n)
			}
			return err
		},
		get:  func(c *T) string { return strconv.FormatInt(fromDur(*f(c)), 10) },
		same: func(a, b *T) bool { return fromDur(*f(a)) == fromDur(*f(b)) },
		check: func(c *T) error {
			d := *f(c)
			if n := fromDur(d); n < lo || n > hi || (d != Never && d%unit != 0) {
				return outOfRange(name, n, lo, hi, unitName)
			}
			return nil
		},
	}
}

// msProp is a Kafka *.ms property.
func msProp[T any](name string, f func(*T) *sim.Duration, lo, hi int64) property[T] {
	return durProp(name, sim.Millisecond, "milliseconds", f, lo, hi)
}

// aliasOf marks p as another spelling (log.roll.hours, log.dir) that loses
// to any of the winners when both are given.
func aliasOf[T any](p property[T], winners ...string) property[T] {
	p.overriddenBy = winners
	p.check = nil
	return p
}

// boolProp is a Kafka BOOLEAN property: "true" or "false", any case.
func boolProp[T any](name string, f func(*T) *bool) property[T] {
	return property[T]{
		name: name,
		set: func(c *T, v string) error {
			switch strings.ToLower(strings.TrimSpace(v)) {
			case "true":
				*f(c) = true
			case "false":
				*f(c) = false
			default:
				return &Error{Kind: BadValue, Property: name, Value: v,
					Reason: "not a boolean", Allowed: "true, false"}
			}
			return nil
		},
		get: func(c *T) string { return strconv.FormatBool(*f(c)) },
	}
}

// stringProp is a free-text STRING property, kept as given (not trimmed,
// as Kafka keeps STRING values).
func stringProp[T any](name string, f func(*T) *string) property[T] {
	return property[T]{
		name: name,
		set:  func(c *T, v string) error { *f(c) = v; return nil },
		get:  func(c *T) string { return *f(c) },
	}
}

// choiceProp is a property whose value is one of a fixed set, parsed by
// parse, rendered by String and described by allowed.
func choiceProp[T any, E interface {
	comparable
	String() string
}](name string, f func(*T) *E, parse func(string) (E, bool), allowed string) property[T] {
	return property[T]{
		name: name,
		set: func(c *T, v string) error {
			e, ok := parse(strings.TrimSpace(v))
			if !ok {
				return &Error{Kind: BadValue, Property: name, Value: v,
					Reason: "not one of the allowed values", Allowed: allowed}
			}
			*f(c) = e
			return nil
		},
		get: func(c *T) string { return (*f(c)).String() },
		check: func(c *T) error {
			e := *f(c)
			if back, ok := parse(e.String()); !ok || back != e {
				return &Error{Kind: BadValue, Property: name, Value: e.String(),
					Reason: "not one of the allowed values", Allowed: allowed}
			}
			return nil
		},
	}
}

// conflict builds a Conflict error between prop=value and other=otherValue.
func conflict(prop, value, other, otherValue, reason, allowed string) error {
	return &Error{Kind: Conflict, Property: prop, Value: value, Other: other,
		OtherValue: otherValue, Reason: reason, Allowed: allowed}
}

func itoa(n int) string { return strconv.Itoa(n) }

func ms(d sim.Duration) string {
	if d == Never {
		return strconv.FormatInt(math.MaxInt64, 10)
	}
	return strconv.FormatInt(d.Milliseconds(), 10)
}
