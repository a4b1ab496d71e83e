package main

// This file is `kafkasim check -history FILE [-json]`: it runs the checkers on a
// history saved by `kafkasim run -history FILE` (checkers/historyfile.go
// has the format), so a run can be re-judged, shared, or edited by hand to
// ask "what if". Exit codes as for run.

import (
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios"
)

func init() {
	commands["check"] = command{"run the checkers on a history saved by kafkasim run -history", runCheck}
}

func runCheck(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	path := fs.String("history", "", "history file written by kafkasim run -history")
	asJSON := fs.Bool("json", false, "print one JSON object: the file, its source and the verdicts")
	budget := fs.Duration("budget", checkers.DefaultBudget, "porcupine's wall-time budget; past it linearizability is unknown")
	if err := parse(fs, args); err != nil {
		return err
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
		return checkExit(verdicts)
	}
	source := hf.Source
	if source == "" {
		source = "source not recorded"
	}
	fmt.Fprintf(stdout, "history %s (%s): %d operations, %d partitions\n", *path, source, len(hf.History.Ops), len(hf.Final.Partitions))
	reports.WriteVerdictsText(stdout, verdicts)
	return checkExit(verdicts)
}

// checkExit turns the verdicts into check's exit code, as run's.
func checkExit(verdicts []checkers.Verdict) error {
	switch exitForVerdicts(verdicts) {
	case 1:
		return failedError{"a checker found a violation"}
	case 3:
		return exitError{3, "a checker could not decide (unknown)"}
	}
	return nil
}

// saveHistory writes a run's history file, atomically.
func saveHistory(path string, res *scenarios.Result) error {
	hf := checkers.HistoryFile{
		Source:  res.Replay, // the command that reproduces the run, -set and -choices included
		History: res.History, Final: res.Final,
	}
	for i := range res.Verdicts {
		if res.Verdicts[i].Checker == checkers.NameInvariants {
			hf.Invariants = &res.Verdicts[i]
		}
	}
	return reports.WriteFileAtomic(path, func(w io.Writer) error { return checkers.WriteHistoryFile(w, hf) })
}
