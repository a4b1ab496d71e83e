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

// Result is a workload's measurement over Runs runs: means per run, and
// each run's own figures in PerRun.
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
	// PeakHeapMB is the largest live heap seen while it ran (the largest
	// of the runs').
	PeakHeapMB float64 `json:"peak_heap_mb"`
	// VsBareLoop is, for the kernel, the kernel's events per second over
	// the bare loop's (the share of the bare loop's speed the kernel
	// keeps), measured in the same process.
	VsBareLoop float64 `json:"vs_bare_loop,omitempty"`
	// PerRun are the figures of each of the Runs runs, in order.
	// NB: the JSON of kafkasim bench before issue 31 has none; Samples
	// then gives its means as one run's figures.
	PerRun []RunFigures `json:"per_run,omitempty"`
}

// RunFigures are one run's figures, as Result's means are named.
type RunFigures struct {
	WallMs          float64 `json:"wall_ms"`
	Speedup         float64 `json:"speedup,omitempty"`
	EventsPerS      float64 `json:"events_per_s,omitempty"`
	RunsPerS        float64 `json:"runs_per_s,omitempty"`
	AllocsPerRecord float64 `json:"allocs_per_record"`
	BytesPerRecord  float64 `json:"bytes_per_record"`
	PeakHeapMB      float64 `json:"peak_heap_mb"`
	VsBareLoop      float64 `json:"vs_bare_loop,omitempty"`
}

// Samples are the result's per-run figures, or, for a result without
// them (older JSON), its means as a single run's.
func (r Result) Samples() []RunFigures {
	if len(r.PerRun) > 0 {
		return r.PerRun
	}
	return []RunFigures{{WallMs: r.WallMs, Speedup: r.Speedup, EventsPerS: r.EventsPerS, RunsPerS: r.RunsPerS,
		AllocsPerRecord: r.AllocsPerRecord, BytesPerRecord: r.BytesPerRecord, PeakHeapMB: r.PeakHeapMB, VsBareLoop: r.VsBareLoop}}
}

// Measure runs w count times and returns the mean figures and each run's.
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
	for i := 0; i < count; i++ {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		var peak atomic.Uint64
		stop := sampleHeap(&peak)
		start := time.Now()
		s, err := run()
		took := time.Since(start)
		stop()
		if err != nil {
			return Result{}, err
		}
		runtime.ReadMemStats(&after)
		wall += took
		mallocs += after.Mallocs - before.Mallocs
		bytes += after.TotalAlloc - before.TotalAlloc
		sum.Simulated += s.Simulated
		sum.Events += s.Events
		sum.Records += s.Records
		sum.Runs += s.Runs
		r.PerRun = append(r.PerRun, figures(s, took, after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc, peak.Load()))
	}
	mean := figures(sum, wall, mallocs, bytes, 0)
	r.WallMs = mean.WallMs / float64(count)
	r.SimulatedS = float64(sum.Simulated) / 1e9 / float64(count)
	r.Speedup, r.EventsPerS, r.RunsPerS = mean.Speedup, mean.EventsPerS, mean.RunsPerS
	r.Records = sum.Records / count
	r.AllocsPerRecord, r.BytesPerRecord = mean.AllocsPerRecord, mean.BytesPerRecord
	for _, f := range r.PerRun {
		r.PeakHeapMB = max(r.PeakHeapMB, f.PeakHeapMB)
	}
	return r, nil
}

// figures are the rates of s simulated in wall, with mallocs and bytes
// allocated and peak bytes of live heap.
func figures(s Sample, wall time.Duration, mallocs, bytes, peak uint64) RunFigures {
	f := RunFigures{WallMs: wall.Seconds() * 1000, PeakHeapMB: float64(peak) / (1 << 20)}
	if secs := wall.Seconds(); secs > 0 {
		f.Speedup = float64(s.Simulated) / 1e9 / secs
		f.EventsPerS = float64(s.Events) / secs
		f.RunsPerS = float64(s.Runs) / secs
	}
	if s.Records > 0 {
		f.AllocsPerRecord = float64(mallocs) / float64(s.Records)
		f.BytesPerRecord = float64(bytes) / float64(s.Records)
	}
	return f
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
// when both ran (per run: the kernel's i-th run over the bare loop's).
func RunAll(match func(string) bool, count int, each func(Result)) ([]Result, error) {
	var out []Result
	var bare *Result
	for _, w := range Workloads {
		if !match(w.Name) {
			continue
		}
		r, err := Measure(w, count)
		if err != nil {
			return out, err
		}
		if w.Name == "bare-loop" {
			bare = &r
		}
		if w.Name == "kernel" && bare != nil && bare.EventsPerS > 0 {
			r.VsBareLoop = r.EventsPerS / bare.EventsPerS
			for i := range r.PerRun {
				if b := bare.PerRun[i].EventsPerS; b > 0 {
					r.PerRun[i].VsBareLoop = r.PerRun[i].EventsPerS / b
				}
			}
		}
		out = append(out, r)
		if each != nil {
			each(r)
		}
	}
	return out, nil
}
