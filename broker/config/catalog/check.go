package catalog

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode"
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
	v := javaTrim(value)
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
		if !isClassName(v) {
			return fail("not a Java class name", "a fully qualified Java class name"+d.unchecked())
		}
		return nil
	case Password:
		return nil
	}
	return fail("type "+d.Type.String()+" unknown", "nothing (the catalog has no such type)")
}

// javaInt is a Java integer type: its size, its name, its bounds.
type javaInt struct {
	bits     int
	noun     string
	min, max int64
}

func intType(t Type) javaInt {
	switch t {
	case Short:
		return javaInt{16, "a short", math.MinInt16, math.MaxInt16}
	case Int:
		return javaInt{32, "an int", math.MinInt32, math.MaxInt32}
	}
	return javaInt{64, "a long", math.MinInt64, math.MaxInt64}
}

func (d Def) checkInteger(v string, fail func(string, string) error) error {
	t := intType(d.Type)
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
	if !isJavaDouble(v) {
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

func (d Def) checkList(v string, fail func(string, string) error) error {
	set, fold, ok := parseSet(d.Valid)
	if !ok {
		return nil // any list; custom validators are not checked
	}
	allowed := "a comma-separated list, each item " + set.describe(fold)
	if v == "" {
		return nil // an empty list: ValidList checks each item, of which there are none
	}
	// ConfigDef splits on COMMA_WITH_WHITESPACE, \s*,\s*.
	for _, item := range strings.Split(v, ",") {
		item = strings.Trim(item, " \t\n\v\f\r")
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

// parseRange parses Range.toString: "[1,...]", "[...,10]", "[0,...,1]", "[...]".
func parseRange(s string) (valueRange, bool) {
	inner, ok := strings.CutPrefix(s, "[")
	if inner, ok = strings.CutSuffix(inner, "]"); !ok {
		return valueRange{}, false
	}
	parts := strings.Split(inner, ",")
	var r valueRange
	bound := func(p string) (float64, bool) {
		if p == "" || p[0] != '-' && (p[0] < '0' || p[0] > '9') {
			return 0, false
		}
		f, err := strconv.ParseFloat(p, 64)
		return f, err == nil
	}
	var okMin, okMax bool
	switch {
	case len(parts) == 1 && parts[0] == "...":
		return r, true
	case len(parts) == 2 && parts[1] == "...":
		r.min, okMin = bound(parts[0])
		r.hasMin, r.minText = okMin, parts[0]
		return r, okMin
	case len(parts) == 2 && parts[0] == "...":
		r.max, okMax = bound(parts[1])
		r.hasMax, r.maxText = okMax, parts[1]
		return r, okMax
	case len(parts) == 3 && parts[1] == "...":
		r.min, okMin = bound(parts[0])
		r.max, okMax = bound(parts[2])
		r.hasMin, r.minText, r.hasMax, r.maxText = okMin, parts[0], okMax, parts[2]
		return r, okMin && okMax
	}
	return valueRange{}, false
}

// stringSet is a parsed ValidString rendering.
type stringSet []string

const durationTemplate = ":PnDTnHnMn.nS"

// parseSet parses ValidString.toString "[a, b]" and
// CaseInsensitiveValidString.toString "(case insensitive) [A, B]".
func parseSet(s string) (set stringSet, fold, ok bool) {
	if rest, found := strings.CutPrefix(s, "(case insensitive) "); found {
		s, fold = rest, true
	}
	inner, ok := strings.CutPrefix(s, "[")
	if inner, ok = strings.CutSuffix(inner, "]"); !ok || strings.ContainsAny(inner, "[]") || strings.Contains(inner, "...") {
		return nil, false, false
	}
	if inner == "" {
		return stringSet{}, fold, true
	}
	return stringSet(strings.Split(inner, ", ")), fold, true
}

func (s stringSet) has(v string, fold bool) bool {
	for _, a := range s {
		if prefix, ok := strings.CutSuffix(a, durationTemplate); ok {
			if rest, ok := strings.CutPrefix(v, prefix+":"); ok && isDuration(rest) {
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

// javaTrim is String.trim: it drops every char up to U+0020 at both ends.
func javaTrim(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
}

// isJavaDouble reports whether Double.parseDouble takes s in decimal form:
// a sign, digits with an optional point (at least one digit), an optional
// exponent and an optional f/d suffix, or NaN / Infinity. Hexadecimal
// floating literals are left out.
func isJavaDouble(s string) bool {
	if s != "" && (s[0] == '+' || s[0] == '-') {
		s = s[1:]
	}
	if s == "NaN" || s == "Infinity" {
		return true
	}
	s = strings.TrimRight(s, "fFdD")
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	intPart, frac, _ := strings.Cut(mant, ".")
	if intPart+frac == "" || !digits(intPart) || !digits(frac) {
		return false
	}
	if hasExp {
		if exp != "" && (exp[0] == '+' || exp[0] == '-') {
			exp = exp[1:]
		}
		return exp != "" && digits(exp)
	}
	return true
}

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isDuration reports whether Java's Duration.parse takes s as a duration
// that is not negative: P, then nD, then T with nH, nM, n[.n]S, letters in
// any case, at least one part, and one after a T.
// NB: it refuses every minus sign, also in durations Java sums to a
// positive one ("PT1H-30M").
func isDuration(s string) bool {
	s = strings.ToUpper(strings.TrimPrefix(s, "+"))
	rest, ok := strings.CutPrefix(s, "P")
	if !ok || strings.Contains(rest, "-") {
		return false
	}
	parts := 0
	if i := strings.IndexByte(rest, 'D'); i >= 0 && !strings.Contains(rest[:i], "T") {
		if !digits(strings.TrimPrefix(rest[:i], "+")) || i == 0 {
			return false
		}
		rest, parts = rest[i+1:], parts+1
	}
	if rest == "" {
		return parts > 0
	}
	rest, ok = strings.CutPrefix(rest, "T")
	if !ok {
		return false
	}
	parts = 0 // a T needs a time part after it
	for _, unit := range []byte{'H', 'M', 'S'} {
		i := strings.IndexByte(rest, unit)
		if i < 0 {
			continue
		}
		n := strings.TrimPrefix(rest[:i], "+")
		if unit == 'S' {
			whole, frac, _ := strings.Cut(strings.ReplaceAll(n, ",", "."), ".")
			if whole == "" || !digits(whole) || !digits(frac) || len(frac) > 9 {
				return false
			}
		} else if n == "" || !digits(n) {
			return false
		}
		rest, parts = rest[i+1:], parts+1
	}
	return rest == "" && parts > 0
}

// isClassName reports whether s is a fully qualified Java class name:
// identifiers separated by dots, '$' allowed (nested classes).
func isClassName(s string) bool {
	for _, id := range strings.Split(s, ".") {
		if id == "" {
			return false
		}
		for i, r := range id {
			ok := unicode.IsLetter(r) || r == '_' || r == '$' || i > 0 && unicode.IsDigit(r)
			if !ok {
				return false
			}
		}
	}
	return true
}
