package main

import (
	"fmt"
	"io"
	"math"
	"time"

	"github.com/kafkasim/kafkasim/sim"
	"github.com/kafkasim/kafkasim/sim/simtest"
)

func init() {
	commands["kernel"] = command{"check the simulation kernel: run the chaos workload twice per seed and compare trace hashes", runKernel}
}

// runKernel runs the kernel's chaos workload (every fault type, no Kafka)
// for a range of seeds, each twice, and fails if any pair of runs differ or
// a run does not end cleanly. It also replays each run from its recorded
// choices. This is the kernel's determinism check, usable in CI.
func runKernel(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("kernel", stderr)
	seeds := fs.Int("seeds", 10, "number of seeds to run, starting at -seed")
	first := fs.Uint64("seed", 1, "first seed")
	nodes := fs.Int("nodes", 5, "nodes in the chaos world (>= 2)")
	trace := fs.Bool("trace", false, "print the timeline of the first seed")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *seeds < 1 {
		return usagef("-seeds %d: must be >= 1", *seeds)
	}
	if *first > math.MaxUint64-uint64(*seeds-1) {
		return usagef("-seed %d -seeds %d: the last seed would pass %d (the largest seed)", *first, *seeds, uint64(math.MaxUint64))
	}
	if *nodes < 2 || *nodes > 64 {
		return usagef("-nodes %d: must be in [2, 64]", *nodes)
	}
	failed := 0
	var simulated sim.Duration
	start := time.Now()
	for i := 0; i < *seeds; i++ {
		seed := *first + uint64(i)
		a, err := simtest.Chaos(seed, simtest.ChaosOptions{Nodes: *nodes, RecordChoices: true, KeepTrace: *trace && i == 0})
		if err != nil {
			return usagef("%v", err)
		}
		ra := a.Run()
		b, _ := simtest.Chaos(seed, simtest.ChaosOptions{Nodes: *nodes})
		rb := b.Run()
		c, _ := simtest.Chaos(seed, simtest.ChaosOptions{Nodes: *nodes, Chooser: sim.Replay(a.Choices())})
		rc := c.Run()
		simulated += sim.Duration(ra.Now)
		verdict := "ok"
		switch {
		case ra.Reason != sim.Stopped:
			verdict = fmt.Sprintf("FAILED: run ended %v %v", ra.Reason, ra.Panic)
		case ra.Hash != rb.Hash || ra.Events != rb.Events:
			verdict = fmt.Sprintf("FAILED: second run differs (hash %016x)", rb.Hash)
		case ra.Hash != rc.Hash:
			verdict = fmt.Sprintf("FAILED: replay differs (hash %016x)", rc.Hash)
		}
		if verdict != "ok" {
			failed++
		}
		fmt.Fprintf(stdout, "seed %-6d events %-7d choices %-7d hash %016x  %s\n", seed, ra.Events, len(a.Choices()), ra.Hash, verdict)
		if *trace && i == 0 {
			sim.WriteTimeline(stdout, a.Trace().Records())
		}
	}
	wall := time.Since(start)
	fmt.Fprintf(stdout, "%d seeds, %d failed; %v simulated (x3 runs) in %v wall\n", *seeds, failed, simulated, wall.Round(time.Millisecond))
	if failed > 0 {
		return failedError{fmt.Sprintf("%d of %d seeds failed; replay one with: kafkasim kernel -seed N -seeds 1 -trace", failed, *seeds)}
	}
	return nil
}
