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
// set, and a soft memory limit (debug.SetMemoryLimit) at nine tenths of
// bound unless GOMEMLIMIT is set, so that the collector works harder as the
// bound nears before the guard stops the run. It returns what restores
// the previous settings (for tests, which run serve inside one process).
func tuneServeGC(bound int64) (restore func()) {
	prevPercent, prevLimit := -2, int64(-1)
	if os.Getenv("GOGC") == "" {
		prevPercent = debug.SetGCPercent(serveGCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" && bound > 0 {
		prevLimit = debug.SetMemoryLimit(bound / 10 * 9)
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

// processMemory is the memory the Go runtime holds from the OS: every
// mapped class less the heap's pages returned to it, which is the
// resident set but for what the OS has not yet taken back.
func processMemory() int64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return int64(s[0].Value.Uint64()) - int64(s[1].Value.Uint64())
}

// memoryGuard stops a served run whose memory passes max, once.
type memoryGuard struct {
	max  int64
	read func() int64 // processMemory; a test's stand-in
	mu   sync.Mutex
	why  string
	peak int64
}

// watch polls the process's memory until srv is done; past max it prints
// why and stops the run as a stop command would.
func (g *memoryGuard) watch(srv *serve.Server, stdout io.Writer) {
	tick := time.NewTicker(memoryCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-srv.Done():
			return
		case <-tick.C:
		}
		m := g.read()
		g.mu.Lock()
		g.peak = max(g.peak, m)
		crossed := g.max > 0 && m > g.max && g.why == ""
		if crossed {
			g.why = fmt.Sprintf("stopped at -max-memory: the server held %s, past the bound of %s (the verdicts judge the traffic until then; docs/serve.md, \"Memory\")", formatMiB(m), formatMiB(g.max))
		}
		g.mu.Unlock()
		if crossed {
			fmt.Fprintf(stdout, "memory: %s held, past -max-memory %s: stopping\n", formatMiB(m), formatMiB(g.max))
			if a := srv.Command("stop"); a != "" {
				fmt.Fprintln(stdout, a)
			}
			return
		}
	}
}

// reason is why the guard stopped the run ("" if it did not).
func (g *memoryGuard) reason() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.why
}
