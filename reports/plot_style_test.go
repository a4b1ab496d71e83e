package reports

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/plot"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

func tickLabels(a plot.Axis) []string {
	var out []string
	for _, t := range a.Tick.Marker.Ticks(a.Min, a.Max) {
		if t.Label != "" {
			out = append(out, t.Label)
		}
	}
	return out
}

// TestIntegerAxisGetsIntegerTicks: a numeric grid axis is ticked at the
// grid's values ($clients=2,4,8: never 2.5), a long integer axis at
// integers only.
func TestIntegerAxisGetsIntegerTicks(t *testing.T) {
	sw := &sweep.Spec{Scenario: "swarm", Variant: "kip279-safe", Seeds: 3, Grid: []sweep.Axis{{Key: "$clients", Values: []string{"2", "4", "8"}}}}
	p, _, err := LossPlot(sw, sweep.Aggregate(sw, fakeRecords(sw)))
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]string{"2", "4", "8"}, tickLabels(p.X)); d != "" {
		t.Errorf("x ticks (-want +got):\n%s", d)
	}
	var many []string
	for i := 1; i <= 20; i++ {
		many = append(many, strconv.Itoa(i))
	}
	for _, tk := range gridTicker(many).Ticks(0.5, 20.5) {
		if _, err := strconv.Atoi(tk.Label); tk.Label != "" && err != nil || tk.Value != float64(int(tk.Value)) {
			t.Errorf("tick %+v on an integer axis", tk)
		}
	}
}

// TestPointsSitOffTheFrame: the loss and trade-off plots pad their axes
// below 0 (a point at 0 loss is not drawn on the frame) without showing a
// negative tick.
func TestPointsSitOffTheFrame(t *testing.T) {
	sw := &sweep.Spec{Scenario: "swarm", Variant: "kip279-safe", Seeds: 3, Grid: []sweep.Axis{{Key: "$crash", Values: []string{"0", "0.1", "0.3"}}}}
	rows := sweep.Aggregate(sw, fakeRecords(sw))
	for _, draw := range []func(*sweep.Spec, []sweep.Row) (*plot.Plot, PlotInfo, error){LossPlot, TradeoffPlot} {
		p, info, err := draw(sw, rows)
		if err != nil {
			t.Fatal(err)
		}
		axes := map[string]plot.Axis{"y": p.Y}
		if info.Kind == "scatter" {
			axes["x"] = p.X
		}
		for name, a := range axes {
			if a.Min >= 0 {
				t.Errorf("%s: %s axis starts at %v: points at 0 sit on the frame", info.Name, name, a.Min)
			}
			for _, l := range tickLabels(a) {
				if strings.HasPrefix(l, "-") {
					t.Errorf("%s: %s axis shows the tick %s", info.Name, name, l)
				}
			}
		}
	}
}

// TestTradeoffPlotLabelsEachPointAndDistinctColours: every configuration
// gets its own colour and shape and its label beside its point (placed
// so labels never collide: TestPlotsReadAtAGlance), not a legend that
// took most of the picture.
func TestTradeoffPlotLabelsEachPointAndDistinctColours(t *testing.T) {
	sw := &sweep.Spec{Scenario: "swarm", Variant: "kip279-safe", Seeds: 3, Grid: []sweep.Axis{
		{Key: "variant", Values: []string{"kip279-safe", "kip101-safe", "hw-unsafe"}}, {Key: "$crash", Values: []string{"0", "0.2", "0.4"}}}}
	rows := sweep.Aggregate(sw, fakeRecords(sw))
	_, info, err := TradeoffPlot(sw, rows)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, r := range rows {
		want = append(want, strings.Join(r.Config, " "))
	}
	if info.pointLabels == nil || len(info.labels) > 0 {
		t.Fatalf("trade-off plot: point labels %v, legend %v", info.pointLabels, info.labels)
	}
	if d := cmp.Diff(want, info.pointLabels.labels); d != "" {
		t.Errorf("point labels (-want +got):\n%s", d)
	}
	type style struct{ c, s string }
	seen := map[style]int{}
	for i := 0; i < 70; i++ {
		st := style{fmtColor(i), fmtShape(i)}
		if j, ok := seen[st]; ok {
			t.Fatalf("series %d and %d share colour and shape", j, i)
		}
		seen[st] = i
	}
	for i := 0; i < len(palette); i++ {
		for j := 0; j < i; j++ {
			if seriesColor(i) == seriesColor(j) {
				t.Errorf("series %d and %d share a colour", i, j)
			}
		}
	}
	dir := t.TempDir()
	if _, err := WriteSweepPlots(dir, sw, rows); err != nil {
		t.Fatal(err)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "tradeoff.svg"))
	for _, l := range want {
		if !strings.Contains(string(svg), l) {
			t.Errorf("tradeoff.svg lacks the point label %q", l)
		}
	}
}

func fmtColor(i int) string {
	r, g, b, _ := seriesColor(i).RGBA()
	return strconv.Itoa(int(r>>8)) + "," + strconv.Itoa(int(g>>8)) + "," + strconv.Itoa(int(b>>8))
}

func fmtShape(i int) string { return strconv.Itoa(i % 7) }
