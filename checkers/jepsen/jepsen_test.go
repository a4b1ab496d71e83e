package jepsen

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
)

func readTestdata(t *testing.T, name string) *History {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := ReadHistory(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return h
}

func byName(vs []checkers.Verdict) map[string]checkers.Verdict {
	m := map[string]checkers.Verdict{}
	for _, v := range vs {
		m[v.Checker] = v
	}
	return m
}

// TestJepsenAnomalies: each hand-written history shows exactly the Jepsen
// anomalies it was written to show (wantBroken outside Kafka's contract,
// wantPermitted within what Jepsen allows), with the wanted evidence, and
// every other verdict is ok (wantUnknown: unknown). Writes that interleave
// on a key are Jepsen's G0 (with :ww-deps), always permitted.
func TestJepsenAnomalies(t *testing.T) {
	for _, c := range []struct {
		file          string
		wantBroken    []string
		wantPermitted []string
		wantUnknown   []string
		evidence      string // in the first anomaly of the first wanted verdict
	}{
		{file: "clean.edn"},
		{file: "lost-write.edn", wantBroken: []string{NameLostWrite, NameUnseen},
			evidence: "lost-write key=1 value=2 offsets=[1]: sent by #3 (ok) at offset 1 (index 1); #9 read value 3 at offset 2 (index 2), but no ok poll or txn read it (ops #3, #9)"},
		{file: "duplicate.edn", wantBroken: []string{NameDuplicate}, wantPermitted: []string{NameG0},
			evidence: "duplicate key=1 value=1 offsets=[0 2]: at 2 offsets of the key (ops #1, #7)"},
		{file: "poll-skip.edn", wantBroken: []string{NamePollSkip},
			evidence: "poll-skip key=1 offsets=[1]: process 1: #7 read up to value 1, then #9 started at 3, skipping 2 (delta 2) (ops #7, #9)"},
		{file: "poll-skip-subscribe.edn", wantPermitted: []string{NamePollSkip}},
		{file: "nonmonotonic-poll.edn", wantBroken: []string{NameNonmonotonicPoll},
			evidence: "nonmonotonic-poll key=1 offsets=[1 1]: process 1: #5 read up to value 2, then #7 started at 2 (delta 0) (ops #5, #7)"},
		{file: "nonmonotonic-send.edn", wantBroken: []string{NameNonmonotonicSend}, wantPermitted: []string{NameG0Process},
			evidence: "nonmonotonic-send key=1 offsets=[1 0]: process 0: #1 sent up to value 2, then #3 started at 1 (delta -1) (ops #1, #3)"},
		{file: "inconsistent-offsets.edn", wantBroken: []string{NameInconsistentOffsets},
			evidence: "inconsistent-offsets key=1 offsets=[0]: offset 0 (index 0) holds values 1, 2 (ops #1, #3, #5, #7)"},
		{file: "G1a.edn", wantBroken: []string{NameG1a},
			evidence: "G1a key=1 value=1 offsets=[1]: #5 read it, but its send #1 failed (aborted read) (ops #1, #5)"},
		{file: "precommitted-read.edn", wantBroken: []string{NamePrecommittedRead}, wantUnknown: []string{NameEmptyTransactionGraph}},
		{file: "int-poll-skip.edn", wantBroken: []string{NameIntPollSkip},
			evidence: "int-poll-skip key=1 offsets=[1]: #7 read value 1 then 3, skipping 2 (delta 2) (ops #7)"},
		{file: "int-nonmonotonic-poll.edn", wantBroken: []string{NameIntNonmonotonicPoll}},
		{file: "int-send-skip.edn", wantPermitted: []string{NameIntSendSkip, NameG0}},
		{file: "int-nonmonotonic-send.edn", wantBroken: []string{NameIntNonmonotonicSend},
			evidence: "int-nonmonotonic-send key=1 offsets=[1 0]: #1 sent value 1 then 2 (delta -1) (ops #1)"},
		{file: "clean-txn.edn"},
		{file: "g0.edn", wantPermitted: []string{NameG0},
			evidence: "G0 offsets=[0 1 0 1]: cycle #2 -> #3 -> #2: #2 sent 10 to 1 at offset 0 before #3 sent 20 at offset 1 (ww); #3 sent 20 to 2 at offset 0 before #2 sent 10 at offset 1 (ww) (ops #2, #3); permitted"},
		{file: "g1c-wr.edn", wantBroken: []string{NameG1c},
			evidence: "G1c offsets=[0 0]: cycle #2 -> #3 -> #2: #2 sent :a to :x at offset 0 which was polled by #3 (wr); #3 sent :b to :y at offset 0 which was polled by #2 (wr) (ops #2, #3); no ww edge"},
		{file: "g1c-ww.edn", wantPermitted: []string{NameG1c},
			evidence: "G1c offsets=[0 1 2]: cycle #2 -> #3 -> #2: #2 sent 5 to 1 at offset 0 which was polled by #3 (wr); #3 sent 6 to 2 at offset 1 before #2 sent 7 at offset 2 (ww) (ops #2, #3); permitted"},
		{file: "g0-realtime.edn", wantPermitted: []string{NameG0Realtime},
			evidence: "G0-realtime offsets=[0 1]: cycle #1 -> #3 -> #1: #1 completed before #3 was invoked (#2) (realtime); #3 sent 2 to 1 at offset 0 before #1 sent 1 at offset 1 (ww) (ops #1, #3); permitted"},
		{file: "g1c-realtime.edn", wantBroken: []string{NameG1cRealtime},
			evidence: "G1c-realtime offsets=[0]: cycle #1 -> #3 -> #1: #1 completed before #3 was invoked (#2) (realtime); #3 sent 3 to 1 at offset 0 which was polled by #1 (wr) (ops #1, #3); no ww edge: a read saw a write that the realtime order puts after it"},
		{file: "g1c-process.edn", wantBroken: []string{NameG1cProcess},
			evidence: "G1c-process offsets=[0]: cycle #1 -> #3 -> #1: process 0 ran #1 before #3 (process); #3 sent 3 to 1 at offset 0 which was polled by #1 (wr) (ops #1, #3); no ww edge: a read saw a write that the process order puts after it"},
		{file: "unseen.edn", wantBroken: []string{NameUnseen},
			evidence: "unseen unseen={1 1} offsets=[1]: 1 acknowledged value on 1 key never read by an ok poll or txn: key 1: 2 (offset 1, sent by #3); lost, or late (sent after the last polls caught up) (ops #3)"},
		{file: "unseen-read-nothing.edn", wantBroken: []string{NameUnseen},
			evidence: "unseen unseen={1 1} offsets=[1]: 1 acknowledged value on 1 key never read by an ok poll or txn: key 1: 2 (offset 1, sent by #3)"},
		{file: "unseen-unrecorded.edn", wantUnknown: []string{NameUnseen}},
		{file: "seen-unrecorded.edn"},
	} {
		t.Run(c.file, func(t *testing.T) {
			h := readTestdata(t, c.file)
			vs := Check(h)
			if len(vs) != len(Names) {
				t.Fatalf("%d verdicts, want %d", len(vs), len(Names))
			}
			for i, v := range vs {
				if v.Checker != Names[i] {
					t.Fatalf("verdict %d is %s, want %s", i, v.Checker, Names[i])
				}
			}
			m := byName(vs)
			want := map[string]string{}
			for _, n := range c.wantBroken {
				want[n] = "broken"
			}
			for _, n := range c.wantPermitted {
				want[n] = "permitted"
			}
			for _, n := range c.wantUnknown {
				want[n] = "unknown"
			}
			for _, v := range vs {
				got := "ok"
				switch {
				case v.Result == checkers.ResultViolation && v.ContractBroken():
					got = "broken"
				case v.Result == checkers.ResultViolation:
					got = "permitted"
				case v.Result == checkers.ResultUnknown:
					got = "unknown"
				}
				w := want[v.Checker]
				if w == "" {
					w = "ok"
				}
				if got != w {
					t.Errorf("%s: %s, want %s:\n%s", v.Checker, got, w, v)
				}
				for _, a := range v.Anomalies {
					if a.Kind != v.Checker || v.Checker != NameEmptyTransactionGraph && (len(a.Ops) == 0 || !strings.Contains(a.Description, "(ops ")) {
						t.Errorf("%s: anomaly without its Jepsen name or ops: %s", v.Checker, a)
					}
				}
			}
			if c.evidence != "" {
				first := m[append(c.wantBroken, c.wantPermitted...)[0]]
				if got := first.Anomalies[0].String(); !strings.HasPrefix(got, c.evidence) {
					t.Errorf("evidence:\n got %s\nwant %s", got, c.evidence)
				}
			}
			if u := m[NameUnseen]; u.Result == checkers.ResultViolation && (len(u.Notes) != 1 || !strings.Contains(u.Notes[0], "may be late rather than lost")) {
				t.Errorf("unseen notes %q", u.Notes)
			}
			if u := m[NameUnseen]; u.Result == checkers.ResultUnknown && (len(u.Notes) != 1 || !strings.Contains(u.Notes[0], "(#7) completed without a recorded result") ||
				!strings.Contains(u.Notes[0], "key 1: 2 (offset 1, sent by #3)")) {
				t.Errorf("unknown unseen notes %q", u.Notes)
			}
		})
	}
}

// TestJepsenReset: an assign that drops a key, and a :rebalance-log naming
// it, keep the skips of process 3 in poll-skip.edn and int-poll-skip.edn
// from being reported: only process 1's are.
func TestJepsenReset(t *testing.T) {
	for _, c := range []struct{ file, name string }{{"poll-skip.edn", NamePollSkip}, {"int-poll-skip.edn", NameIntPollSkip}} {
		v := byName(Check(readTestdata(t, c.file)))[c.name]
		if len(v.Anomalies) != 1 || !strings.Contains(v.Anomalies[0].Description, "#7") {
			t.Errorf("%s: want one %s, by process 1:\n%s", c.file, c.name, v)
		}
	}
}

// TestJepsenDeterministic: the verdicts print the same on every run (no
// map order reaches them).
func TestJepsenDeterministic(t *testing.T) {
	files, err := filepath.Glob("testdata/*.edn")
	if err != nil || len(files) == 0 {
		t.Fatal(files, err)
	}
	for _, f := range files {
		h := readTestdata(t, filepath.Base(f))
		want := render(Check(h))
		for i := 0; i < 20; i++ {
			if got := render(Check(h)); got != want {
				t.Fatalf("%s: run %d differs:\n%s\nwant\n%s", f, i, got, want)
			}
		}
	}
}

func render(vs []checkers.Verdict) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString(v.String() + "\n")
	}
	return b.String()
}

// TestUnjudgedNeverOK: the checkers a Jepsen history cannot feed are
// unknown, with a reason.
func TestUnjudgedNeverOK(t *testing.T) {
	vs := Unjudged()
	names := map[string]bool{}
	for _, v := range vs {
		names[v.Checker] = true
		if v.Result != checkers.ResultUnknown || len(v.Notes) == 0 || !strings.HasPrefix(v.Notes[0], "not judged: ") {
			t.Errorf("%s", v)
		}
	}
	for _, n := range []string{checkers.NameLinearizability, checkers.NameAckedLoss, checkers.NameDivergence, checkers.NameInvariants} {
		if !names[n] {
			t.Errorf("%s missing from Unjudged", n)
		}
	}
}

func TestReadHistoryBadInput(t *testing.T) {
	good := `{:type :ok, :f :send, :value [[:send 1 [0 1]]], :process 0, :index 1}` + "\n"
	for _, c := range []struct{ text, want string }{
		{good + "{:type :ok, :f :poll, :value [[:poll {1 [[0 1]]}]]\n", "line 2: malformed EDN"},
		{good + "\n" + `{:type :done, :f :poll, :process 0}`, "line 3: :type :done: want :invoke, :ok, :fail or :info"},
		{`{:f :poll, :process 0}`, "line 1: :type missing"},
		{`{:type :ok, :process 0}`, "line 1: :f missing"},
		{`{:type :ok, :f :poll, :process "p1"}`, `line 1: :process "p1": want an integer`},
		{`{:type :ok, :f :poll, :process 0, :index -1}`, "line 1: :index -1"},
		{`[{:type :ok}]`, "line 1: not a map"},
		{good + good + `{:type :ok, :f :send, :value [[:send 1 [0 x]]], :process 0}`, "line 3: micro-op 0 [:send 1 [0 x]]: value x: want an integer"},
		{`{:type :ok, :f :poll, :value [[:poll {1 [[0 1] 7]}]], :process 0}`, "line 1: micro-op 0 [:poll {1 [[0 1] 7]}]: key 1: 7: want an [offset v] pair"},
		{`{:type :ok, :f :txn, :value [[:append 1 2]], :process 0}`, "want a micro-op starting with :send or :poll"},
		{`{:type :ok, :f :poll, :value :x, :process 0}`, "want a vector of micro-ops"},
		{`{:type :ok, :f :assign, :value 3, :process 0}`, ":assign :value: 3: want a vector of keys"},
		{`{:type :ok} {:type :ok}`, "more than one EDN value"},
		{"; only a comment\n", "no client operations"},
		{`{:type :info, :f :kill, :process :nemesis}`, "no client operations"},
	} {
		_, err := ReadHistory(strings.NewReader(c.text))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.text, err, c.want)
		}
	}
}

func TestReadHistoryForms(t *testing.T) {
	text := `#jepsen.history.Op{:type :ok, :f :send, :value [[:send "k" [0 1]] [:send 2 [nil 3]]], :process 0, :index 4}
{:type :info, :f :poll, :process 1}
{:type :ok, :f :poll, :value [[:poll {2 [[0 3]], "k" [[0 1]]}]], :process 1, :rebalance-log [{:keys [2]}]}
{:type :info, :f :crash, :process 1}
{:type :info, :f :kill, :process :nemesis}
`
	h, err := ReadHistory(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Ops) != 4 || h.Skipped != 1 || h.Keys() != 2 {
		t.Fatalf("ops %d skipped %d keys %d", len(h.Ops), h.Skipped, h.Keys())
	}
	if op := h.Ops[0]; op.Ref() != "#4" || !op.Mops[0].Key.Str || op.Mops[1].Pair.HasOffset {
		t.Errorf("op 0: %+v", op)
	}
	if op := h.Ops[2]; op.Ref() != "line 3" || op.Mops[0].Reads[0].Key != (Key{N: 2}) || len(op.Rebalanced) != 1 {
		t.Errorf("op 2: %+v", op)
	}
}

func TestReadHistoryKeywordKeysAndSets(t *testing.T) {
	h, err := ReadHistory(strings.NewReader(`{:type :ok, :f :assign, :value #{:y :x 3}, :process 0}
{:type :ok, :f :send, :value [[:send :x [0 1]]], :process 0}
{:type :ok, :f :poll, :value [[:poll {:x [[0 1]]}]], :process 1}
`))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, k := range h.Ops[0].Keys {
		keys = append(keys, k.String())
	}
	if got := strings.Join(keys, " "); got != "3 :x :y" {
		t.Errorf("assign keys %q", got)
	}
	for _, v := range Check(h) {
		if v.Result != checkers.ResultOK {
			t.Errorf("%s", v)
		}
	}
}
