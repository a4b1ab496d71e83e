package reports

// This file writes a mutants run's outputs: mutants.csv (one line per
// mutant, the control first), mutants.json (the plan, the rows and the
// detection curve), mutants.md (the table a README shows) and
// detection.{png,svg}, the fraction of mutants found against the seeds
// run. All are functions of the rows, so a merged run writes the same
// bytes as an unsharded one.

import (
	"encoding/csv"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"

	"github.com/kafkasim/kafkasim/scenarios/mutants"
)

// MutantsJSON is the document mutants.json holds.
type MutantsJSON struct {
	Plan *mutants.Spec `json:"plan"`
	Rows []mutants.Row `json:"rows"`
	// Curve[n-1] is the fraction of measured mutants first detected at a
	// seed <= n.
	Curve []float64 `json:"detection_curve"`
}

// WriteMutantsJSON writes mutants.json.
func WriteMutantsJSON(w io.Writer, sp *mutants.Spec, rows []mutants.Row) error {
	return writeIndentedJSON(w, MutantsJSON{Plan: sp, Rows: rows, Curve: mutants.Curve(rows, sp.Seeds)})
}

// WriteMutantRunsJSONL writes one run record per line.
func WriteMutantRunsJSONL(w io.Writer, recs []mutants.RunRecord) error {
	return writeJSONLines(w, recs)
}

func stdCell(n int) string {
	if n < 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// WriteMutantsCSV writes mutants.csv.
func WriteMutantsCSV(w io.Writer, rows []mutants.Row) error {
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"mutant", "layer", "equivalent", "targets", "runs", "seeds", "seeds_detected", "detection_rate", "detected",
		"checkers", "first_seed", "first_target", "seeds_to_detection_median", "seeds_to_detection_p90",
		"shrink_steps", "shrink_faults", "shrink_choices", "shrink_checker", "explore", "first_replay"})
	for _, r := range rows {
		first := ""
		if r.FirstSeed > 0 {
			first = strconv.FormatUint(r.FirstSeed, 10)
		}
		steps, faults, choices, checker := "", "", "", ""
		if s := r.Shrink; s != nil && s.Error == "" {
			steps, faults, choices, checker = strconv.Itoa(s.Steps), strconv.Itoa(s.FaultsAfter), strconv.Itoa(s.DeviatedAfter), s.Checker
		}
		_ = cw.Write([]string{r.Mutant, r.Layer, r.Equivalent, strings.Join(r.Targets, " "), strconv.Itoa(r.Runs), strconv.Itoa(r.Seeds),
			strconv.Itoa(r.SeedsDetected), strconv.FormatFloat(r.DetectionRate, 'f', 4, 64), strconv.FormatBool(r.Detected),
			strings.Join(r.Checkers, " "), first, r.FirstTarget, stdCell(r.SeedsToDetectionMedian), stdCell(r.SeedsToDetectionP90),
			steps, faults, choices, checker, exploreCell(r.Explore), r.FirstReplay})
	}
	cw.Flush()
	return cw.Error()
}

func exploreCell(es []mutants.ExploreResult) string {
	var out []string
	for _, e := range es {
		out = append(out, e.String())
	}
	return strings.Join(out, ", ")
}

// MutantsSummary counts what the goal of issue 29 asks of the rows.
type MutantsSummary struct {
	Measured, Equivalent, Detected int
	// ControlBreaks counts the control's seeds with a contract break, and
	// ControlExplored the control's explorations that found a violation.
	ControlBreaks, ControlExplored int
	// MedianOK counts detected mutants whose median seeds-to-detection is
	// at most 10; ShrunkOK those shrunk to at most 20 steps.
	MedianOK, ShrunkOK, Shrunk int
	Undetected                 []string
}

// SummarizeMutants counts the rows against the goal.
func SummarizeMutants(rows []mutants.Row) MutantsSummary {
	var s MutantsSummary
	for _, r := range rows {
		switch {
		case r.Mutant == mutants.Control:
			s.ControlBreaks = r.SeedsDetected
			for _, e := range r.Explore {
				if e.Found {
					s.ControlExplored++
				}
			}
			continue
		case r.Equivalent != "":
			s.Equivalent++
			continue
		}
		s.Measured++
		if !r.Detected {
			s.Undetected = append(s.Undetected, r.Mutant)
			continue
		}
		s.Detected++
		if r.SeedsToDetectionMedian <= 10 {
			s.MedianOK++
		}
		if r.Shrink != nil && r.Shrink.Error == "" {
			s.Shrunk++
			if r.Shrink.Steps <= 20 {
				s.ShrunkOK++
			}
		}
	}
	return s
}

// WriteMutantsMarkdown writes mutants.md: the goal's counts and one table
// row per mutant.
func WriteMutantsMarkdown(w io.Writer, sp *mutants.Spec, rows []mutants.Row) error {
	s := SummarizeMutants(rows)
	fmt.Fprintf(w, "# Detection power: %d mutants × %d seeds\n\n", s.Measured+s.Equivalent, sp.Seeds)
	fmt.Fprintf(w, "- detected: **%d of %d** non-equivalent mutants within %d seeds", s.Detected, s.Measured, sp.Seeds)
	if len(s.Undetected) > 0 {
		fmt.Fprintf(w, " (missed: %s)", strings.Join(s.Undetected, ", "))
	}
	fmt.Fprintf(w, "\n- median seeds-to-detection ≤ 10: %d of %d detected\n", s.MedianOK, s.Detected)
	if sp.ShrinkRuns > 0 {
		fmt.Fprintf(w, "- shrunk to ≤ 20 steps (faults + choices off the default): %d of %d shrunk (≤ %d runs each)\n", s.ShrunkOK, s.Shrunk, sp.ShrinkRuns)
	}
	fmt.Fprintf(w, "- control (no mutant): %d seeds with a contract break", s.ControlBreaks)
	if sp.ExploreRuns > 0 {
		fmt.Fprintf(w, "; %d explorations with a violation", s.ControlExplored)
	}
	fmt.Fprintln(w)
	if s.Equivalent > 0 {
		fmt.Fprintf(w, "- equivalent (nothing observable changes): %d\n", s.Equivalent)
	}
	fmt.Fprintf(w, "\n| mutant | layer | detected (seeds) | first seed | seeds to detection median / p90 | checkers (runs) | shrunk steps | explore runs to violation |\n")
	fmt.Fprintf(w, "| --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for _, r := range rows {
		det := fmt.Sprintf("%d / %d", r.SeedsDetected, r.Seeds)
		if r.Equivalent != "" {
			det = "equivalent: " + r.Equivalent
		}
		first, s2d := "", ""
		if r.FirstSeed > 0 {
			first = fmt.Sprintf("%d (%s)", r.FirstSeed, r.FirstTarget)
			s2d = fmt.Sprintf("%d / %d", r.SeedsToDetectionMedian, r.SeedsToDetectionP90)
		}
		sh := ""
		if r.Shrink != nil {
			sh = strconv.Itoa(r.Shrink.Steps)
			if r.Shrink.Error != "" {
				sh = "not shrunk"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", r.Mutant, r.Layer, det, first, s2d,
			strings.Join(r.Checkers, ", "), sh, exploreCell(r.Explore))
	}
	return nil
}

// DetectionPlot draws the detection curve: the fraction of measured
// mutants found against the number of seeds run (from seed 1).
func DetectionPlot(sp *mutants.Spec, rows []mutants.Row) (*plot.Plot, error) {
	curve := mutants.Curve(rows, sp.Seeds)
	p := plot.New()
	s := SummarizeMutants(rows)
	p.Title.Text = fmt.Sprintf("Detection curve: fraction of %d mutants found within n seeds", s.Measured)
	p.X.Label.Text = "seeds run (1..n)"
	p.Y.Label.Text = "fraction of mutants detected"
	p.Y.Min, p.Y.Max = 0, 1
	pts := make(plotter.XYs, len(curve))
	for i, f := range curve {
		pts[i].X, pts[i].Y = float64(i+1), f
	}
	line, err := plotter.NewLine(pts)
	if err != nil {
		return nil, err
	}
	line.Color = seriesColor(0)
	line.Width = 2
	p.Add(line, plotter.NewGrid())
	return p, nil
}

// WriteDetectionPlot writes detection.png and detection.svg into dir.
func WriteDetectionPlot(dir string, sp *mutants.Spec, rows []mutants.Row) error {
	p, err := DetectionPlot(sp, rows)
	if err != nil {
		return err
	}
	for _, format := range []string{"png", "svg"} {
		path := filepath.Join(dir, "detection."+format)
		if err := WriteFileAtomic(path, func(w io.Writer) error { return writePlot(w, p, nil, format) }); err != nil {
			return err
		}
	}
	return nil
}
