package bench

// This file measures a workload: wall time, allocations and the peak heap.
// It is the one place of the package that reads the wall clock and starts
// a goroutine (the heap sampler) — outside the simulation, as the
// determinism rules allow.

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Result is a workload's measurement over Runs runs (means per run).
type Result struct {
	Name string `json:"name"`
	What string `json:"what"`
	Unit string `json:"unit"`
	Runs int    `json:"runs"`
	// WallMs is the wall time of one run, SimulatedS the simulated time.
	WallMs     float64 `json:"wall_ms"`
	SimulatedS float64 `json:"simulated_s"`
	// Speedup is simulated / wall time (0 when nothing is simulated).
	Speedup float64 `json:"speedup"`
	// EventsPerS are the world's events per wall second; RunsPerS the
	// explored runs per second (explore only).
	EventsPerS float64 `json:"events_per_s"`
	RunsPerS   float64 `json:"runs_per_s,omitempty"`
	// Records per run, and the allocations and bytes per record.
	Records         int     `json:"records"`
	AllocsPerRecord float64 `json:"allocs_per_record"`
	BytesPerRecord  float64 `json:"bytes_per_record"`
	// PeakHeapMB is the largest live heap seen while it ran.
	PeakHeapMB float64 `json:"peak_heap_mb"`
	// VsBareLoop is, for the kernel, the bare loop's events per second
	// over the kernel's (the share of the bare loop's speed the kernel
	// keeps), measured in the same process.
	VsBareLoop float64 `json:"vs_bare_loop,omitempty"`
	// Goal is the workload's target (issue 17), GoalMet whether this
	// result meets it; GoalMet is absent when there is no goal or the
	// result cannot tell.
	Goal    string `json:"goal,omitempty"`
	GoalMet *bool  `json:"goal_met,omitempty"`
}

// Measure runs w count times and returns the mean figures.
func Measure(w Workload, count int) (Result, error) {
	run := w.Run
	if w.Setup != nil {
		f, err := w.Setup()
		if err != nil {
			return Result{}, err
		}
		run = f
	}
	r := Result{Name: w.Name, What: w.What, Unit: w.Unit, Runs: count}
	var wall time.Duration
	var sum Sample
	var mallocs, bytes uint64
	var peak atomic.Uint64
	for i := 0; i < count; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		stop := sampleHeap(&peak)
		start := time.Now()
		s, err := run()
		wall += time.Since(start)
		stop()
		if err != nil {
			return Result{}, err
		}
		runtime.ReadMemStats(&after)
		mallocs += after.Mallocs - before.Mallocs
		bytes += after.TotalAlloc - before.TotalAlloc
		sum.Simulated += s.Simulated
		sum.Events += s.Events
		sum.Records += s.Records
		sum.Runs += s.Runs
	}
	secs := wall.Seconds()
	r.WallMs = secs * 1000 / float64(count)
	r.SimulatedS = float64(sum.Simulated) / 1e9 / float64(count)
	if secs > 0 {
		r.Speedup = float64(sum.Simulated) / 1e9 / secs
		r.EventsPerS = float64(sum.Events) / secs
		r.RunsPerS = float64(sum.Runs) / secs
	}
	r.Records = sum.Records / count
	if sum.Records > 0 {
		r.AllocsPerRecord = float64(mallocs) / float64(sum.Records)
		r.BytesPerRecord = float64(bytes) / float64(sum.Records)
	}
	r.PeakHeapMB = float64(peak.Load()) / (1 << 20)
	return r, nil
}

// sampleHeap records the largest heap-objects size into peak every
// millisecond until the returned stop is called.
func sampleHeap(peak *atomic.Uint64) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	read := func() {
		metrics.Read(sample)
		if v := sample[0].Value.Uint64(); v > peak.Load() {
			peak.Store(v)
		}
	}
	go func() {
		defer close(finished)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				read()
				return
			case <-t.C:
				read()
			}
		}
	}()
	return func() { close(done); <-finished }
}

// RunAll measures every workload whose name match accepts, in order,
// calling each as it finishes; the kernel gets its ratio to the bare loop
// when both ran.
func RunAll(match func(string) bool, count int, each func(Result)) ([]Result, error) {
	var out []Result
	var bare float64
	for _, w := range Workloads {
		if !match(w.Name) {
			continue
		}
		r, err := Measure(w, count)
		if err != nil {
			return out, err
		}
		if w.Name == "bare-loop" {
			bare = r.EventsPerS
		}
		if w.Name == "kernel" && bare > 0 {
			r.VsBareLoop = r.EventsPerS / bare
		}
		if w.Goal != nil {
			r.Goal = w.Goal.Text
			if met, ok := w.Goal.Met(r); ok {
				r.GoalMet = &met
			}
		}
		out = append(out, r)
		if each != nil {
			each(r)
		}
	}
	return out, nil
}
