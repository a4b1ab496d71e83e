package bench

// This file compares a measurement with a baseline the way benchstat does
// (golang.org/x/perf): per workload and figure, the median of the runs
// with its confidence interval on each side, and the change of the
// medians where a Mann-Whitney U test says the two sets of runs differ.
// The statistics are benchstat's own packages (benchmath for the median,
// its interval and the test; benchunit for the scaled numbers); only the
// layout is ours, since benchstat's table code is internal to its command.

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// Confidence is the level of the interval printed after ±.
// NB: benchstat's default is 0.95, which needs 6 runs for a finite
// interval of the median; 0.9 gives one from 5 (`-count 5`).
const Confidence = 0.9

// metric is one figure of a run, as a comparison row shows it.
type metric struct {
	// name labels the row; %s stands for the workload's unit.
	name  string
	class benchunit.Class
	// percent shows the value (a fraction) as a percentage.
	percent bool
	value   func(RunFigures) float64
}

var comparedFigures = []metric{
	{name: "sec/run", value: func(f RunFigures) float64 { return f.WallMs / 1000 }},
	{name: "sim/wall", value: func(f RunFigures) float64 { return f.Speedup }},
	{name: "events/s", value: func(f RunFigures) float64 { return f.EventsPerS }},
	{name: "runs/s", value: func(f RunFigures) float64 { return f.RunsPerS }},
	{name: "allocs/%s", value: func(f RunFigures) float64 { return f.AllocsPerRecord }},
	{name: "B/%s", class: benchunit.Binary, value: func(f RunFigures) float64 { return f.BytesPerRecord }},
	{name: "peak-heap-B", class: benchunit.Binary, value: func(f RunFigures) float64 { return f.PeakHeapMB * (1 << 20) }},
	{name: "of-bare-loop", percent: true, value: func(f RunFigures) float64 { return f.VsBareLoop }},
}

// WriteComparison writes cur beside base (read from baseName), workload by
// workload in cur's order and then the workloads only base has; notes
// (from ReadReports) follow the table. cur is this run's measurement when
// curName is "", else read from curName.
func WriteComparison(w io.Writer, base Report, baseName string, cur Report, curName string, notes []string) error {
	fmt.Fprintf(w, "baseline: %s: %s\n", baseName, base.Machine)
	side, column := "this run", "THIS RUN"
	if curName != "" {
		side, column = "the current file", "CURRENT"
		fmt.Fprintf(w, "current: %s: %s\n", curName, cur.Machine)
	} else {
		fmt.Fprintf(w, "this run: %s; %d run(s) per workload\n", cur.Machine, cur.Count)
	}
	fmt.Fprintf(w, "each figure: the median of the runs ± its %.0f%% confidence interval; vs baseline: the change of the medians, or ~ where a Mann-Whitney U test finds no difference (p > %.2f), as benchstat computes them\n\n",
		100*Confidence, benchmath.DefaultThresholds.CompareAlpha)
	var fn footnotes
	var table bytes.Buffer
	tw := tabwriter.NewWriter(&table, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "WORKLOAD\tFIGURE\tBASELINE\t%s\tVS BASELINE\n", column)
	inBase := map[string]Result{}
	for _, r := range base.Results {
		inBase[r.Name] = r
	}
	inCur := map[string]bool{}
	var curOnly, baseOnly []string
	for _, c := range cur.Results {
		inCur[c.Name] = true
		b, ok := inBase[c.Name]
		if !ok {
			curOnly = append(curOnly, c.Name)
			continue
		}
		if b.What != c.What {
			notes = append(notes, fmt.Sprintf("%s is a different workload in the baseline: %q, now %q", c.Name, b.What, c.What))
		}
		name := c.Name
		for _, m := range comparedFigures {
			bv, cv := values(b, m), values(c, m)
			if bv == nil && cv == nil {
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", name, strings.ReplaceAll(m.name, "%s", c.Unit), compareRow(m, bv, cv, &fn))
			name = ""
		}
	}
	for _, b := range base.Results {
		if !inCur[b.Name] {
			baseOnly = append(baseOnly, b.Name)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// NB: tabwriter pads a row's empty last cells; trimmed, no line ends
	// in spaces.
	for _, line := range strings.Split(strings.TrimSuffix(table.String(), "\n"), "\n") {
		fmt.Fprintln(w, strings.TrimRight(line, " "))
	}
	if len(curOnly) > 0 {
		fmt.Fprintf(w, "only in %s: %s\n", side, strings.Join(curOnly, ", "))
	}
	if len(baseOnly) > 0 {
		fmt.Fprintf(w, "only in the baseline: %s\n", strings.Join(baseOnly, ", "))
	}
	for i, msg := range fn {
		fmt.Fprintf(w, "%s %s\n", superscript(i+1), msg)
	}
	for _, n := range notes {
		fmt.Fprintf(w, "NB: %s\n", n)
	}
	return nil
}

// values are r's runs' figures of m, or nil when all are zero (a figure
// the workload does not have).
func values(r Result, m metric) []float64 {
	var vs []float64
	nonzero := false
	for _, f := range r.Samples() {
		v := m.value(f)
		nonzero = nonzero || v != 0
		vs = append(vs, v)
	}
	if !nonzero {
		return nil
	}
	return vs
}

// compareRow is the BASELINE, THIS RUN (or CURRENT) and VS BASELINE cells of one
// figure; a side without it shows "-".
func compareRow(m metric, bv, cv []float64, fn *footnotes) string {
	var bs, cs *benchmath.Sample
	var bsum, csum benchmath.Summary
	if bv != nil {
		bs = benchmath.NewSample(bv, &benchmath.DefaultThresholds)
		bsum = benchmath.AssumeNothing.Summary(bs, Confidence)
	}
	if cv != nil {
		cs = benchmath.NewSample(cv, &benchmath.DefaultThresholds)
		csum = benchmath.AssumeNothing.Summary(cs, Confidence)
	}
	// NB: each cell is scaled on its own, not to a common scale as
	// benchstat does: a baseline from another machine or another
	// workload can differ by orders of magnitude.
	cell := func(s *benchmath.Sample, sum benchmath.Summary) string {
		if s == nil {
			return "-"
		}
		center := benchunit.Scale(sum.Center, m.class)
		if m.percent {
			center = fmt.Sprintf("%.1f%%", 100*sum.Center)
		}
		return center + " ± " + sum.PctRangeString() + fn.mark(s.Warnings, sum.Warnings)
	}
	delta := ""
	if bs != nil && cs != nil {
		c := benchmath.AssumeNothing.Compare(bs, cs)
		delta = fmt.Sprintf("%s (%s)%s", c.FormatDelta(bsum.Center, csum.Center), c, fn.mark(c.Warnings))
	}
	return cell(bs, bsum) + "\t" + cell(cs, csum) + "\t" + delta
}

// footnotes are benchmath's warnings, numbered in order of first use.
type footnotes []string

// mark is the superscript numbers of warns' footnotes, added as needed.
func (f *footnotes) mark(warns ...[]error) string {
	var b strings.Builder
	for _, ws := range warns {
		for _, w := range ws {
			i := 0
			for i < len(*f) && (*f)[i] != w.Error() {
				i++
			}
			if i == len(*f) {
				*f = append(*f, w.Error())
			}
			b.WriteString(superscript(i + 1))
		}
	}
	return b.String()
}

// superscript writes n in superscript digits, as benchstat marks its
// footnotes.
func superscript(n int) string {
	const digits = "⁰¹²³⁴⁵⁶⁷⁸⁹"
	d := []rune(digits)
	s := ""
	for ; n > 0; n /= 10 {
		s = string(d[n%10]) + s
	}
	return s
}
