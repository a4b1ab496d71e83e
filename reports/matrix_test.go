package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/matrix"
)

func TestMatrixTableAndMarkdown(t *testing.T) {
	rows := []matrix.Row{
		{Scenario: "a", Version: "0.10.2", Status: matrix.StatusRan, Runs: 5, RunsWithLoss: 2, PRunLoss: 0.4, RunsDiverged: 1, RunsLivenessFailed: 1, RunsBug: 2},
		{Scenario: "a", Version: "4.0", Status: "n/a: no manual controller in KRaft"},
		{Scenario: "long-name", Version: "0.10.2", Status: matrix.StatusRan, Runs: 5, RunsSkipped: 5, RunsWithLoss: 5, PRunLoss: 1},
		{Scenario: "long-name", Version: "4.0", Status: matrix.StatusRan, Runs: 5, RunsCommittedLost: 3, RunsOffline: 2, RunsDiverged: 2},
	}
	var b bytes.Buffer
	if err := WriteMatrixTable(&b, rows); err != nil {
		t.Fatal(err)
	}
	want := "SCENARIO   0.10.2        4.0        \n" +
		"a          2/5 D1 L1 B2  n/a        \n" +
		"long-name  5/5 S5        0/5 C3 D2 O2\n"
	if got := b.String(); !strings.HasPrefix(got, want) {
		t.Errorf("table:\n%s\nwant:\n%s", got, want)
	}
	b.Reset()
	if err := WriteMatrixMarkdown(&b, &matrix.Spec{Seeds: 5}, rows); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"| scenario | 0.10.2 | 4.0 |", "| a | 2/5 D1 L1 B2 | n/a |", "- a on 4.0: no manual controller in KRaft"} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("matrix.md lacks %q:\n%s", s, b.String())
		}
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
