package checkers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestHistoryFileRoundTrip: a history written and read back judges the
// same: KIP-101's loss is still found, and the invariants verdict the run
// recorded is reported as recorded.
func TestHistoryFileRoundTrip(t *testing.T) {
	h, f := kip101Scenario1()
	h.Producers = []Producer{{Process: "p1", Idempotent: true, MaxInFlight: 5, Retries: 3}}
	h.Consumers = []Consumer{{Process: "c1", Group: "g", Semantics: AtLeastOnce}}
	h.Ops = append(h.Ops, poll(2, "c1", 10*ms, 11*ms, 0, Record{Offset: 0, Value: "m1"}))
	inv := verdict(NameInvariants, []Anomaly{{Kind: "hw-above-leo", Description: "b0"}}, false)
	var buf bytes.Buffer
	if err := WriteHistoryFile(&buf, HistoryFile{Source: "test seed 1", History: h, Final: f, Invariants: &inv}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"Kind":"send"`) || !strings.Contains(buf.String(), `"Outcome":"ok"`) {
		t.Fatalf("enumerations should be spelled as words:\n%s", buf.String())
	}
	got, err := ReadHistoryFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got.Source != "test seed 1" {
		t.Fatalf("source = %q", got.Source)
	}
	if diff := cmp.Diff(h, got.History); diff != "" {
		t.Fatalf("history differs (-wrote +read):\n%s", diff)
	}
	if diff := cmp.Diff(f, got.Final); diff != "" {
		t.Fatalf("final differs (-wrote +read):\n%s", diff)
	}
	vs := CheckFile(got, Options{SkipLinearizability: true})
	byName := map[string]Verdict{}
	for _, v := range vs {
		byName[v.Checker] = v
	}
	mustResult(t, byName[NameAckedLoss], ResultViolation)
	mustResult(t, byName[NameInvariants], ResultViolation)
	if a := onlyAnomaly(t, byName[NameAckedLoss]); a.Value != "m2" {
		t.Fatalf("lost %s, want m2", a)
	}
}

// TestHistoryFileWithoutInvariants: no recorded monitor verdict means the
// invariants checker says unknown, never ok.
func TestHistoryFileWithoutInvariants(t *testing.T) {
	h, f := kip101Scenario1()
	f.Partitions[0].Replicas[0] = replica(0, Leader, 1, 2, "m1", "m2")
	var buf bytes.Buffer
	if err := WriteHistoryFile(&buf, HistoryFile{History: h, Final: f}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadHistoryFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range CheckFile(got, Options{SkipLinearizability: true}) {
		switch v.Checker {
		case NameInvariants:
			mustResult(t, v, ResultUnknown)
		case NameAckedLoss, NameDivergence:
			mustResult(t, v, ResultOK)
		}
	}
}

func TestHistoryFileBadInput(t *testing.T) {
	header := `{"kafkasim_history":1}` + "\n"
	final := `{"final":{"Partitions":null,"Facts":{}}}` + "\n"
	op := func(s string) string { return `{"op":` + s + "}\n" }
	cases := []struct{ name, file, want string }{
		{"empty", "", "empty file"},
		{"no header", final, "line 1: want the header"},
		{"future version", `{"kafkasim_history":2}` + "\n" + final, "version 2"},
		{"no final", header, "no final line"},
		{"two finals", header + final + final, "line 3: a second final line"},
		{"unknown key", header + `{"opp":{}}` + "\n" + final, `line 2: json: unknown field "opp"`},
		{"two keys", header + `{"op":{"Kind":"send","Outcome":"ok"},"final":{}}` + "\n", "line 2: want exactly one of"},
		{"bad kind", header + op(`{"Kind":"produce","Outcome":"ok"}`), `kind "produce": want one of send, poll`},
		{"bad outcome", header + op(`{"Kind":"send","Outcome":"maybe"}`), `outcome "maybe": want one of pending, ok, fail, info`},
		{"pending", header + op(`{"Kind":"send"}`), "line 2: op #0 is pending"},
		{"no kind", header + op(`{"Outcome":"ok"}`), "line 2: op has no kind"},
		{"index gap", header + op(`{"Index":1,"Kind":"send","Outcome":"ok"}`), "line 2: op index 1, want 0"},
		{"unknown op field", header + op(`{"Kind":"send","Outcome":"ok","Colour":"red"}`), `unknown field "Colour"`},
	}
	for _, c := range cases {
		_, err := ReadHistoryFile(strings.NewReader(c.file))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// TestHistoryFileTransactions: a run's transaction history travels in the
// file, and check judges it as the run did.
func TestHistoryFileTransactions(t *testing.T) {
	th := txnClean()
	th.Final[0].Transactional = true
	th.Txns[1].Outcome = TxnCommitted // a2 is under an ABORT marker: a lost committed write
	var buf bytes.Buffer
	if err := WriteHistoryFile(&buf, HistoryFile{Final: Final{}, Transactions: &th}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadHistoryFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(th, *got.Transactions); diff != "" {
		t.Fatalf("transactions differ (-wrote +read):\n%s", diff)
	}
	vs := CheckFile(got, Options{})
	last := vs[len(vs)-1]
	if last.Checker != NameTransactions || last.Result != ResultViolation || last.Anomalies[0].Kind != KindLostCommittedWrite {
		t.Fatalf("last verdict %s %s %v", last.Checker, last.Result, last.Anomalies)
	}
	if vs[0].Result != ResultUnknown {
		t.Fatalf("linearizability %s, want unknown: no operation outside the transactions", vs[0].Result)
	}
}
