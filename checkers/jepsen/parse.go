// parse.go: reading a Jepsen Kafka history, EDN, one operation map per line.
//
// What it accepts: the maps jepsen.tests.kafka records (:type, :f, :value,
// :process, :index, :time, optionally :rebalance-log), bare or tagged
// #jepsen.history.Op{...}; blank lines and ;-comment lines are skipped.
// Every line is checked before anything is judged: a bad line is an error
// naming the line and what was expected, never a partial report.
//
// Keys are integers, strings or keywords; values those or any other EDN
// scalar (BigInts such as 2N equal the integer). Unknown tags (#object,
// #error, #uuid, ...) are read as tagged values, and a line EDN cannot
// read back because Jepsen printed a Java object (#object[Cls 0x1f2a ...],
// the hex hash) is read again with such tokens as strings: one exception
// in a history does not reject the file. Other fields (:error, :time,
// :poll-ms, ...) are ignored.

package jepsen

import (
	"bufio"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"olympos.io/encoding/edn"
)

// Type is an operation's :type.
type Type uint8

// The types of Jepsen operations.
const (
	Invoke Type = iota
	OK
	Fail
	Info
)

// String returns "invoke", "ok", "fail" or "info".
func (t Type) String() string {
	switch t {
	case Invoke:
		return "invoke"
	case OK:
		return "ok"
	case Fail:
		return "fail"
	case Info:
		return "info"
	}
	return "type(" + strconv.Itoa(int(t)) + ")"
}

// Atom is a Jepsen key or message value: an integer (a BigInt such as 2N
// that fits in 64 bits is the integer, as Clojure's = says), a string or a
// keyword; for a value, also any other EDN scalar or tagged literal, kept
// as its EDN text (Raw).
type Atom struct {
	N int64
	// S is a string, a keyword with its colon, or Raw EDN text; Str is set
	// for all three, Keyword or Raw for those.
	S                 string
	Str, Keyword, Raw bool
}

// Key is a Jepsen key: an abstract integer (or, from some harnesses and
// Jepsen's own tests, a string or a keyword) that the client maps to one
// topic-partition.
type Key = Atom

// Value is a message value: Jepsen sends unique integers per key; its own
// tests send keywords (:a, :b).
type Value = Atom

// String returns the atom as EDN writes it: 3, "t-3", :x or the raw text.
func (k Atom) String() string {
	switch {
	case k.Keyword, k.Raw:
		return k.S
	case k.Str:
		return strconv.Quote(k.S)
	}
	return strconv.FormatInt(k.N, 10)
}

// less orders integers before strings, keywords and raw values, each in
// natural order.
func (k Atom) less(o Atom) bool {
	if k.Str != o.Str {
		return !k.Str
	}
	if k.Str {
		if k.S == o.S {
			return k.rank() < o.rank()
		}
		return k.S < o.S
	}
	return k.N < o.N
}

func (k Atom) rank() int {
	switch {
	case k.Keyword:
		return 1
	case k.Raw:
		return 2
	}
	return 0
}

// Pair is one [offset value] pair: a poll read, or a send's completion.
// HasOffset is false for a nil offset (a send whose offset is unknown).
type Pair struct {
	Offset    int64
	HasOffset bool
	Value     Value
}

// KeyPairs are the pairs a poll micro-op read from one key, in the order
// returned.
type KeyPairs struct {
	Key   Key
	Pairs []Pair
}

// Mop is a micro-operation: [:send k v] (or [:send k [offset v]] once
// completed) or [:poll] (or [:poll {k [[offset v] ...]}]).
type Mop struct {
	Send bool
	// Key and Pair are a send's; Pair.HasOffset once an offset is known.
	Key  Key
	Pair Pair
	// Reads are a completed poll's, in key order.
	Reads []KeyPairs
	// Unrecorded marks a poll written without its result ([:poll] or
	// [:poll nil]): an invocation's, or a completion whose reads the
	// history lost. A poll that read nothing is [:poll {}].
	Unrecorded bool
}

// Op is one line of the history.
type Op struct {
	// Line is the 1-based line number; Index is :index, or -1 if absent.
	Line  int
	Index int64
	Type  Type
	// F is :f without the colon: "send", "poll", "txn", "assign",
	// "subscribe", or anything else (ignored by the analyses).
	F       string
	Process int64
	// Mops are the micro-ops of a send, poll or txn.
	Mops []Mop
	// Keys are the keys of an assign or subscribe.
	Keys []Key
	// Rebalanced are the keys named by :rebalance-log.
	Rebalanced []Key
}

// Ref names the operation in evidence: "#12" (its :index) or "line 12".
func (o *Op) Ref() string {
	if o.Index >= 0 {
		return "#" + strconv.FormatInt(o.Index, 10)
	}
	return "line " + strconv.Itoa(o.Line)
}

// ID is the number Ref shows: the :index, or the line number.
func (o *Op) ID() int {
	if o.Index >= 0 {
		return int(o.Index)
	}
	return o.Line
}

// History is a parsed Jepsen history: the client operations in order.
type History struct {
	Ops []Op
	// Skipped counts the lines of non-client operations (:nemesis).
	Skipped int
}

// Keys returns the number of distinct keys the operations name.
func (h *History) Keys() int {
	seen := map[Key]bool{}
	for i := range h.Ops {
		for _, m := range h.Ops[i].Mops {
			if m.Send {
				seen[m.Key] = true
			}
			for _, r := range m.Reads {
				seen[r.Key] = true
			}
		}
		for _, k := range h.Ops[i].Keys {
			seen[k] = true
		}
	}
	return len(seen)
}

// ReadHistory parses a Jepsen history. Errors name the line and what was
// expected.
func ReadHistory(r io.Reader) (*History, error) {
	h := &History{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, ";") {
			continue
		}
		op, client, err := parseLine(text, n)
		if err != nil {
			return nil, fmt.Errorf("line %d: %v", n, err)
		}
		if !client {
			h.Skipped++
			continue
		}
		h.Ops = append(h.Ops, op)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %v", n+1, err)
	}
	if len(h.Ops) == 0 {
		return nil, fmt.Errorf("no client operations: want a Jepsen Kafka history, one operation map per line such as {:type :ok, :f :poll, :value [[:poll {3 [[0 1]]}]], :process 0}")
	}
	return h, nil
}

// opExample is what every line should look like.
const opExample = "one operation map per line, such as {:type :invoke, :f :send, :value [[:send 3 5]], :process 0}"

// parseLine parses one line; client is false for a non-client op.
func parseLine(text string, line int) (op Op, client bool, err error) {
	v, err := decodeLine(text)
	if err != nil {
		// Jepsen prints what EDN cannot read back: #object[Cls 0x1f2a "..."]
		// (a hex identity hash), ##Inf, ratios. Such tokens sit in fields
		// the analyses ignore (:error, :exception), so they are read again
		// as strings rather than rejecting the file.
		if lenient, changed := quoteUnreadable(text); changed {
			if lv, lerr := decodeLine(lenient); lerr == nil {
				v, err = lv, nil
			}
		}
	}
	if err != nil {
		return op, false, err
	}
	if t, ok := v.(edn.Tag); ok && t.Tagname == "jepsen.history.Op" {
		v = t.Value
	}
	m, ok := v.(map[any]any)
	if !ok {
		return op, false, fmt.Errorf("not a map: want %s", opExample)
	}
	op.Line, op.Index = line, -1
	typ, ok := m[edn.Keyword("type")].(edn.Keyword)
	switch {
	case !ok:
		return op, false, fmt.Errorf(":type missing or not a keyword: want :invoke, :ok, :fail or :info")
	case typ == "invoke":
		op.Type = Invoke
	case typ == "ok":
		op.Type = OK
	case typ == "fail":
		op.Type = Fail
	case typ == "info":
		op.Type = Info
	default:
		return op, false, fmt.Errorf(":type %v: want :invoke, :ok, :fail or :info", typ)
	}
	f, ok := m[edn.Keyword("f")].(edn.Keyword)
	if !ok {
		return op, false, fmt.Errorf(":f missing or not a keyword: want :send, :poll, :txn, :assign, :subscribe, ...")
	}
	op.F = string(f)
	if idx, present := m[edn.Keyword("index")]; present {
		i, ok := asInt64(idx)
		if !ok || i < 0 {
			return op, false, fmt.Errorf(":index %s: want a non-negative integer", ednString(idx))
		}
		op.Index = i
	}
	proc := m[edn.Keyword("process")]
	if p, ok := asInt64(proc); ok {
		op.Process = p
	} else if _, ok := proc.(edn.Keyword); ok {
		return op, false, nil // :nemesis and other non-client processes
	} else {
		return op, false, fmt.Errorf(":process %s: want an integer (a client) or a keyword such as :nemesis", ednString(proc))
	}
	value := m[edn.Keyword("value")]
	switch op.F {
	case "send", "poll", "txn":
		if op.Mops, err = parseMops(value, op.Type); err != nil {
			return op, false, err
		}
	case "assign", "subscribe":
		if op.Keys, err = parseKeys(value); err != nil {
			return op, false, fmt.Errorf(":%s :value: %v", op.F, err)
		}
	}
	if rl, present := m[edn.Keyword("rebalance-log")]; present && rl != nil {
		if op.Rebalanced, err = parseRebalanceLog(rl); err != nil {
			return op, false, err
		}
	}
	return op, true, nil
}

func decodeLine(text string) (any, error) {
	d := edn.NewDecoder(strings.NewReader(text))
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("malformed EDN (%v): want %s", err, opExample)
	}
	var rest any
	if err := d.Decode(&rest); err != io.EOF {
		return nil, fmt.Errorf("more than one EDN value on the line: want %s", opExample)
	}
	return v, nil
}

// quoteUnreadable rewrites, outside strings and character literals, every
// token that starts like a number but is not an EDN integer or float
// (0x1f2a, 1/2), every ##Inf-style token, and every quote ('x), as a
// string; changed says whether it rewrote anything.
func quoteUnreadable(text string) (string, bool) {
	var b strings.Builder
	changed := false
	delim := func(c byte) bool {
		return c == ' ' || c == ',' || c == '\t' || c == '\n' || c == '\r' || strings.IndexByte("()[]{}\"", c) >= 0
	}
	for i := 0; i < len(text); {
		c := text[i]
		switch {
		case c == '"':
			j := i + 1
			for j < len(text) && text[j] != '"' {
				if text[j] == '\\' {
					j++
				}
				j++
			}
			if j < len(text) {
				j++
			}
			j = min(j, len(text)) // an escape that ends the line unterminated
			b.WriteString(text[i:j])
			i = j
			continue
		case c == '\\' && i+1 < len(text):
			j := i + 2
			for j < len(text) && !delim(text[j]) {
				j++
			}
			b.WriteString(text[i:j])
			i = j
			continue
		case c == '\'':
			changed = true
			i++
			continue
		}
		if delim(c) {
			b.WriteByte(c)
			i++
			continue
		}
		j := i
		for j < len(text) && !delim(text[j]) {
			j++
		}
		tok := text[i:j]
		if unreadableToken(tok) {
			b.WriteString(strconv.Quote(tok))
			changed = true
		} else {
			b.WriteString(tok)
		}
		i = j
	}
	return b.String(), changed
}

func unreadableToken(tok string) bool {
	if strings.HasPrefix(tok, "##") {
		return true
	}
	t := strings.TrimLeft(tok, "+-")
	if t == "" || t[0] < '0' || t[0] > '9' {
		return false
	}
	if _, err := strconv.ParseInt(strings.TrimSuffix(tok, "N"), 10, 64); err == nil {
		return false
	}
	if _, err := strconv.ParseFloat(strings.TrimSuffix(tok, "M"), 64); err == nil {
		return false
	}
	if _, ok := new(big.Int).SetString(strings.TrimSuffix(tok, "N"), 10); ok {
		return false
	}
	return true
}

func parseMops(value any, t Type) ([]Mop, error) {
	vs, ok := value.([]any)
	if !ok {
		if value == nil && t != OK {
			return nil, nil // a crashed op may leave its :value out
		}
		return nil, fmt.Errorf(":value %v: want a vector of micro-ops such as [[:send 3 5] [:poll]]", value)
	}
	mops := make([]Mop, 0, len(vs))
	for i, x := range vs {
		mop, err := parseMop(x)
		if err != nil {
			return nil, fmt.Errorf("micro-op %d %s: %v", i, ednString(x), err)
		}
		mops = append(mops, mop)
	}
	return mops, nil
}

func parseMop(x any) (Mop, error) {
	v, ok := x.([]any)
	if !ok || len(v) == 0 {
		return Mop{}, fmt.Errorf("want [:send k v], [:send k [offset v]], [:poll] or [:poll {k [[offset v] ...]}]")
	}
	switch v[0] {
	case edn.Keyword("send"):
		if len(v) != 3 {
			return Mop{}, fmt.Errorf("want [:send k v] or [:send k [offset v]]")
		}
		k, err := parseKey(v[1])
		if err != nil {
			return Mop{}, err
		}
		m := Mop{Send: true, Key: k}
		if sv, ok := v[2].([]any); ok {
			if m.Pair, err = parsePair(sv); err != nil {
				return Mop{}, err
			}
		} else if m.Pair.Value, err = parseValue(v[2]); err != nil {
			return Mop{}, fmt.Errorf("sent %v: want v or [offset v]", err)
		}
		return m, nil
	case edn.Keyword("poll"):
		m := Mop{}
		switch {
		case len(v) == 1 || len(v) == 2 && v[1] == nil:
			m.Unrecorded = true
			return m, nil
		case len(v) != 2:
			return Mop{}, fmt.Errorf("want [:poll] or [:poll {k [[offset v] ...]}]")
		}
		reads, ok := v[1].(map[any]any)
		if !ok {
			return Mop{}, fmt.Errorf("poll result %s: want a map {k [[offset v] ...]}", ednString(v[1]))
		}
		raw := make([]any, 0, len(reads))
		for rk := range reads {
			raw = append(raw, rk)
		}
		// NB: sorted so that which bad entry an error names is deterministic.
		sort.Slice(raw, func(i, j int) bool { return ednText(raw[i]) < ednText(raw[j]) })
		for _, rk := range raw {
			rv := reads[rk]
			k, err := parseKey(rk)
			if err != nil {
				return Mop{}, err
			}
			kp := KeyPairs{Key: k}
			pairs, ok := rv.([]any)
			if !ok && rv != nil {
				return Mop{}, fmt.Errorf("key %v: %s: want a vector of [offset v] pairs", k, ednString(rv))
			}
			for _, p := range pairs {
				pv, ok := p.([]any)
				if !ok {
					return Mop{}, fmt.Errorf("key %v: %s: want an [offset v] pair", k, ednString(p))
				}
				pair, err := parsePair(pv)
				if err != nil {
					return Mop{}, fmt.Errorf("key %v: %v", k, err)
				}
				kp.Pairs = append(kp.Pairs, pair)
			}
			m.Reads = append(m.Reads, kp)
		}
		sort.Slice(m.Reads, func(i, j int) bool { return m.Reads[i].Key.less(m.Reads[j].Key) })
		return m, nil
	}
	return Mop{}, fmt.Errorf("want a micro-op starting with :send or :poll")
}

func parsePair(v []any) (Pair, error) {
	if len(v) != 2 {
		return Pair{}, fmt.Errorf("%s: want [offset v]", ednString(v))
	}
	var p Pair
	if v[0] != nil {
		o, ok := asInt64(v[0])
		if !ok {
			return Pair{}, fmt.Errorf("offset %s: want an integer or nil", ednString(v[0]))
		}
		p.Offset, p.HasOffset = o, true
	}
	val, err := parseValue(v[1])
	if err != nil {
		return Pair{}, err
	}
	p.Value = val
	return p, nil
}

// parseValue reads a message value: what parseKey accepts, and any other
// scalar or tagged literal (a float, a BigInt past 64 bits, #uuid "..."),
// kept as its EDN text. Collections, nil and symbols are not values.
func parseValue(x any) (Value, error) {
	if v, err := parseKey(x); err == nil {
		return v, nil
	}
	switch x.(type) {
	case nil, []any, map[any]any, map[any]bool, edn.Symbol:
		return Value{}, fmt.Errorf("value %s: want an integer, a string or a keyword (Jepsen's values are unique integers per key)", ednString(x))
	}
	return Value{S: ednText(x), Str: true, Raw: true}, nil
}

// asInt64 returns an integer, or a BigInt (2N) that fits in 64 bits.
func asInt64(x any) (int64, bool) {
	switch n := x.(type) {
	case int64:
		return n, true
	case big.Int:
		return n.Int64(), n.IsInt64()
	case *big.Int:
		return n.Int64(), n.IsInt64()
	}
	return 0, false
}

func parseKey(x any) (Key, error) {
	if n, ok := asInt64(x); ok {
		return Key{N: n}, nil
	}
	switch k := x.(type) {
	case string:
		return Key{S: k, Str: true}, nil
	case edn.Keyword:
		return Key{S: k.String(), Str: true, Keyword: true}, nil
	}
	return Key{}, fmt.Errorf("key %s: want an integer, a string or a keyword", ednString(x))
}

func parseKeys(x any) ([]Key, error) {
	vs, ok := x.([]any)
	if set, isSet := x.(map[any]bool); isSet {
		for v := range set {
			vs = append(vs, v)
		}
		ok = true
	}
	if !ok {
		if x == nil {
			return nil, nil
		}
		return nil, fmt.Errorf("%s: want a vector of keys", ednString(x))
	}
	keys := make([]Key, 0, len(vs))
	for _, v := range vs {
		k, err := parseKey(v)
		if err != nil {
			return nil, err
		}
		keys = append(keys, k)
	}
	if _, isSet := x.(map[any]bool); isSet {
		sort.Slice(keys, func(i, j int) bool { return keys[i].less(keys[j]) })
	}
	return keys, nil
}

// parseRebalanceLog reads [{:keys [k ...]} ...].
func parseRebalanceLog(x any) ([]Key, error) {
	vs, ok := x.([]any)
	if !ok {
		return nil, fmt.Errorf(":rebalance-log %s: want a vector of maps {:keys [k ...]}", ednString(x))
	}
	var keys []Key
	for _, v := range vs {
		m, ok := v.(map[any]any)
		if !ok {
			return nil, fmt.Errorf(":rebalance-log entry %s: want a map {:keys [k ...]}", ednString(v))
		}
		ks, err := parseKeys(m[edn.Keyword("keys")])
		if err != nil {
			return nil, fmt.Errorf(":rebalance-log :keys %v", err)
		}
		keys = append(keys, ks...)
	}
	return keys, nil
}

// ednString renders a parsed value back as EDN for error messages, map
// entries and set elements sorted (edn.Marshal ranges over Go maps), cut
// to 80 characters.
func ednString(x any) string {
	s := ednText(x)
	if len(s) > 80 {
		s = s[:77] + "..."
	}
	return s
}

func ednText(x any) string {
	switch v := x.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			parts[i] = ednText(e)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case map[any]any:
		parts := make([]string, 0, len(v))
		for k, e := range v {
			parts = append(parts, ednText(k)+" "+ednText(e))
		}
		sort.Strings(parts)
		return "{" + strings.Join(parts, ", ") + "}"
	case map[any]bool:
		parts := make([]string, 0, len(v))
		for k := range v {
			parts = append(parts, ednText(k))
		}
		sort.Strings(parts)
		return "#{" + strings.Join(parts, " ") + "}"
	case *any:
		return ednText(*v)
	case edn.Tag:
		return "#" + v.Tagname + " " + ednText(v.Value)
	}
	b, err := edn.Marshal(x)
	if err != nil {
		return fmt.Sprint(x)
	}
	return string(b)
}
