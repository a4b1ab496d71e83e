package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gonum.org/v1/plot"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

// fakeRecords makes records for every run of a sweep: loss grows with the
// first axis value's index, so every point has a rate and an interval.
func fakeRecords(sw *sweep.Spec) []sweep.RunRecord {
	var out []sweep.RunRecord
	for _, p := range sw.Points() {
		for s := 1; s <= sw.Seeds; s++ {
			r := sweep.RunRecord{Point: p.Index, Config: sw.Pairs(p), Seed: uint64(s), Acked: 100, AckedLost: p.Index * s % 7, Attempts: 120, Unavailable: 20 - p.Index}
			r.Latency.Add(int64(3e6 + s*1e5))
			out = append(out, r)
		}
	}
	return out
}

var plotFiles = []string{"loss.png", "loss.svg", "p_run_loss.png", "p_run_loss.svg", "tradeoff.png", "tradeoff.svg"}

func TestPlotsHaveOneSeriesPerOtherConfiguration(t *testing.T) {
	numeric := &sweep.Spec{Scenario: "swarm", Variant: "kip279-safe", Seeds: 3, Grid: []sweep.Axis{
		{Key: "variant", Values: []string{"kip279-safe", "hw-unsafe"}}, {Key: "$crash", Values: []string{"0", "0.1", "0.3"}}, {Key: "acks", Values: []string{"1", "all"}}}}
	categorical := &sweep.Spec{Scenario: "acks1-leader-crash", Variant: "acks1", Seeds: 3, Grid: []sweep.Axis{
		{Key: "acks", Values: []string{"1", "all"}}, {Key: "unclean.leader.election.enable", Values: []string{"false", "true"}}, {Key: "variant", Values: []string{"acks1", "acksall"}}}}
	for _, c := range []struct {
		sw       *sweep.Spec
		kind     string
		series   int
		tradeoff int
	}{{numeric, "lines", 4, 12}, {categorical, "bars", 4, 8}} {
		dir := t.TempDir()
		rows := sweep.Aggregate(c.sw, fakeRecords(c.sw))
		infos, err := WriteSweepPlots(dir, c.sw, rows)
		if err != nil {
			t.Fatal(err)
		}
		if len(infos) != 3 || infos[0].Kind != c.kind || infos[0].Series != c.series || infos[1].Name != "p_run_loss" ||
			infos[1].Kind != c.kind || infos[1].Series != c.series || infos[2].Series != c.tradeoff {
			t.Errorf("%s: plots %+v, want loss and p_run_loss as %s with %d series and %d trade-off points", c.sw.Scenario, infos, c.kind, c.series, c.tradeoff)
		}
		for _, name := range plotFiles {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil || len(b) < 1000 {
				t.Errorf("%s: %d bytes, %v", name, len(b), err)
			}
		}
		svg, _ := os.ReadFile(filepath.Join(dir, "loss.svg"))
		if !strings.Contains(string(svg), "loss") || !bytes.Contains(svg, []byte(c.sw.Grid[0].Key)) && c.kind == "bars" {
			t.Errorf("%s: loss.svg lacks its title or axis label", c.sw.Scenario)
		}
		// Drawing is deterministic: the same rows give the same bytes.
		again := t.TempDir()
		if _, err := WriteSweepPlots(again, c.sw, rows); err != nil {
			t.Fatal(err)
		}
		for _, name := range plotFiles {
			a, _ := os.ReadFile(filepath.Join(dir, name))
			b, _ := os.ReadFile(filepath.Join(again, name))
			if !bytes.Equal(a, b) {
				t.Errorf("%s differs between two drawings of the same rows", name)
			}
		}
	}
}

// TestPlotTitlesNameWhatIsPlotted: a title says what is plotted and which
// interval, and never names a variant the grid sweeps (it would be the
// variant of no particular line).
func TestPlotTitlesNameWhatIsPlotted(t *testing.T) {
	swept := &sweep.Spec{Scenario: "swarm", Variant: "kip279-safe", Seeds: 4, Grid: []sweep.Axis{
		{Key: "variant", Values: []string{"kip279-safe", "hw-unsafe"}}, {Key: "$crash", Values: []string{"0.1", "0.3"}}}}
	fixed := &sweep.Spec{Scenario: "swarm", Variant: "kip279-safe", Seeds: 4, Grid: []sweep.Axis{
		{Key: "$crash", Values: []string{"0.1", "0.3"}}}}
	for _, c := range []struct {
		sw      *sweep.Spec
		variant bool
	}{{swept, false}, {fixed, true}} {
		rows := sweep.Aggregate(c.sw, fakeRecords(c.sw))
		for _, draw := range []struct {
			f    func(*sweep.Spec, []sweep.Row) (*plot.Plot, PlotInfo, error)
			want []string
		}{
			{LossPlot, []string{"acknowledged-record loss rate (pooled) against $crash", "95% percentile bootstrap interval over seeds", "4 seeds"}},
			{RunLossPlot, []string{"probability that a run loses an acknowledged record", "95% Wilson interval over runs"}},
			{TradeoffPlot, []string{"loss rate (pooled) against unavailability (pooled)", "bootstrap intervals over seeds"}},
		} {
			p, info, err := draw.f(c.sw, rows)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range draw.want {
				if !strings.Contains(p.Title.Text, w) {
					t.Errorf("%s title %q lacks %q", info.Name, p.Title.Text, w)
				}
			}
			if strings.Contains(p.Title.Text, "kip279-safe") != c.variant {
				t.Errorf("%s title %q: names the variant %v, want %v (variant swept: %v)", info.Name, p.Title.Text, !c.variant, c.variant, !c.variant)
			}
		}
	}
}
