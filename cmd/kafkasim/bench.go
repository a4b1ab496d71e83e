package main

// This file is `kafkasim bench`: the standard workloads (package bench)
// measured in one process, printed as a table or JSON with the machine
// they ran on, or beside a baseline (an earlier run's JSON).

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"text/tabwriter"

	"github.com/kafkasim/kafkasim/bench"
)

func init() {
	commands["bench"] = command{"measure the standard workloads: speedup, events/s, allocations per record, peak heap", runBench}
}

func runBench(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("bench", stderr)
	count := fs.Int("count", 1, "runs of each workload (the figures are means per run)")
	asJSON := fs.Bool("json", false, "print JSON instead of the table")
	run := fs.String("run", "", "measure only the workloads whose name matches this regular expression")
	baseline := fs.String("baseline", "", "compare with `FILE`, the output of an earlier bench -json (several appended are pooled), as benchstat does")
	current := fs.String("current", "", "with -baseline: compare `FILE` (bench -json output too) with the baseline instead of measuring now")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *baseline != "" && *asJSON {
		return usagef("-baseline with -json: pick one (save a run with -json, compare the next with -baseline)")
	}
	if *current != "" && *baseline == "" {
		return usagef("-current %s: needs -baseline FILE to compare it with", *current)
	}
	if *count < 1 {
		return usagef("-count %d: must be >= 1", *count)
	}
	re, err := regexp.Compile(*run)
	if err != nil {
		return usagef("-run %q: %v", *run, err)
	}
	if *current != "" {
		return compareFiles(stdout, *baseline, *current, re.MatchString, *run)
	}
	var names []string
	for _, w := range bench.Workloads {
		if re.MatchString(w.Name) {
			names = append(names, w.Name)
		}
	}
	if len(names) == 0 {
		var all []string
		for _, w := range bench.Workloads {
			all = append(all, w.Name)
		}
		return usagef("-run %q matches no workload (the workloads: %s)", *run, strings.Join(all, ", "))
	}
	var base bench.Report
	var notes []string
	if *baseline != "" {
		if base, notes, err = readReport("-baseline", *baseline, re.MatchString); err != nil {
			return err
		}
	}
	each := func(r bench.Result) {
		if !*asJSON {
			fmt.Fprintf(stderr, "kafkasim bench: %s done (%.0f ms/run)\n", r.Name, r.WallMs)
		}
	}
	results, err := bench.RunAll(re.MatchString, *count, each)
	if err != nil {
		return failedError{"kafkasim bench: " + err.Error()}
	}
	rep := bench.Report{Machine: machine(), Count: *count, Results: results}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	if *baseline != "" {
		return bench.WriteComparison(stdout, base, *baseline, rep, "", notes)
	}
	fmt.Fprintf(stdout, "machine: %s; %d run(s) per workload, means per run\n", rep.Machine, *count)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tWALL/RUN\tSIM/WALL\tEVENTS/S\tRUNS/S\tALLOCS/UNIT\tBYTES/UNIT\tPEAK HEAP\tNOTE")
	for _, r := range results {
		speed, events, runs, note := "-", "-", "-", ""
		if r.EventsPerS > 0 {
			events = fmt.Sprintf("%.3g", r.EventsPerS)
		}
		if r.Speedup > 0 {
			speed = fmt.Sprintf("%.0f×", r.Speedup)
		}
		if r.RunsPerS > 0 {
			runs = fmt.Sprintf("%.0f", r.RunsPerS)
		}
		if r.VsBareLoop > 0 {
			note = fmt.Sprintf("%.0f%% of the bare loop's events/s", 100*r.VsBareLoop)
		}
		fmt.Fprintf(tw, "%s\t%.1f ms\t%s\t%s\t%s\t%.1f /%s\t%.0f B/%s\t%.1f MB\t%s\n", r.Name, r.WallMs, speed, events, runs,
			r.AllocsPerRecord, r.Unit, r.BytesPerRecord, r.Unit, r.PeakHeapMB, note)
	}
	return tw.Flush()
}

// compareFiles is -baseline BASE -current CUR: two saved measurements
// compared, nothing measured. Alternating single runs of two builds into
// two files is the fairest comparison on a loaded machine.
func compareFiles(stdout io.Writer, baseFile, curFile string, match func(string) bool, run string) error {
	base, notes, err := readReport("-baseline", baseFile, match)
	if err != nil {
		return err
	}
	cur, curNotes, err := readReport("-current", curFile, match)
	if err != nil {
		return err
	}
	if len(base.Results) == 0 && len(cur.Results) == 0 {
		return usagef("-run %q matches no workload of %s or %s", run, baseFile, curFile)
	}
	for _, n := range curNotes {
		notes = append(notes, "current: "+n)
	}
	return bench.WriteComparison(stdout, base, baseFile, cur, curFile, notes)
}

// readReport reads the bench -json output FILE named by flag and keeps the
// workloads -run matches; a file that cannot be read or is not bench -json
// output is a usage error naming it.
func readReport(flag, file string, match func(string) bool) (bench.Report, []string, error) {
	f, err := os.Open(file)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return bench.Report{}, nil, usagef("%s %s: %v", flag, file, err)
	}
	defer f.Close()
	rep, notes, err := bench.ReadReports(f)
	if err != nil {
		return bench.Report{}, nil, usagef("%s %s: %v", flag, file, err)
	}
	kept := rep.Results[:0]
	for _, r := range rep.Results {
		if match(r.Name) {
			kept = append(kept, r)
		}
	}
	rep.Results = kept
	return rep, notes, nil
}

// machine describes this machine: CPU model, cores, GOMAXPROCS, Go version.
func machine() string {
	cpu := runtime.GOARCH
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				cpu = strings.TrimSpace(v)
				break
			}
		}
	}
	gc := debug.SetGCPercent(100)
	debug.SetGCPercent(gc)
	return fmt.Sprintf("%s, %d CPUs, GOMAXPROCS %d, GOGC %d, %s %s/%s", cpu, runtime.NumCPU(), runtime.GOMAXPROCS(0), gc, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
