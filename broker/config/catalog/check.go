package catalog

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// CheckError is a value that Kafka's ConfigDef would reject for a property.
type CheckError struct {
	// Name is the property, Value the value as given (untrimmed).
	Name, Value string
	// Reason says what is wrong ("not an int", "below the minimum 1").
	Reason string
	// Allowed says what the property takes ("an int in [0, 2147483647]").
	Allowed string
}

// Error reads like
// `max.message.bytes = "abc": not an int; allowed: an int in [0, 2147483647]`.
func (e *CheckError) Error() string {
	return fmt.Sprintf("%s = %q: %s; allowed: %s", e.Name, e.Value, e.Reason, e.Allowed)
}

// Check validates value as Kafka's ConfigDef would for d: it trims the
// value (ConfigDef.parseType), parses it as d's Type, then applies the
// validator d.Valid renders, where the rendering is one this package knows:
// a Range ("[1,...]", "[0,...,1]", "[...,10]"), a ValidString or ValidList
// ("[compact, delete]"), a CaseInsensitiveValidString ("(case insensitive)
// [A, B]"), NonEmptyString ("non-empty string") and NonNullValidator
// ("non-null string"). Other renderings (custom validators such as
// "[1,...,9] or -1", or "non-empty list", which in KRaft's QuorumConfig
// accepts an empty list) are not checked: only the type is, and Allowed
// quotes the rendering.
//
// NB: a class is checked as a Java class name, not loaded; a password or a
// string without validator takes anything. A nil error means ConfigDef's
// parse and known validator accept the value, not that Kafka's broker
// accepts it in every combination with other properties.
func (d Def) Check(value string) error {
	v := strings.TrimSpace(value)
	fail := func(reason, allowed string) error {
		return &CheckError{Name: d.Name, Value: value, Reason: reason, Allowed: allowed}
	}
	switch d.Type {
	case Boolean:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return fail("not a boolean", "true or false (any case)")
		}
		return nil
	case Int, Short, Long:
		return d.checkInteger(v, fail)
	case Double:
		return d.checkDouble(v, fail)
	case List:
		return d.checkList(v, fail)
	case String:
		return d.checkString(v, fail)
	case Class:
		if !classRE.MatchString(v) {
			return fail("not a Java class name", "a fully qualified Java class name"+d.unchecked())
		}
		return nil
	case Password:
		return nil
	}
	return fail("type "+d.Type.String()+" unknown", "nothing (the catalog has no such type)")
}

// integer bounds of each Java integer type.
var intBits = map[Type]struct {
	bits     int
	noun     string
	min, max int64
}{
	Short: {16, "a short", math.MinInt16, math.MaxInt16},
	Int:   {32, "an int", math.MinInt32, math.MaxInt32},
	Long:  {64, "a long", math.MinInt64, math.MaxInt64},
}

func (d Def) checkInteger(v string, fail func(string, string) error) error {
	t := intBits[d.Type]
	lo, hi := t.min, t.max
	r, isRange := parseRange(d.Valid)
	if isRange {
		if r.hasMin {
			lo = max(lo, clampInt(r.min))
		}
		if r.hasMax {
			hi = min(hi, clampInt(r.max))
		}
	}
	allowed := fmt.Sprintf("%s in [%d, %d]", t.noun, lo, hi)
	if !isRange {
		allowed += d.unchecked()
	}
	// Java's Integer.parseInt and friends take an optional sign and
	// decimal digits only, as strconv.ParseInt with base 10 does.
	n, err := strconv.ParseInt(v, 10, t.bits)
	if err != nil {
		return fail("not "+t.noun, allowed)
	}
	if isRange {
		if r.hasMin && float64(n) < r.min {
			return fail("below the minimum "+r.minText, allowed)
		}
		if r.hasMax && float64(n) > r.max {
			return fail("above the maximum "+r.maxText, allowed)
		}
	}
	return nil
}

func clampInt(f float64) int64 {
	switch {
	case f <= math.MinInt64:
		return math.MinInt64
	case f >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(math.Ceil(f)) // a fractional bound of an integer property is not rendered by Kafka
}

// javaDoubleRE is what Double.parseDouble takes in decimal form: a sign,
// digits with an optional point, an exponent, and an optional f/d suffix.
// (Hexadecimal floating literals are left out.)
var javaDoubleRE = regexp.MustCompile(`^[+-]?(NaN|Infinity|([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?[fFdD]?)$`)

func (d Def) checkDouble(v string, fail func(string, string) error) error {
	r, isRange := parseRange(d.Valid)
	allowed := "a double"
	if isRange {
		lo, hi := "-Infinity", "Infinity"
		if r.hasMin {
			lo = r.minText
		}
		if r.hasMax {
			hi = r.maxText
		}
		allowed = fmt.Sprintf("a double in [%s, %s]", lo, hi)
	} else {
		allowed += d.unchecked()
	}
	if !javaDoubleRE.MatchString(v) {
		return fail("not a double", allowed)
	}
	s := strings.TrimRight(v, "fFdD")
	if strings.HasSuffix(s, "Infinity") {
		s = strings.TrimSuffix(s, "Infinity") + "Inf"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) { // Java overflows to Infinity
		return fail("not a double", allowed)
	}
	if isRange {
		// Range.ensureValid compares doubleValue(): NaN passes both tests.
		if r.hasMin && f < r.min {
			return fail("below the minimum "+r.minText, allowed)
		}
		if r.hasMax && f > r.max {
			return fail("above the maximum "+r.maxText, allowed)
		}
	}
	return nil
}

// listSplit is ConfigDef's COMMA_WITH_WHITESPACE.
var listSplit = regexp.MustCompile(`\s*,\s*`)

func (d Def) checkList(v string, fail func(string, string) error) error {
	set, fold, ok := parseSet(d.Valid)
	if !ok {
		return nil // any list; custom validators are not checked
	}
	allowed := "a comma-separated list, each item " + set.describe(fold)
	if v == "" {
		return nil // an empty list: ValidList checks each item, of which there are none
	}
	for _, item := range listSplit.Split(v, -1) {
		if !set.has(item, fold) {
			return fail(fmt.Sprintf("item %q is not a valid value", item), allowed)
		}
	}
	return nil
}

func (d Def) checkString(v string, fail func(string, string) error) error {
	switch d.Valid {
	case "", "non-null string":
		return nil
	case "non-empty string":
		if v == "" {
			return fail("empty", "a non-empty string")
		}
		return nil
	}
	set, fold, ok := parseSet(d.Valid)
	if !ok {
		return nil
	}
	if !set.has(v, fold) {
		return fail("not a valid value", set.describe(fold))
	}
	return nil
}

// unchecked is the note Allowed carries for a validator Check does not apply.
func (d Def) unchecked() string {
	switch d.Valid {
	case "", "non-null string":
		return ""
	}
	if _, ok := parseRange(d.Valid); ok {
		return ""
	}
	return fmt.Sprintf(" (Kafka also applies the validator %q, not checked here)", d.Valid)
}

// valueRange is a parsed Range rendering.
type valueRange struct {
	hasMin, hasMax   bool
	min, max         float64
	minText, maxText string
}

var rangeRE = regexp.MustCompile(`^\[(?:(-?[0-9][0-9.Ee+-]*),)?\.\.\.(?:,(-?[0-9][0-9.Ee+-]*))?\]$`)

// parseRange parses Range.toString: "[1,...]", "[...,10]", "[0,...,1]", "[...]".
func parseRange(s string) (valueRange, bool) {
	m := rangeRE.FindStringSubmatch(s)
	if m == nil {
		return valueRange{}, false
	}
	var r valueRange
	if m[1] != "" {
		f, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			return valueRange{}, false
		}
		r.hasMin, r.min, r.minText = true, f, m[1]
	}
	if m[2] != "" {
		f, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			return valueRange{}, false
		}
		r.hasMax, r.max, r.maxText = true, f, m[2]
	}
	return r, true
}

// stringSet is a parsed ValidString rendering.
type stringSet []string

var (
	setRE = regexp.MustCompile(`^\[([^\[\]]*)\]$`)
	// durationItem is a choice of AutoOffsetResetStrategy (KIP-1106,
	// 4.0): "by_duration:" then an ISO-8601 duration as Java's
	// Duration.parse reads it, not negative.
	durationRE = regexp.MustCompile(`(?i)^\+?P(?:[+]?[0-9]+D)?(?:T(?:[+]?[0-9]+H)?(?:[+]?[0-9]+M)?(?:[+]?[0-9]+(?:[.,][0-9]{0,9})?S)?)?$`)
)

const durationTemplate = ":PnDTnHnMn.nS"

// parseSet parses ValidString.toString "[a, b]" and
// CaseInsensitiveValidString.toString "(case insensitive) [A, B]".
func parseSet(s string) (set stringSet, fold, ok bool) {
	if rest, found := strings.CutPrefix(s, "(case insensitive) "); found {
		s, fold = rest, true
	}
	m := setRE.FindStringSubmatch(s)
	if m == nil || strings.Contains(s, "...") {
		return nil, false, false
	}
	if m[1] == "" {
		return stringSet{}, fold, true
	}
	return stringSet(strings.Split(m[1], ", ")), fold, true
}

func (s stringSet) has(v string, fold bool) bool {
	for _, a := range s {
		if prefix, ok := strings.CutSuffix(a, durationTemplate); ok {
			if rest, ok := strings.CutPrefix(v, prefix+":"); ok && durationRE.MatchString(rest) && strings.ContainsAny(rest, "DHMSdhms") {
				return true
			}
			continue
		}
		if a == v || fold && strings.EqualFold(a, v) {
			return true
		}
	}
	return false
}

func (s stringSet) describe(fold bool) string {
	if len(s) == 0 {
		return "nothing (the validator allows no value)"
	}
	d := "one of " + strings.Join(s, ", ")
	if fold {
		d += " (case-insensitive)"
	}
	return d
}

// classRE is a fully qualified Java class name: identifiers separated by
// dots, '$' allowed for nested classes.
var classRE = regexp.MustCompile(`^[\p{L}_$][\p{L}\p{N}_$]*(\.[\p{L}_$][\p{L}\p{N}_$]*)*$`)
