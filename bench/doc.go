// Package bench is `kafkasim bench`: the project's standard workloads, run
// in one process and measured the same way, so a speed claim in
// docs/benchmarks.md is one command's output on a named machine.
//
// Each Workload runs whole (the world, its clients, its checkers) and
// reports what it simulated; Measure runs it -count times and reports, per
// run and as means, the wall time, the simulated-to-wall speedup, events
// (or runs) per second, allocations and bytes per record, and the peak
// heap in use (sampled every millisecond). The kernel's ping-pong runs
// beside a bare binary-heap event loop with interface dispatch, both with
// QueueDepth events in flight, measured in the same process, so the
// kernel's overhead is a ratio, not a number from another day.
//
// There are no targets to meet: a Report (the -json output) read back by
// ReadReports is the baseline, and WriteComparison sets a measurement
// beside it as benchstat does (golang.org/x/perf/benchmath: medians, their
// confidence intervals, a Mann-Whitney U test).
//
// Imports: the simulation (sim, broker/cluster), the scenario harness and
// explorer, the checkers and golang.org/x/perf's statistics — never the
// command line.
//
//	base, notes, err := bench.ReadReports(file)
//	results, err := bench.RunAll(func(string) bool { return true }, 5, nil)
//	bench.WriteComparison(os.Stdout, base, "base.json", bench.Report{Machine: m, Count: 5, Results: results}, "", notes)
package bench
