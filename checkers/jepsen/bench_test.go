package jepsen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
)

// generated writes a clean Jepsen history of about ops operations over
// keys keys: senders append unique values (every seventh offset is left
// empty, as a transaction marker would), and one poller per key reads
// every key in order in chunks of up to three, with an assign and a
// nemesis op now and then. It is deterministic.
func generated(ops, keys int) string {
	var b strings.Builder
	next := make([]int64, keys)     // next offset per key
	log := make([][][2]int64, keys) // (offset, value) per key
	read := make([]int, keys)       // records read per key
	value := int64(0)
	index := 0
	line := func(process int, typ, f, v string) {
		fmt.Fprintf(&b, "{:type :%s, :f :%s, :value %s, :time %d, :process %d, :index %d}\n", typ, f, v, index*1000, process, index)
		index++
	}
	for step := 0; index < ops; step++ {
		k := step % keys
		switch {
		case step%50 == 49:
			fmt.Fprintf(&b, "{:type :info, :f :kill, :value nil, :process :nemesis, :index %d}\n", index)
			index++
		case step%3 != 2:
			value++
			if next[k]%7 == 6 {
				next[k]++
			}
			off := next[k]
			next[k]++
			log[k] = append(log[k], [2]int64{off, value})
			p := 100 + step%5
			line(p, "invoke", "send", fmt.Sprintf("[[:send %d %d]]", k, value))
			line(p, "ok", "send", fmt.Sprintf("[[:send %d [%d %d]]]", k, off, value))
		default:
			var pairs []string
			for _, r := range log[k][read[k]:min(len(log[k]), read[k]+3)] {
				pairs = append(pairs, fmt.Sprintf("[%d %d]", r[0], r[1]))
			}
			read[k] += len(pairs)
			line(k, "invoke", "poll", "[[:poll]]")
			line(k, "ok", "poll", fmt.Sprintf("[[:poll {%d [%s]}]]", k, strings.Join(pairs, " ")))
			if step%11 == 0 {
				line(k, "invoke", "assign", fmt.Sprintf("[%d]", k))
				line(k, "ok", "assign", fmt.Sprintf("[%d]", k))
			}
		}
	}
	// Final polls catch every key up.
	for k := 0; k < keys; k++ {
		var pairs []string
		for _, r := range log[k][read[k]:] {
			pairs = append(pairs, fmt.Sprintf("[%d %d]", r[0], r[1]))
		}
		line(k, "invoke", "poll", "[[:poll]]")
		line(k, "ok", "poll", fmt.Sprintf("[[:poll {%d [%s]}]]", k, strings.Join(pairs, " ")))
	}
	return b.String()
}

// TestGeneratedCleanHistory: a long clean history passes every check, and
// dropping one poll's record makes lost-write (or poll-skip) see it.
func TestGeneratedCleanHistory(t *testing.T) {
	text := generated(20000, 8)
	h, err := ReadHistory(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range Check(h) {
		if v.Result != checkers.ResultOK {
			t.Fatalf("%s", v)
		}
	}
	// A poll of key 3 that read offsets 29, 30, 31 forgets offset 30.
	broken := strings.Replace(text, "[[:poll {3 [[29 207] [30 218] [31 223]]}]]", "[[:poll {3 [[29 207] [31 223]]}]]", 1)
	if broken == text {
		t.Fatal("the generated history changed: update the edit")
	}
	h, err = ReadHistory(strings.NewReader(broken))
	if err != nil {
		t.Fatal(err)
	}
	vs := byName(Check(h))
	if vs[NameLostWrite].Result != checkers.ResultViolation || vs[NameIntPollSkip].Result != checkers.ResultViolation {
		t.Fatalf("\n%s\n%s", vs[NameLostWrite], vs[NameIntPollSkip])
	}
}

// BenchmarkCheck100k parses and checks a 100,000-operation history.
func BenchmarkCheck100k(b *testing.B) {
	text := generated(100000, 16)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h, err := ReadHistory(strings.NewReader(text))
		if err != nil {
			b.Fatal(err)
		}
		Check(h)
	}
}
