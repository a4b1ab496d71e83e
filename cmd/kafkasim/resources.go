package main

// The memory bound of the commands that run worlds (-max-memory: run,
// replay, suite, sweep, matrix, explore). Before anything runs, each
// planned run is estimated from its plan (harness.EstimateRun: brokers,
// partition replicas, records, consumers) and the command refuses, exit 2,
// when the largest estimate times the worlds it runs at once passes the
// bound, naming the estimate and the flag. While runs go on, a watch reads
// the process's memory; past the bound it stops every run (harness.StopAll:
// each fails, exit 4, with the reason) rather than let the kernel's OOM
// killer end the process without a word.

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// defaultMaxMemory fits a 2-core, 24 GB machine with room for the OS and
// the collector: the default of every command's -max-memory.
const defaultMaxMemory = "8GiB"

// addMaxMemory declares -max-memory on fs.
func addMaxMemory(fs *flag.FlagSet) *string {
	return fs.String("max-memory", defaultMaxMemory, "bound the memory of the runs to `SIZE` (KiB, MiB, GiB; a bare number is MiB; 0: none): a run whose estimate (times -parallel) passes it is refused before it starts, and runs that pass it all the same stop, exit 4 (docs/commands.md, \"Memory\")")
}

// plannedRun is one run a command is about to make.
type plannedRun struct {
	s       *scenarios.Script
	variant string
	set     map[string]string
	traced  bool // -report, -trace: the whole trace is kept
	// records, when above 0, replaces the records the script's steps send
	// (explore runs its own workload on the script's cluster).
	records int
}

// memoryPlan is a command's bound and the estimate it checked.
type memoryPlan struct {
	bound    int64
	largest  harness.Estimate
	which    string // the largest run: "scenario/variant"
	parallel int
}

// checkMemory estimates every planned run and refuses, as a usage error,
// when the largest of them times worlds (the runs the command makes at
// once: -parallel, or fewer when it has fewer runs) passes the bound text
// gives.
// Runs that cannot be prepared are skipped here: the command reports
// them as it always has.
func checkMemory(boundText string, worlds int, runs []plannedRun) (memoryPlan, error) {
	bound, err := parseMemory(boundText)
	if err != nil {
		return memoryPlan{}, usagef("-max-memory %q: %v", boundText, err)
	}
	mp := memoryPlan{bound: bound, parallel: max(worlds, 1)}
	for _, r := range runs {
		e, err := harness.EstimateRun(r.s, r.variant, r.set, r.traced)
		if err != nil {
			continue
		}
		if r.records > 0 {
			e = e.WithRecords(r.records)
		}
		if e.Bytes > mp.largest.Bytes {
			mp.largest, mp.which = e, r.s.Name+"/"+r.variant
		}
	}
	if bound == 0 || len(runs) == 0 {
		return mp, nil
	}
	total := mp.largest.Bytes * int64(mp.parallel)
	if total <= bound {
		return mp, nil
	}
	e := mp.largest
	times := ""
	if mp.parallel > 1 {
		times = fmt.Sprintf(", times %d worlds at once (-parallel): %s", mp.parallel, formatGiB(total))
	}
	return mp, usagef("%s needs about %s of memory by its plan (%d nodes, %s partition replicas, %s records sent, %d consumers; about %s events)%s: past -max-memory %s. "+
		"Make the plan smaller, or raise the bound with -max-memory SIZE (0: none) if this machine has the memory (docs/commands.md, \"Memory\")",
		mp.which, formatGiB(e.Bytes), e.Brokers, thousands(e.PartitionReplicas), thousands(e.Records), e.Consumers, thousands(int(e.Events)), times, formatGiB(bound))
}

// formatGiB renders bytes as "2.1 GiB" or "350 MiB".
func formatGiB(b int64) string {
	if b >= 1<<30 {
		return strconv.FormatFloat(float64(b)/(1<<30), 'f', 1, 64) + " GiB"
	}
	return strconv.FormatInt(b>>20, 10) + " MiB"
}

// thousands renders n with thousands separators: 30,000.
func thousands(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// memoryStop is why the last watch stopped the runs ("" if it did not);
// written by the watch's goroutine, read once it has ended (stop waits
// for it).
var memoryStop string

// takeMemoryStop returns and clears memoryStop: the command line exits 4
// with it (main.go).
func takeMemoryStop() string {
	why := memoryStop
	memoryStop = ""
	return why
}

// watchMemory sets the collector's soft limit at the bound (unless
// GOMEMLIMIT is set) and, until the returned stop is called, reads the
// process's memory; past the bound it stops every run (harness.StopAll)
// and says so on stderr. A bound of 0 watches nothing.
func watchMemory(mp memoryPlan, stderr io.Writer) (stop func()) {
	if mp.bound <= 0 {
		return func() {}
	}
	prevLimit := int64(-1)
	if os.Getenv("GOMEMLIMIT") == "" {
		prevLimit = debug.SetMemoryLimit(mp.bound)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(memoryCheckEvery)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			line := processMemory().past(mp.bound)
			if line == "" {
				continue
			}
			est := ""
			if mp.largest.Bytes > 0 {
				est = fmt.Sprintf("the plan's estimate was %s per run; ", formatGiB(mp.largest.Bytes))
			}
			why := "stopped at -max-memory: " + line + " (" + est + "docs/commands.md, \"Memory\")"
			harness.StopAll(why)
			memoryStop = why
			fmt.Fprintf(stderr, "kafkasim: memory: %s: stopping every run\n", line)
			return
		}
	}()
	return func() {
		close(done)
		wg.Wait()
		harness.ResumeAll()
		if prevLimit >= 0 {
			debug.SetMemoryLimit(prevLimit)
		}
	}
}
