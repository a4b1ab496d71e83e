package reports

// This file renders a sweep's rows as CSV and JSON. Both are functions of
// the sweep and its runs only (no wall times, no map order), so a sweep,
// its rerun and the merge of its shards write the same bytes.

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"strconv"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

// sweepColumns are the CSV's columns after the grid's keys.
var sweepColumns = []string{"runs", "runs_failed", "runs_with_loss", "runs_bug", "runs_unknown", "acked", "lost",
	"loss_rate", "loss_ci_low", "loss_ci_high", "p_run_loss", "p_run_loss_low", "p_run_loss_high",
	"runs_diverged", "divergent_offsets", "attempts", "unavailable",
	"unavailability", "unavailability_ci_low", "unavailability_ci_high", "latency_p50_ms", "latency_p99_ms"}

func ftoa(f float64, prec int) string { return strconv.FormatFloat(f, 'f', prec, 64) }

// WriteSweepCSV writes one line per configuration: the grid's keys, then
// the counts, the pooled loss rate with its 95% bootstrap interval over
// runs, the probability that a run loses data with its 95% Wilson interval
// over runs, the pooled unavailability with its bootstrap interval, and
// the produce latencies (virtual milliseconds). See scenarios/sweep_stats.go.
func WriteSweepCSV(w io.Writer, sw *sweep.Spec, rows []sweep.Row) error {
	cw := csv.NewWriter(w)
	var head []string
	for _, a := range sw.Grid {
		head = append(head, a.Key)
	}
	if err := cw.Write(append(head, sweepColumns...)); err != nil {
		return err
	}
	for _, r := range rows {
		line := append([]string{}, r.Values...)
		line = append(line,
			strconv.Itoa(r.Runs), strconv.Itoa(r.RunsFailed), strconv.Itoa(r.RunsWithLoss), strconv.Itoa(r.RunsBug), strconv.Itoa(r.RunsUnknown),
			strconv.Itoa(r.Acked), strconv.Itoa(r.Lost), ftoa(r.LossRate, 6), ftoa(r.LossLow, 6), ftoa(r.LossHigh, 6),
			ftoa(r.PRunLoss, 6), ftoa(r.PRunLossLow, 6), ftoa(r.PRunLossHigh, 6), strconv.Itoa(r.RunsDiverged), strconv.Itoa(r.DivergentOffsets), strconv.Itoa(r.Attempts), strconv.Itoa(r.Unavailable),
			ftoa(r.Unavailability, 6), ftoa(r.UnavailLow, 6), ftoa(r.UnavailHigh, 6), ftoa(r.LatencyP50Ms, 3), ftoa(r.LatencyP99Ms, 3))
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// SweepJSON is results.json: the sweep and its rows.
type SweepJSON struct {
	Sweep *sweep.Spec `json:"sweep"`
	Rows  []sweep.Row `json:"rows"`
}

// WriteSweepJSON writes results.json, indented.
func WriteSweepJSON(w io.Writer, sw *sweep.Spec, rows []sweep.Row) error {
	return writeIndentedJSON(w, SweepJSON{Sweep: sw, Rows: rows})
}

// WriteRunsJSONL writes one run record per line.
func WriteRunsJSONL(w io.Writer, recs []sweep.RunRecord) error { return writeJSONLines(w, recs) }

// writeIndentedJSON writes v as indented JSON (results.json, matrix.json).
func writeIndentedJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// writeJSONLines writes one JSON value per line (runs.jsonl).
func writeJSONLines[T any](w io.Writer, recs []T) error {
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}
