package serve

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kgo"
)

// lineLog collects the lines a served run prints (Config.Print).
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *lineLog) print(line string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, line)
}

// faults returns the fault lines printed so far.
func (l *lineLog) faults() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, line := range l.lines {
		if strings.HasPrefix(line, "fault ") {
			out = append(out, line)
		}
	}
	return out
}

// startFaults serves the built-in cluster under the fault profile text.
func startFaults(t *testing.T, seed uint64, speed float64, profile string, tape *strings.Builder) (*Server, *lineLog) {
	t.Helper()
	p, err := harness.ParseFaultProfile(profile)
	if err != nil {
		t.Fatal(err)
	}
	log := &lineLog{}
	cfg := Config{Script: ClusterScenario(), Seed: seed, Speed: speed, Log: testLog{t}, Faults: &p, Print: log.print, Budget: 2 * time.Second}
	if tape != nil {
		cfg.Tape = tape
	}
	return startConfig(t, cfg), log
}

// leaderCrash matches a fault line that took a leader down.
var leaderCrash = regexp.MustCompile(`^fault \S+: (crash|power-loss) b\d \((the active controller; )?leader of t/`)

// TestKgoThroughFaults: franz-go's producer, idempotent with acks=all
// (kgo's defaults), writes while serve -faults crashes, powers off,
// pauses and partitions the brokers on a fast schedule (a draw every 2
// virtual seconds at -speed 10: a fault every 300 ms or so of wall time;
// a down broker restarted at its next draw). The client's wall-clock
// waits are shortened to fit (metadata refreshes, retry backoff), as a
// test at -speed 10 must: a client that refreshes its metadata every 5 s
// of wall time meets 50 s of virtual faults in between.
// The schedule takes at least one leader down; at stop nothing
// acknowledged is lost and nothing duplicated beyond what Kafka's
// contract permits under the faults the facts record (a power loss), no
// checker finds a contract broken, and the tape replays to the same trace
// hash, drawing and printing the same faults.
func TestKgoThroughFaults(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	var tape strings.Builder
	s, log := startFaults(t, 6, 10, "default restart=1", &tape)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	prod, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.DefaultProduceTopic("t"), kgo.ClientID("app"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0), kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.MaxBufferedRecords(50), kgo.MetadataMinAge(50*time.Millisecond), kgo.RetryBackoffFn(func(int) time.Duration { return 20 * time.Millisecond }))
	if err != nil {
		t.Fatal(err)
	}
	defer prod.Close()
	var mu sync.Mutex
	acked, failed := 0, map[string]int{}
	done := func(r *kgo.Record, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			failed[err.Error()]++
			return
		}
		acked++
	}
	// Records are produced for 3 s; one not buffered by then fails with
	// the context's error, unsent.
	pctx, pcancel := context.WithTimeout(ctx, 3*time.Second)
	defer pcancel()
	for i := 0; pctx.Err() == nil; i++ {
		prod.Produce(pctx, &kgo.Record{Value: []byte(fmt.Sprintf("v%d", i))}, done)
	}
	t0 := time.Now()
	if err := prod.Flush(ctx); err != nil {
		t.Fatalf("flush: %v (still buffered: %d)\n%s", err, prod.BufferedProduceRecords(), s.Command("status"))
	}
	t.Logf("flushed in %v", time.Since(t0))
	prod.Close()
	res := stopAndWait(t, s)
	mu.Lock()
	t.Logf("kgo: %d acknowledged, failed %v; %s", acked, failed, s.FaultSummary())
	mu.Unlock()

	lines := log.faults()
	if len(lines) != len(s.Faults()) || len(lines) < 5 {
		t.Fatalf("%d fault lines printed, %d faults kept; want the same, at least 5:\n%s", len(lines), len(s.Faults()), strings.Join(lines, "\n"))
	}
	if !slices.ContainsFunc(lines, leaderCrash.MatchString) {
		t.Fatalf("no fault took a leader down:\n%s", strings.Join(lines, "\n"))
	}
	if acked < 20 || ackedSends(res, "app") < acked {
		t.Fatalf("kgo saw %d records acknowledged, the history %d: want at least 20, and the history to hold them all", acked, ackedSends(res, "app"))
	}
	for _, v := range res.Verdicts {
		t.Logf("%s: %s", v.Checker, harness.Outcome(v))
		if v.ContractBroken() {
			t.Errorf("%s: a contract broken under faults: %v", v.Checker, v)
		}
		switch v.Checker {
		case "acked-loss", "duplicates", "divergence":
			if v.Result != checkers.ResultOK && v.Result != checkers.ResultViolation {
				t.Errorf("%s: %v, want ok, or a violation the contract permits", v.Checker, v)
			}
		}
	}
	if !strings.HasPrefix(res.Profile, "faults fault-every=2s crash=0.3 ") {
		t.Errorf("the result's profile is %q, want the schedule's", res.Profile)
	}

	replayed := &lineLog{}
	h, entries, err := ReadTape(strings.NewReader(tape.String()))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Replay(h, entries, ReplayOptions{Print: replayed.print, Budget: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if rep.TraceHash != res.TraceHash || rep.Events != res.Events {
		t.Fatalf("replay: trace %016x after %d events, served %016x after %d", rep.TraceHash, rep.Events, res.TraceHash, res.Events)
	}
	if got := replayed.faults(); !slices.Equal(got, lines) {
		t.Fatalf("the replay drew other faults:\n%s\nserved:\n%s", strings.Join(got, "\n"), strings.Join(lines, "\n"))
	}
}

// faultStep strips a fault line of its notes (what the target led, which
// depends on the clients' traffic): "fault 2.040s: crash b1".
func faultStep(line string) string {
	if i := strings.Index(line, " ("); i >= 0 {
		return line[:i]
	}
	return line
}

// TestFaultScheduleIsTheSeeds: the seed and the profile decide the fault
// schedule — when each draw falls, which broker it picks, what it
// injects — whatever the clients do: a run without clients and a run with
// a producer inject the same faults at the same virtual times, and
// another seed injects others.
func TestFaultScheduleIsTheSeeds(t *testing.T) {
	const profile, n = "default fault-every=1s", 12
	run := func(seed uint64, traffic bool) []string {
		s, log := startFaults(t, seed, 50, profile, nil)
		if traffic {
			prod, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.DefaultProduceTopic("t"), kgo.ProducerLinger(0))
			if err != nil {
				t.Fatal(err)
			}
			defer prod.Close()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				for i := 0; ctx.Err() == nil; i++ {
					prod.Produce(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("v%d", i))}, nil)
				}
			}()
		}
		deadline := time.Now().Add(30 * time.Second)
		for len(log.faults()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("seed %d: %d faults in 30s, want %d", seed, len(log.faults()), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
		stopAndWait(t, s)
		var steps []string
		for _, line := range log.faults()[:n] {
			steps = append(steps, faultStep(line))
		}
		return steps
	}
	quiet, busy, other := run(7, false), run(7, true), run(8, false)
	if !slices.Equal(quiet, busy) {
		t.Fatalf("seed 7 drew other faults with a producer running:\n%s\nwithout:\n%s", strings.Join(busy, "\n"), strings.Join(quiet, "\n"))
	}
	if slices.Equal(quiet, other) {
		t.Fatalf("seeds 7 and 8 drew the same faults:\n%s", strings.Join(quiet, "\n"))
	}
}

// TestFaultsStopAtStop: the schedule injects nothing once serve is told
// to stop; the end phase heals and restarts, and its second of settling
// (a hundred draws at fault-every=10ms) and its probes see no fault.
func TestFaultsStopAtStop(t *testing.T) {
	var tape strings.Builder
	s, log := startFaults(t, 1, 1, "network fault-every=10ms", &tape)
	deadline := time.Now().Add(30 * time.Second)
	for len(log.faults()) < 3 {
		if time.Now().After(deadline) {
			t.Fatal("fewer than 3 faults in 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	res := stopAndWait(t, s)
	_, entries, err := ReadTape(strings.NewReader(tape.String()))
	if err != nil {
		t.Fatal(err)
	}
	stop := entries[len(entries)-1]
	if stop.Kind != kindCommand || stop.Line != "stop" {
		t.Fatalf("the tape ends with %+v, not the stop", stop)
	}
	if res.SimTime < stop.Time.Add(sim.Second) {
		t.Fatalf("the run ended at %v, less than a second after the stop at %v: the test proves nothing", res.SimTime, stop.Time)
	}
	for _, f := range s.Faults() {
		if f.At > stop.Time {
			t.Fatalf("%s: after the stop at %v", f, stop.Time)
		}
	}
}
