package reports

// This file renders a matrix (scenarios × Kafka releases, package
// scenarios/matrix): matrix.csv and matrix.json, one row per cell;
// matrix.md and the text table "which Kafka loses what", one line per
// scenario and one column per release, each row saying what it ran
// (matrix.Row.RanAs: the variant and its settings); runs.jsonl. Like the
// sweep's, every
// file is a function of the matrix and its runs only, so any -parallel,
// GOMAXPROCS or sharding writes the same bytes.

import (
	"encoding/csv"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/matrix"
)

// matrixColumns are matrix.csv's columns.
var matrixColumns = []string{"scenario", "version", "mode", "variant", "variant_from", "settings", "replaced_by_release", "set", "status", "runs", "runs_with_loss",
	"p_run_loss", "p_run_loss_low", "p_run_loss_high", "acked", "lost", "loss_rate", "loss_ci_low", "loss_ci_high",
	"runs_diverged", "runs_bug", "runs_permitted", "runs_liveness_failed", "runs_offline_by_design", "runs_unknown", "runs_failed", "runs_consumer_skipped", "runs_committed_lost", "anomalies"}

// WriteMatrixCSV writes one line per (scenario, version).
func WriteMatrixCSV(w io.Writer, rows []matrix.Row) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(matrixColumns); err != nil {
		return err
	}
	for _, r := range rows {
		line := []string{r.Scenario, r.Version, r.Mode, r.Variant, r.VariantFrom, strings.Join(r.Settings, " "), strings.Join(r.Replaced, " "), strings.Join(r.Set, " "), r.Status,
			strconv.Itoa(r.Runs), strconv.Itoa(r.RunsWithLoss), ftoa(r.PRunLoss, 6), ftoa(r.PRunLossLow, 6), ftoa(r.PRunLossHigh, 6),
			strconv.Itoa(r.Acked), strconv.Itoa(r.Lost), ftoa(r.LossRate, 6), ftoa(r.LossLow, 6), ftoa(r.LossHigh, 6),
			strconv.Itoa(r.RunsDiverged), strconv.Itoa(r.RunsBug), strconv.Itoa(r.RunsPermitted), strconv.Itoa(r.RunsLivenessFailed),
			strconv.Itoa(r.RunsOffline), strconv.Itoa(r.RunsUnknown), strconv.Itoa(r.RunsFailed), strconv.Itoa(r.RunsSkipped),
			strconv.Itoa(r.RunsCommittedLost), strings.Join(r.Anomalies, " ")}
		if err := cw.Write(line); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// MatrixJSON is matrix.json: the matrix and its rows.
type MatrixJSON struct {
	Matrix *matrix.Spec `json:"matrix"`
	Rows   []matrix.Row `json:"rows"`
}

// WriteMatrixJSON writes matrix.json, indented.
func WriteMatrixJSON(w io.Writer, sp *matrix.Spec, rows []matrix.Row) error {
	return writeIndentedJSON(w, MatrixJSON{Matrix: sp, Rows: rows})
}

// WriteMatrixRuns writes one run record per line.
func WriteMatrixRuns(w io.Writer, recs []matrix.RunRecord) error { return writeJSONLines(w, recs) }

// MatrixCellText is a cell as the tables show it: "n/a", or the runs with
// loss of the runs ("2/5"), then S<k> for k runs whose consumer silently
// skipped records, C<k> for runs that lost a committed but no acknowledged
// record, D<k> for runs that diverged, L<k> for liveness failures, O<k> for
// partitions offline by design (ELR waiting), B<k> for violations outside Kafka's contract, F<k> for
// runs that could not be carried out, ?<k> for runs a checker could not
// decide.
func MatrixCellText(r matrix.Row) string {
	if r.Status != matrix.StatusRan {
		return "n/a"
	}
	s := fmt.Sprintf("%d/%d", r.RunsWithLoss, r.Runs)
	for _, m := range []struct {
		tag string
		n   int
	}{{"S", r.RunsSkipped}, {"C", r.RunsCommittedLost}, {"D", r.RunsDiverged}, {"L", r.RunsLivenessFailed}, {"O", r.RunsOffline}, {"B", r.RunsBug}, {"F", r.RunsFailed}, {"?", r.RunsUnknown}} {
		if m.n > 0 {
			s += " " + m.tag + strconv.Itoa(m.n)
		}
	}
	return s
}

// MatrixLegend explains the cells.
const MatrixLegend = "cell: runs that lost an acknowledged record / runs; S a consumer silently skipped acknowledged records the final log holds, C a committed (never acknowledged) record lost, D diverged, L liveness failed, O a partition offline by design (KIP-966 waits for an eligible replica), B a violation outside Kafka's contract, F could not be carried out, ? a checker undecided (each: runs); n/a: the scenario cannot run on that release (matrix.csv says why)"

// MatrixRowsNote says how the rows' variants were chosen and what the
// column's release does to their settings: one sentence.
func MatrixRowsNote(rows []matrix.Row) string {
	var chosen []string
	seen := map[string]bool{}
	for _, r := range rows {
		if r.VariantFrom == matrix.VariantFlag && !seen[r.Scenario] {
			seen[r.Scenario] = true
			chosen = append(chosen, r.Scenario)
		}
	}
	which := "none named here"
	if len(chosen) > 0 {
		which = "here for " + strings.Join(chosen, ", ")
	}
	return "Each row runs one variant of its scenario: its first, unless -variant names another (" + which + "); " +
		"its settings are the variant's, with the -config files' and -set's over them, and the column's release sets " +
		"inter.broker.protocol.version and the other version-selecting keys over all of them"
}

// ranAs returns what each scenario's row ran (matrix.Row.RanAs: the
// same in every column).
func ranAs(rows []matrix.Row) map[string]string {
	out := map[string]string{}
	for _, r := range rows {
		if _, ok := out[r.Scenario]; !ok {
			out[r.Scenario] = r.RanAs()
		}
	}
	return out
}

// firstRow returns the first row of scenario s.
func firstRow(rows []matrix.Row, s string) matrix.Row {
	for _, r := range rows {
		if r.Scenario == s {
			return r
		}
	}
	return matrix.Row{Scenario: s}
}

// pivot returns the scenarios and versions of rows in order, and the row
// of each (scenario, version).
func pivot(rows []matrix.Row) ([]string, []string, map[[2]string]matrix.Row) {
	var scen, vers []string
	seenS, seenV := map[string]bool{}, map[string]bool{}
	at := map[[2]string]matrix.Row{}
	for _, r := range rows {
		if !seenS[r.Scenario] {
			seenS[r.Scenario] = true
			scen = append(scen, r.Scenario)
		}
		if !seenV[r.Version] {
			seenV[r.Version] = true
			vers = append(vers, r.Version)
		}
		at[[2]string{r.Scenario, r.Version}] = r
	}
	return scen, vers, at
}

// WriteMatrixTable writes the text table: one line per scenario, one
// column per version.
func WriteMatrixTable(w io.Writer, rows []matrix.Row) error {
	scen, vers, at := pivot(rows)
	first := len("SCENARIO")
	for _, s := range scen {
		first = max(first, len(s))
	}
	widths := make([]int, len(vers))
	for i, v := range vers {
		widths[i] = len(v)
		for _, s := range scen {
			widths[i] = max(widths[i], len(MatrixCellText(at[[2]string{s, v}])))
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%-*s", first, "SCENARIO")
	for i, v := range vers {
		fmt.Fprintf(&b, "  %-*s", widths[i], v)
	}
	b.WriteString("\n")
	for _, s := range scen {
		fmt.Fprintf(&b, "%-*s", first, s)
		for i, v := range vers {
			fmt.Fprintf(&b, "  %-*s", widths[i], MatrixCellText(at[[2]string{s, v}]))
		}
		b.WriteString("\n")
	}
	b.WriteString("rows ran as (the variant -variant names, else the scenario's first; its settings, -config and -set over them; the column's release over all):\n")
	ran := ranAs(rows)
	for _, s := range scen {
		fmt.Fprintf(&b, "  %-*s  %s\n", first, s, ran[s])
	}
	_, err := io.WriteString(w, strings.TrimRight(strings.ReplaceAll(b.String(), " \n", "\n"), " ")+MatrixLegend+"\n")
	return err
}

// WriteMatrixMarkdown writes matrix.md: the table, its legend and the
// cells that did not run, with why.
func WriteMatrixMarkdown(w io.Writer, sp *matrix.Spec, rows []matrix.Row) error {
	scen, vers, at := pivot(rows)
	var b strings.Builder
	fmt.Fprintf(&b, "# Which Kafka loses what\n\n%d seeds per cell (scenarios/matrix). %s.\n\n", sp.Seeds, MatrixRowsNote(rows))
	if common := commonSettings(sp); len(common) > 0 {
		b.WriteString("Every run also has, from the -config files and -set: " + strings.Join(common, ", ") + ".\n\n")
	}
	ran := ranAs(rows)
	b.WriteString("| scenario | ran as | " + strings.Join(vers, " | ") + " |\n|---|---" + strings.Repeat("|---", len(vers)) + "|\n")
	for _, s := range scen {
		b.WriteString("| " + s + " | " + strings.ReplaceAll(ran[s], "|", `\|`))
		for _, v := range vers {
			b.WriteString(" | " + MatrixCellText(at[[2]string{s, v}]))
		}
		b.WriteString(" |\n")
	}
	b.WriteString("\n" + MatrixLegend + ".\n")
	var na []string
	for _, r := range rows {
		if r.Status != matrix.StatusRan {
			na = append(na, fmt.Sprintf("- %s on %s: %s", r.Scenario, r.Version, strings.TrimPrefix(r.Status, "n/a: ")))
		}
	}
	if len(na) > 0 {
		b.WriteString("\nNot run:\n\n" + strings.Join(na, "\n") + "\n")
	}
	for _, s := range sp.Skipped {
		fmt.Fprintf(&b, "\nSkipped: %s\n", s)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// commonSettings returns the matrix's own settings (the -config files and
// -set: Spec.Set), key=value, sorted, the keys the releases replace left
// out.
func commonSettings(sp *matrix.Spec) []string {
	var out []string
	for k, v := range sp.Set {
		if !matrix.IsVersionKey(k) {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return out
}
