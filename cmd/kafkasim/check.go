package main

// This file is `kafkasim check -history FILE [-format kafkasim|jepsen] [-json]`:
// it runs the checkers on a history saved by `kafkasim run -history FILE`
// (checkers/historyfile.go has the format), so a run can be re-judged,
// shared, or edited by hand to ask "what if"; with -format jepsen, on a
// history recorded by Jepsen's Kafka workload (checkers/jepsen). Exit codes
// as for run.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/checkers/jepsen"
	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

func init() {
	commands["check"] = command{"run the checkers on a history saved by kafkasim run -history, or recorded by Jepsen", runCheck}
}

func runCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	path := fs.String("history", "", "history file written by kafkasim run -history (or by Jepsen, with -format jepsen)")
	format := fs.String("format", formatKafkasim, "history format: "+formatKafkasim+" (kafkasim run -history) or "+formatJepsen+" (Jepsen's Kafka workload, EDN)")
	asJSON := fs.Bool("json", false, "print one JSON object: the file, its source and the verdicts")
	strict := fs.Bool("strict", false, "exit 1 on a violation Kafka's contract permits, too")
	budget := fs.Duration("budget", checkers.DefaultBudget, "porcupine's wall-time budget; past it linearizability is unknown")
	wwDeps := fs.Bool("ww-deps", true, "with -format jepsen: infer ww dependencies from log order, as Jepsen's :ww-deps (false: as a Jepsen test run without it)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *format != formatKafkasim && *format != formatJepsen {
		return usagef("-format %q: want %s or %s", *format, formatKafkasim, formatJepsen)
	}
	if *path == "" {
		return usagef("-history FILE is required")
	}
	if *budget <= 0 {
		return usagef("-budget %v: want a positive duration such as 10s", *budget)
	}
	f, err := os.Open(*path)
	if err != nil {
		return usagef("%v", err)
	}
	defer f.Close()
	if *format == formatJepsen {
		return checkJepsen(*path, f, jepsen.Options{WWDeps: *wwDeps}, *asJSON, stdout)
	}
	hf, err := checkers.ReadHistoryFile(f)
	if err != nil {
		return usagef("%s: %v", *path, err)
	}
	verdicts := checkers.CheckFile(hf, checkers.Options{LinearizabilityBudget: *budget})
	if *asJSON {
		b, err := json.Marshal(struct {
			History  string                `json:"history"`
			Source   string                `json:"source"`
			Ops      int                   `json:"ops"`
			Verdicts []reports.VerdictJSON `json:"verdicts"`
		}{*path, hf.Source, len(hf.History.Ops), reports.NewVerdictsJSON(verdicts)})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return checkExit(verdicts, *strict)
	}
	source := hf.Source
	if source == "" {
		source = "source not recorded"
	}
	fmt.Fprintf(stdout, "history %s (%s): %d operations, %d partitions\n", *path, source, len(hf.History.Ops), len(hf.Final.Partitions))
	reports.WriteVerdictsText(stdout, verdicts)
	return checkExit(verdicts, *strict)
}

// The history formats check reads.
const (
	formatKafkasim = "kafkasim"
	formatJepsen   = "jepsen"
)

// checkJepsen judges a Jepsen Kafka history: one verdict per Jepsen error
// type, then the kafkasim checkers it cannot feed (unknown, with the
// reason). The exit code comes from the Jepsen verdicts alone: the others
// are unknown for every Jepsen history, so counting them would make exit
// code 3 say nothing about the history.
func checkJepsen(path string, r io.Reader, opts jepsen.Options, asJSON bool, stdout io.Writer) error {
	h, err := jepsen.ReadHistory(r)
	if err != nil {
		return usagef("%s: %v", path, err)
	}
	judged := jepsen.CheckWith(h, opts)
	unjudged := jepsen.Unjudged()
	if asJSON {
		b, err := json.Marshal(struct {
			History  string                `json:"history"`
			Format   string                `json:"format"`
			Ops      int                   `json:"ops"`
			Keys     int                   `json:"keys"`
			Verdicts []reports.VerdictJSON `json:"verdicts"`
			// NotJudged names the verdicts left out of the exit code.
			NotJudged []string `json:"not_judged"`
		}{path, formatJepsen, len(h.Ops), h.Keys(), reports.NewVerdictsJSON(append(judged, unjudged...)), checkerNames(unjudged)})
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", b)
		return checkExit(judged, true) // Jepsen: every anomaly is invalid (:valid? false)
	}
	fmt.Fprintf(stdout, "history %s (Jepsen EDN): %s\n", path, jepsen.Summary(h))
	writeJepsenVerdicts(stdout, judged)
	fmt.Fprintln(stdout, "  not judged (unknown for every Jepsen history, not counted in the exit code):")
	writeJepsenVerdicts(stdout, unjudged)
	return checkExit(judged, true) // Jepsen: every anomaly is invalid (:valid? false)
}

// checkerNames returns the verdicts' checker names.
func checkerNames(verdicts []checkers.Verdict) []string {
	out := make([]string, len(verdicts))
	for i, v := range verdicts {
		out[i] = v.Checker
	}
	return out
}

// writeJepsenVerdicts writes the verdicts with room for Jepsen's longer
// names, and their notes.
func writeJepsenVerdicts(w io.Writer, verdicts []checkers.Verdict) {
	reports.WriteVerdictsTextOpts(w, verdicts, 24, true)
}

// checkExit turns the verdicts into check's exit code, by run's rule
// (harness.VerdictsExit; a history has no expect lines).
func checkExit(verdicts []checkers.Verdict, strict bool) error {
	return runExit(harness.VerdictsExit(verdicts, nil, strict))
}

// saveHistory writes a run's history file, atomically.
func saveHistory(path string, res *harness.Result) error {
	hf := checkers.HistoryFile{
		Source:  res.Replay, // the command that reproduces the run, -set and -choices included
		History: res.History, Final: res.Final, Transactions: res.Transactions,
	}
	for i := range res.Verdicts {
		if res.Verdicts[i].Checker == checkers.NameInvariants {
			hf.Invariants = &res.Verdicts[i]
		}
	}
	return reports.WriteFileAtomic(path, func(w io.Writer) error { return checkers.WriteHistoryFile(w, hf) })
}
