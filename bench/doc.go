// Package bench is `kafkasim bench`: the project's standard workloads, run
// in one process and measured the same way, so a speed claim in the README
// is one command's output on a named machine.
//
// Each Workload runs whole (the world, its clients, its checkers) and
// reports what it simulated; Measure runs it -count times and reports the
// wall time per run, the simulated-to-wall speedup, events (or runs) per
// second, allocations and bytes per record, and the peak heap in use
// (sampled every millisecond). The kernel's ping-pong runs beside a bare
// binary-heap event loop with interface dispatch, measured in the same
// process, so the kernel's overhead is a ratio, not a number from another
// day.
//
// Imports: the simulation (sim, broker/cluster), the scenario harness and
// explorer, and the checkers — never the command line.
package bench
