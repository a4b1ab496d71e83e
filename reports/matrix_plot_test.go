package reports

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/matrix"
)

// TestMatrixColoursByMeaning: a cell's colour says what its runs mean (a
// contract break is never the colour of a permitted loss, whatever the
// loss), the loss fraction deepens the colour within its meaning, and the
// picture carries a key naming the colours and the letters.
func TestMatrixColoursByMeaning(t *testing.T) {
	ran := func(lossy, runs int, set func(*matrix.Row)) matrix.Row {
		r := matrix.Row{Scenario: "s", Version: "3.9", Status: matrix.StatusRan, Runs: runs, RunsWithLoss: lossy, PRunLoss: float64(lossy) / float64(runs), Variant: "v"}
		if set != nil {
			set(&r)
		}
		return r
	}
	bug := func(r *matrix.Row) { r.RunsBug = 1 }
	cases := []struct {
		r    matrix.Row
		want meaning
	}{
		{ran(0, 5, nil), meaningOK},
		{ran(2, 5, nil), meaningPermitted},
		{ran(0, 5, bug), meaningBroken},
		{ran(5, 5, bug), meaningBroken},
		{ran(0, 5, func(r *matrix.Row) { r.RunsOffline = 2 }), meaningOffline},
		{ran(1, 5, func(r *matrix.Row) { r.RunsUnknown = 1 }), meaningUnknown},
		{ran(1, 5, func(r *matrix.Row) { r.RunsFailed = 1; r.RunsBug = 1 }), meaningBroken},
	}
	for _, c := range cases {
		if got := cellMeaning(c.r); got != c.want {
			t.Errorf("%s: %s, want %s", MatrixCellText(c.r), got.name, c.want.name)
		}
	}
	for _, lossy := range []int{0, 1, 3, 5} {
		if cellColour(ran(lossy, 5, bug)) == cellColour(ran(lossy, 5, nil)) {
			t.Errorf("at %d/5 a contract break has the colour of a permitted loss", lossy)
		}
	}
	// Deeper with more loss: each step moves away from the pale end.
	dist := func(r matrix.Row) int {
		c, m := cellColour(r), cellMeaning(r).pale
		return abs(int(c.R)-int(m.R)) + abs(int(c.G)-int(m.G)) + abs(int(c.B)-int(m.B))
	}
	for _, set := range []func(*matrix.Row){nil, bug} {
		prev := -1
		for lossy := 0; lossy <= 5; lossy++ {
			d := dist(ran(lossy, 5, set))
			if d <= prev {
				t.Errorf("%d/5: no deeper than %d/5", lossy, lossy-1)
			}
			prev = d
		}
	}
	dir := t.TempDir()
	rows := []matrix.Row{ran(2, 5, nil), ran(0, 5, bug)}
	rows[1].Version = "4.0"
	if err := WriteMatrixPlots(dir, &matrix.Spec{Seeds: 5}, rows); err != nil {
		t.Fatal(err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "matrix.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"contract broken (B)", "loss permitted by the contract", "offline by design (O)", "k/n: k of n runs lost", "runs diverged", "liveness failed"} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("matrix.svg's key lacks %q", want)
		}
	}
}

func abs(n int) int { return max(n, -n) }
