package main

import (
	"flag"
	"runtime"
	"time"

	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

// runFlags are the flags the drivers of many runs (sweep, matrix) share:
// the workers, the shard, the output directory, the linearizability
// budget and the progress display; check validates them and parses the
// shard.
type runFlags struct {
	parallel  int
	shardText string
	out       string
	budget    time.Duration
	progress  string
	maxMemory *string
	// shard and shards are -shard's i/n (0, 0 without -shard).
	shard, shards int
}

// addRunFlags registers the flags on fs; unit names what a slice of the
// run space is made of ("configuration", "cell").
func addRunFlags(fs *flag.FlagSet, unit string) *runFlags {
	f := &runFlags{}
	fs.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "worlds run at once")
	fs.StringVar(&f.shardText, "shard", "", "run only slice i/n of the ("+unit+", seed) space, 0 <= i < n")
	fs.StringVar(&f.out, "out", "", "output directory")
	fs.DurationVar(&f.budget, "budget", 2*time.Second, "wall-clock budget of each linearizability check (past it: unknown)")
	fs.StringVar(&f.progress, "progress", "auto", "progress on stderr: auto (a bar on a terminal, lines otherwise), bar, lines or none")
	f.maxMemory = addMaxMemory(fs)
	return f
}

func (f *runFlags) check() error {
	if f.out == "" {
		return usagef("-out DIR is required")
	}
	if err := checkDir("-out", f.out); err != nil {
		return err
	}
	if f.parallel < 1 {
		return usagef("-parallel %d: must be >= 1", f.parallel)
	}
	if f.budget <= 0 {
		return usagef("-budget %v: must be positive", f.budget)
	}
	if f.shardText != "" {
		var err error
		if f.shard, f.shards, err = sweep.ParseShard(f.shardText); err != nil {
			return usageError{err.Error()}
		}
	}
	switch f.progress {
	case "auto", "bar", "lines", "none":
	default:
		return usagef("-progress %q: allowed auto, bar, lines, none", f.progress)
	}
	return nil
}
