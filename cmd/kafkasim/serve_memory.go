package main

// serve's memory bound (-max-memory). A served run keeps what its
// verdicts need (the history of every client operation, the replicas'
// logs, the invariants' samples) until stop, so what it holds grows with
// the traffic; this file keeps the garbage on top of that small and stops
// the run, judged, when what it holds passes the bound, rather than let
// the kernel's OOM killer end it without verdicts.

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkasim/kafkasim/serve"
)

// serveGCPercent is serve's garbage collector target when GOGC is not set,
// in place of gcPercent: a served world allocates for as long as clients
// send, and GOGC=400 let the heap grow to five times what is live between
// collections (docs/clienttests.md, "Memory").
const serveGCPercent = 100

// memoryCheckEvery is how often the guard reads the process's memory.
const memoryCheckEvery = 250 * time.Millisecond

// parseMemory reads a -max-memory value: a whole number of bytes with a
// unit, KiB, MiB or GiB (a bare number is MiB), or 0 for no bound.
func parseMemory(s string) (int64, error) {
	t := strings.TrimSpace(s)
	unit := int64(1 << 20)
	for _, u := range []struct {
		suffix string
		bytes  int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if strings.HasSuffix(t, u.suffix) {
			t, unit = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.bytes
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/unit {
		return 0, fmt.Errorf("want a size such as 8GiB, 512MiB or 0 (no bound); a bare number is MiB")
	}
	return n * unit, nil
}

// formatMiB renders bytes in MiB, as the guard's lines say them.
func formatMiB(b int64) string { return strconv.FormatInt(b>>20, 10) + " MiB" }

// tuneServeGC sets serve's collector: GOGC=serveGCPercent unless GOGC is
// set, and a soft memory limit (debug.SetMemoryLimit) at bound unless
// GOMEMLIMIT is set, so that the collector works harder as the bound
// nears. It returns what restores the previous settings (for tests, which
// run serve inside one process).
func tuneServeGC(bound int64) (restore func()) {
	prevPercent, prevLimit := -2, int64(-1)
	if os.Getenv("GOGC") == "" {
		prevPercent = debug.SetGCPercent(serveGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" && bound > 0 {
		prevLimit = debug.SetMemoryLimit(bound)
	}
	return func() {
		if prevPercent != -2 {
			debug.SetGCPercent(prevPercent)
		}
		if prevLimit >= 0 {
			debug.SetMemoryLimit(prevLimit)
		}
	}
}

// memoryUse is what the guard reads: the memory the Go runtime holds from
// the OS (every mapped class less the heap's pages returned to it: the
// resident set but for what the OS has not taken back yet), and the heap
// that stayed live after the last collection.
type memoryUse struct{ held, live int64 }

func processMemory() memoryUse {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return memoryUse{held: int64(s[0].Value.Uint64()) - int64(s[1].Value.Uint64()), live: int64(s[2].Value.Uint64())}
}

// past says how m passes the bound max: once three quarters of max stay
// live (the last quarter is the collector's room: with less, it collects
// without pause and the program slows to a crawl) or the process holds
// more than max all the same; "" while it does not.
func (m memoryUse) past(max int64) string {
	switch {
	case m.live > max/4*3:
		return fmt.Sprintf("%s live after the last collection, past three quarters of -max-memory %s", formatMiB(m.live), formatMiB(max))
	case m.held > max:
		return fmt.Sprintf("%s held, past -max-memory %s", formatMiB(m.held), formatMiB(max))
	}
	return ""
}

// memoryGuard stops a served run, once, when what stays live passes
// three quarters of max (the last quarter is the collector's room: with
// less, it collects without pause and the server slows until clients
// time out) or when the process holds more than max all the same.
type memoryGuard struct {
	max  int64
	read func() memoryUse // processMemory; a test's stand-in
	// stopped is set once a stop was asked for (standard input, a
	// signal): the end phase and the checkers then take what they need.
	stopped atomic.Bool
	mu      sync.Mutex
	why     string
}

// watch polls the process's memory until srv is done; past the bound it
// prints why and stops the run as a stop command would.
func (g *memoryGuard) watch(srv *serve.Server, stdout io.Writer) {
	if g.max <= 0 {
		return
	}
	tick := time.NewTicker(memoryCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-srv.Done():
			return
		case <-tick.C:
		}
		if g.stopped.Load() {
			return
		}
		line := g.read().past(g.max)
		if line == "" {
			continue
		}
		g.mu.Lock()
		g.why = "stopped at -max-memory: " + line + " (the verdicts judge the traffic until then; docs/serve.md, \"Memory\")"
		g.mu.Unlock()
		fmt.Fprintf(stdout, "memory: %s: stopping\n", line)
		if a := srv.Command("stop"); a != "" {
			fmt.Fprintln(stdout, a)
		}
		return
	}
}

// reason is why the guard stopped the run ("" if it did not).
func (g *memoryGuard) reason() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.why
}
