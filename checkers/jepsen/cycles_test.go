package jepsen

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
)

// checkLines runs CheckWith on the lines.
func checkLines(t *testing.T, opts Options, lines ...string) map[string]checkers.Verdict {
	t.Helper()
	h, err := ReadHistory(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return byName(CheckWith(h, opts))
}

// TestCyclesWWDeps: without Jepsen's :ww-deps there are no ww edges, so
// the G0 of g0.edn and the ww-borne G1c of g1c-ww.edn go unseen, as in a
// Jepsen run without the option (unknown, not ok: they may be there); the
// wr-only G1c stays.
func TestCyclesWWDeps(t *testing.T) {
	for _, c := range []struct {
		file, name string
	}{{"g0.edn", NameG0}, {"g1c-ww.edn", NameG1c}, {"g1c-wr.edn", NameG1c}} {
		h := readTestdata(t, c.file)
		on, off := byName(CheckWith(h, Options{WWDeps: true})), byName(CheckWith(h, Options{}))
		if on[c.name].Result != checkers.ResultViolation {
			t.Errorf("%s with ww-deps: %s", c.file, on[c.name])
		}
		want := checkers.ResultUnknown
		if c.file == "g1c-wr.edn" {
			want = checkers.ResultViolation
		}
		if off[c.name].Result != want {
			t.Errorf("%s without ww-deps: %s, want %s", c.file, off[c.name], want)
		}
	}
}

// TestCyclesOnePerComponent: two components with a G0 each are two
// anomalies; in the first, a wr-only cycle is G1c too, but G0 implies G1c
// (Adya), so as in Elle it is not searched there.
func TestCyclesOnePerComponent(t *testing.T) {
	vs := checkLines(t, Options{WWDeps: true},
		o(1, 0, "ok", "txn", "[[:send 1 [0 1]] [:send 2 [1 1]] [:poll {5 [[0 50]]}]]"),
		o(3, 1, "ok", "txn", "[[:send 1 [1 2]] [:send 2 [0 2]] [:send 5 [0 50]] [:poll {1 [[0 1]]}]]"),
		o(5, 2, "ok", "txn", "[[:send 3 [0 9]] [:send 4 [1 9]]]"),
		o(7, 3, "ok", "txn", "[[:send 3 [1 8]] [:send 4 [0 8]]]"),
		o(9, 4, "ok", "poll", "[[:poll {1 [[1 2]], 2 [[0 2] [1 1]], 3 [[0 9] [1 8]], 4 [[0 8] [1 9]]}]]"))
	g0 := vs[NameG0]
	if len(g0.Anomalies) != 2 || !strings.Contains(g0.Anomalies[0].Description, "cycle #1 -> #3 -> #1") ||
		!strings.Contains(g0.Anomalies[1].Description, "cycle #5 -> #7 -> #5") {
		t.Errorf("G0: %s", g0)
	}
	if vs[NameG1c].Result != checkers.ResultOK {
		t.Errorf("G1c implied by G0, not searched: %s", vs[NameG1c])
	}
	// Without the ww edges, the wr-only cycle is reported.
	if g1c := checkLines(t, Options{WWDeps: false},
		o(1, 0, "ok", "txn", "[[:send 1 [0 1]] [:poll {5 [[0 50]]}]]"),
		o(3, 1, "ok", "txn", "[[:send 5 [0 50]] [:poll {1 [[0 1]]}]]"))[NameG1c]; len(g1c.Anomalies) != 1 || !g1c.ContractBroken() {
		t.Errorf("G1c: %s", g1c)
	}
}

// TestEmptyTransactionGraph: a history with no txn, poll or send gives
// Elle's empty-transaction-graph: unknown (never ok), with one anomaly.
func TestEmptyTransactionGraph(t *testing.T) {
	vs := checkLines(t, Options{WWDeps: true},
		o(0, 0, "invoke", "assign", "[1]"),
		o(1, 0, "ok", "assign", "[1]"))
	e := vs[NameEmptyTransactionGraph]
	if e.Result != checkers.ResultUnknown || len(e.Anomalies) != 1 || e.Anomalies[0].Kind != NameEmptyTransactionGraph {
		t.Errorf("%s", e)
	}
	for _, n := range CycleNames {
		if vs[n].Result != checkers.ResultOK {
			t.Errorf("%s", vs[n])
		}
	}
}

// TestCycleBudget: a search that runs out of steps is unknown, not ok.
func TestCycleBudget(t *testing.T) {
	defer func(b int) { cycleBudget = b }(cycleBudget)
	cycleBudget = 0
	v := byName(Check(readTestdata(t, "g1c-wr.edn")))[NameG1c]
	if v.Result != checkers.ResultUnknown || len(v.Notes) == 0 || !strings.Contains(v.Notes[len(v.Notes)-1], "search incomplete") {
		t.Errorf("%s", v)
	}
}

// TestReadHistoryJepsenValues: the forms Jepsen writes that are not plain
// integers: keyword and string values, BigInts, and lines with Java
// objects (#object[Cls 0x1f2a ...]), ##Inf and unknown tags.
func TestReadHistoryJepsenValues(t *testing.T) {
	h, err := ReadHistory(strings.NewReader(`{:type :invoke, :f :send, :value [[:send :x :a] [:send "k" "v"] [:send 3 2N]], :process 0, :index 0}
{:type :info, :f :send, :value [[:send :x :a] [:send "k" "v"] [:send 3 2N]], :process 0, :index 1, :error #object[java.net.SocketTimeoutException 0x1f2a3b4c "Read timed out"], :lag ##Inf}
{:type :ok, :f :poll, :value [[:poll {:x [[0 :a]], "k" [[4N "v"]], 3 [[0 2] [1 1.5] [2 #uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6"]]}]], :process 1, :index 2, :exception #error {:cause "boom", :via [{:type java.lang.Exception}]}}
{:type :info, :f :kill, :process :nemesis, :value #object[clojure.lang.Atom 0x6b "{:status :ready}"]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Ops) != 3 || h.Skipped != 1 {
		t.Fatalf("ops %d skipped %d", len(h.Ops), h.Skipped)
	}
	send := h.Ops[1].Mops
	if send[0].Pair.Value != (Value{S: ":a", Str: true, Keyword: true}) || send[1].Pair.Value != (Value{S: "v", Str: true}) || send[2].Pair.Value != (Value{N: 2}) {
		t.Errorf("sent values %+v", send)
	}
	var got []string
	for _, kp := range h.Ops[2].Mops[0].Reads {
		for _, p := range kp.Pairs {
			got = append(got, kp.Key.String()+"@"+itoa(p.Offset)+"="+p.Value.String())
		}
	}
	if s := strings.Join(got, " "); s != `3@0=2 3@1=1.5 3@2=#uuid "f81d4fae-7dec-11d0-a765-00a0c91e6bf6" :x@0=:a "k"@4="v"` {
		t.Errorf("reads %s", s)
	}
	vs := byName(Check(h))
	for _, n := range []string{NameG1a, NameLostWrite, NameInconsistentOffsets} {
		if vs[n].Result != checkers.ResultOK {
			t.Errorf("%s", vs[n])
		}
	}
	if u := vs[NameUnseen]; u.Result != checkers.ResultOK {
		t.Errorf("%s", u)
	}
	// Bad lines are still errors, naming the line.
	for _, c := range []struct{ text, want string }{
		{`{:type :ok, :f :send, :value [[:send 1 [0 [1 2]]]], :process 0}`, "line 1: micro-op 0 [:send 1 [0 [1 2]]]: value [1 2]: want an integer, a string or a keyword"},
		{`{:type :ok, :f :send, :value [[:send 1 nil]], :process 0}`, "sent value nil: want an integer"},
		{`{:type :ok, :f :poll, :error #object[Foo 0x1f "x"}`, "line 1: malformed EDN"},
	} {
		if _, err := ReadHistory(strings.NewReader(c.text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}
