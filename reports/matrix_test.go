package reports

import (
	"bytes"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/matrix"
)

func TestMatrixTableAndMarkdown(t *testing.T) {
	rows := []matrix.Row{
		{Scenario: "a", Version: "0.10.2", Status: matrix.StatusRan, Runs: 5, RunsWithLoss: 2, PRunLoss: 0.4, RunsDiverged: 1, RunsLivenessFailed: 1, RunsBug: 2,
			Variant: "unclean", VariantFrom: matrix.VariantFirst, Settings: []string{"unclean.leader.election.enable=true"}},
		{Scenario: "a", Version: "4.0", Status: "n/a: no manual controller in KRaft", Variant: "unclean", VariantFrom: matrix.VariantFirst, Settings: []string{"unclean.leader.election.enable=true"}},
		{Scenario: "long-name", Version: "0.10.2", Status: matrix.StatusRan, Runs: 5, RunsSkipped: 5, RunsWithLoss: 5, PRunLoss: 1, Variant: "default"},
		{Scenario: "long-name", Version: "4.0", Status: matrix.StatusRan, Runs: 5, RunsCommittedLost: 3, RunsOffline: 2, RunsDiverged: 2, Variant: "default"},
	}
	var b bytes.Buffer
	if err := WriteMatrixTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := "SCENARIO   0.10.2        4.0        \n" +
		"a          2/5 D1 L1 B2  n/a        \n" +
		"long-name  5/5 S5        0/5 C3 D2 O2\n" +
		"rows ran as (the variant -variant names, else the scenario's first; its settings, -config and -set over them; the column's release over all):\n" +
		"  a          variant unclean (unclean.leader.election.enable=true)\n" +
		"  long-name  variant default\n"
	if got := b.String(); !strings.HasPrefix(got, want) {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	b.Reset()
	if err := WriteMatrixMarkdown(&b, &matrix.Spec{Seeds: 5}, rows); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| scenario | ran as | 0.10.2 | 4.0 |", "| a | variant unclean (unclean.leader.election.enable=true) | 2/5 D1 L1 B2 | n/a |",
		"- a on 4.0: no manual controller in KRaft", "its first, unless -variant names another (none named here)"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("matrix.md lacks %q:\n%s", s, b.String())
		}
	}
	b.Reset()
	if err := WriteMatrixCSV(&b, rows[:1]); err != nil {
		t.Fatal(err)
	}
	lines, err := csv.NewReader(&b).ReadAll()
	if err != nil || len(lines) != 2 {
		t.Fatalf("matrix.csv: %v %q", err, lines)
	}
	at := map[string]string{}
	for i, c := range lines[0] {
		at[c] = lines[1][i]
	}
	if at["variant"] != "unclean" || at["variant_from"] != "first" || at["settings"] != "unclean.leader.election.enable=true" || at["replaced_by_release"] != "" {
		t.Errorf("matrix.csv row %v", at)
	}
	long := matrix.Row{Scenario: "swarm", Variant: "kip279-safe", Settings: []string{"$acks=all", "min.insync.replicas=2", "unclean.leader.election.enable=false"}, Replaced: []string{"truncation=kip279"}}
	if got, want := rowLabel(long), "swarm\nvariant kip279-safe ($acks=all, min.insync.replicas=2,\n  unclean.leader.election.enable=false;\n  truncation=kip279 overridden by the release)"; got != want {
		t.Errorf("heat map label:\n%s\nwant:\n%s", got, want)
	}
	var png bytes.Buffer
	p := MatrixPlot(&matrix.Spec{Seeds: 5}, rows)
	wt, err := p.WriterTo(600, 300, "png")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := wt.WriteTo(&png); err != nil || png.Len() == 0 {
		t.Fatalf("heat map: %v", err)
	}
}
