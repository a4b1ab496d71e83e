package sweep

// This file is the sweep engine: one scenario run over the Cartesian product
// of a grid of configuration properties, script variables (the swarm's fault
// rates among them) and variants, N seeds per configuration, in parallel
// worlds, and the aggregation of those runs into one row per configuration.
//
// Determinism: the configurations are enumerated in grid order (the first
// axis varies slowest, values in the order given), seeds are 1..N, and the
// (configuration, seed) space is numbered configuration-major; a shard i/n
// runs the jobs whose number is i modulo n. Runs come back in completion
// order, but every output is built from records sorted by (configuration,
// seed), so nothing depends on the parallelism or the sharding.
//
// Simplification: a run's produce latencies are kept as a log-linear
// histogram (32 buckets per power of two), so the median and p99 a row
// reports are exact to within 1.6%; in exchange, histograms merge exactly
// across seeds and shards.

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// Axis is one swept key with its values (-grid key=v1,v2,...). The key is
// a Kafka property (min.insync.replicas), a script variable ($crash, or a
// swarm argument such as crash written without the $), or "variant".
type Axis struct {
	Key    string   `json:"key"`
	Values []string `json:"values"`
}

// ParseAxis parses "key=v1,v2,...".
func ParseAxis(text string) (Axis, error) {
	k, vs, ok := strings.Cut(text, "=")
	if !ok || k == "" || vs == "" {
		return Axis{}, fmt.Errorf("-grid %q: want key=v1,v2,... (a Kafka property, a script variable such as $crash, or variant)", text)
	}
	a := Axis{Key: k}
	seen := map[string]bool{}
	for _, v := range strings.Split(vs, ",") {
		if v == "" {
			return Axis{}, fmt.Errorf("-grid %q: empty value", text)
		}
		if seen[v] {
			return Axis{}, fmt.Errorf("-grid %q: value %q given twice", text, v)
		}
		seen[v] = true
		a.Values = append(a.Values, v)
	}
	return a, nil
}

// Spec is what decides a sweep's runs: shards of one sweep must agree on
// every field (it is written to DIR/sweep.json and compared by merge).
type Spec struct {
	Scenario string `json:"scenario"`
	// Variant is the variant every configuration starts from (unless the
	// grid sweeps "variant").
	Variant string `json:"variant"`
	// Set are the overrides every configuration starts from (-set, and
	// the -config files merged under it); the grid is layered over them
	// (config.Overlay).
	Set   map[string]string `json:"set,omitempty"`
	Grid  []Axis            `json:"grid"`
	Seeds int               `json:"seeds"`
	// BudgetMs is the linearizability budget of each run, in wall ms.
	BudgetMs int64 `json:"budget_ms"`
}

// Point is one configuration of a sweep: one value per axis, in grid order.
type Point struct {
	Index  int
	Values []string
}

// Pairs returns the point as key=value strings in grid order.
func (sw *Spec) Pairs(p Point) []string {
	out := make([]string, len(p.Values))
	for i, v := range p.Values {
		out[i] = sw.Grid[i].Key + "=" + v
	}
	return out
}

// Points enumerates the Cartesian product of the grid, the first axis
// varying slowest.
func (sw *Spec) Points() []Point {
	n := 1
	for _, a := range sw.Grid {
		n *= len(a.Values)
	}
	out := make([]Point, n)
	for i := range out {
		vals := make([]string, len(sw.Grid))
		rest := i
		for j := len(sw.Grid) - 1; j >= 0; j-- {
			m := len(sw.Grid[j].Values)
			vals[j] = sw.Grid[j].Values[rest%m]
			rest /= m
		}
		out[i] = Point{Index: i, Values: vals}
	}
	return out
}

// Job is one run of a sweep.
type Job struct {
	Point int
	Seed  uint64
}

// Jobs returns the runs of shard i of n (n = 0 or 1: every run), in
// (configuration, seed) order.
func (sw *Spec) Jobs(shard, shards int) []Job {
	var out []Job
	k := 0
	for p := range sw.Points() {
		for s := 1; s <= sw.Seeds; s++ {
			if shards <= 1 || k%shards == shard {
				out = append(out, Job{Point: p, Seed: uint64(s)})
			}
			k++
		}
	}
	return out
}

// ParseShard parses "i/n" with 0 <= i < n (i is 0-based, as Kubernetes'
// JOB_COMPLETION_INDEX).
func ParseShard(text string) (int, int, error) {
	a, b, ok := strings.Cut(text, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 0 || i >= n {
		return 0, 0, fmt.Errorf("-shard %q: want i/n with n >= 1 and 0 <= i < n (i counts from 0, like JOB_COMPLETION_INDEX)", text)
	}
	return i, n, nil
}

// Validate checks the sweep against its script: every key known, every
// value valid, every configuration accepted by the cluster (for example
// min.insync.replicas no larger than the replication factor). Errors are
// bad input. A key written without $ that names a script variable (acks
// for the scripted clients' $acks, crash for the swarm's rate) sets the
// variable too.
func (sw *Spec) Validate(s *scenarios.Script) error {
	if sw.Seeds < 1 {
		return fmt.Errorf("-seeds %d: must be >= 1", sw.Seeds)
	}
	if len(sw.Grid) == 0 {
		return fmt.Errorf("no -grid: a sweep needs at least one key=v1,v2,...")
	}
	if _, err := s.Variant(sw.Variant); err != nil {
		return err
	}
	vars := s.Variables()
	seen := map[string]bool{}
	for _, a := range sw.Grid {
		if seen[a.Key] {
			return fmt.Errorf("-grid %s given twice", a.Key)
		}
		seen[a.Key] = true
		if len(a.Values) == 0 {
			return fmt.Errorf("-grid %s has no values", a.Key)
		}
		for _, v := range a.Values {
			var err error
			switch {
			case a.Key == "variant":
				_, err = s.Variant(v)
			case strings.HasPrefix(a.Key, "$"):
				err = s.CheckVariable(a.Key, v)
			case vars["$"+a.Key]:
				if err = scenarios.CheckValue(a.Key, v); err == nil && isProperty(a.Key) {
					_, err = config.Parse(map[string]string{a.Key: v})
				}
			default:
				_, err = config.Parse(map[string]string{a.Key: v})
			}
			if err != nil {
				return fmt.Errorf("-grid %s: %w", a.Key, err)
			}
		}
	}
	for _, p := range sw.Points() {
		v, set := sw.runArgs(s, p)
		if _, _, err := harness.Prepare(s, v, set); err != nil {
			return fmt.Errorf("configuration %s: %w", strings.Join(sw.Pairs(p), " "), err)
		}
	}
	return nil
}

func isProperty(k string) bool {
	for _, p := range config.Properties() {
		if p == k {
			return true
		}
	}
	return false
}

// runArgs returns the variant and the -set overrides of a point.
// RunArgs returns the variant and the -set of point p's runs.
func (sw *Spec) RunArgs(s *scenarios.Script, p Point) (string, map[string]string) {
	return sw.runArgs(s, p)
}

func (sw *Spec) runArgs(s *scenarios.Script, p Point) (string, map[string]string) {
	variant := sw.Variant
	if variant == "" {
		variant = s.Variants[0].Name
	}
	grid := map[string]string{}
	vars := s.Variables()
	for i, a := range sw.Grid {
		v := p.Values[i]
		switch {
		case a.Key == "variant":
			variant = v
		case strings.HasPrefix(a.Key, "$"):
			grid[a.Key] = v
		case vars["$"+a.Key]:
			grid["$"+a.Key] = v
			if isProperty(a.Key) {
				grid[a.Key] = v
			}
		default:
			grid[a.Key] = v
		}
	}
	set := make(map[string]string, len(sw.Set)+len(grid))
	for k, v := range sw.Set {
		set[k] = v
	}
	config.Overlay(set, grid)
	// A sweep over the swarm's rates compares those rates: unless the grid
	// sweeps $profile too, each run keeps them as given rather than drawing
	// a swarm profile from them.
	if _, ok := set["$profile"]; !ok && vars["$profile"] && sw.sweepsRates() {
		set["$profile"] = scenarios.ProfileFixed
	}
	return variant, set
}

// sweepsRates reports whether a grid axis is one of the swarm's rates
// ($crash, or crash written without the $).
func (sw *Spec) sweepsRates() bool {
	for _, a := range sw.Grid {
		if scenarios.IsSwarmRate(a.Key) {
			return true
		}
	}
	return false
}

// RunRecord is one run of a sweep, as a line of runs.jsonl: enough to
// aggregate it again (resume, merge) and to replay it.
type RunRecord struct {
	Point  int      `json:"point"`
	Config []string `json:"config"`
	Seed   uint64   `json:"seed"`
	// Profile is the run's swarm profile ("swarm: crash=0.6 ...", or
	// "fixed: ..." with the script's rates), when the scenario has a swarm
	// step.
	Profile string `json:"profile,omitempty"`
	// Verdicts are checker=ok|unknown|permitted|bug, in checkers.Names order.
	Verdicts         []string `json:"verdicts"`
	Failed           string   `json:"failed,omitempty"`
	Acked            int      `json:"acked"`
	AckedLost        int      `json:"acked_lost"`
	DivergentOffsets int      `json:"divergent_offsets"`
	// Attempts counts produce attempts; Unavailable those refused (a
	// definite failure) or timed out (unknown outcome), acks=0 sends apart.
	Attempts    int `json:"attempts"`
	Unavailable int `json:"unavailable"`
	// Latency is the histogram of acknowledged produces' latencies
	// (invoke to acknowledgement, virtual time).
	Latency   Histogram `json:"latency"`
	TraceHash string    `json:"trace_hash"`
	Replay    string    `json:"replay"`
	// NotModelled are the properties accepted but not modelled, and Notes
	// where a property given did not take effect as given
	// (harness.Result.ConfigNotes and ProducerNotes).
	NotModelled []string `json:"not_modelled,omitempty"`
	Notes       []string `json:"notes,omitempty"`
}

// NewRunRecord summarises a result.
func NewRunRecord(sw *Spec, p Point, r *harness.Result) RunRecord {
	rec := RunRecord{Point: p.Index, Config: sw.Pairs(p), Seed: r.Seed, Profile: r.Profile, Failed: r.Failed,
		Acked: r.Stats.Acked, AckedLost: r.Stats.AckedLost, DivergentOffsets: r.Stats.DivergentOffsets,
		TraceHash: fmt.Sprintf("%016x", r.TraceHash), Replay: r.Replay, Verdicts: []string{}, Latency: Histogram{},
		NotModelled: r.NotModelled, Notes: append(append([]string(nil), r.ConfigNotes...), r.ProducerNotes...)}
	for _, v := range r.Verdicts {
		rec.Verdicts = append(rec.Verdicts, v.Checker+"="+harness.Outcome(v))
	}
	for _, op := range r.History.Ops {
		if op.Kind != checkers.Send || op.Process == harness.CheckerClient { // the liveness probes are not the workload
			continue
		}
		rec.Attempts++
		switch {
		case op.Outcome == checkers.OK:
			rec.Latency.Add(int64(op.Complete.Sub(op.Invoke)))
		case op.Outcome == checkers.Info && op.Error == "acks=0":
		default:
			rec.Unavailable++
		}
	}
	return rec
}

// Options configure the running of a sweep.
type Options struct {
	Parallel      int
	Shard, Shards int
	// Done lists the runs already finished (resume): they are skipped.
	Done map[Job]bool
	// OnRun is called for every finished run, from one goroutine at a
	// time, in completion order; an error stops the sweep.
	OnRun func(RunRecord) error
	// Stop, when closed, stops the sweep from starting new runs (the runs
	// in flight finish and are reported).
	Stop <-chan struct{}
}

// Run runs the sweep's jobs (of one shard) not yet done. It returns
// the number of runs it made and whether it was stopped before the end.
func Run(s *scenarios.Script, sw *Spec, o Options) (int, bool, error) {
	if err := sw.Validate(s); err != nil {
		return 0, false, err
	}
	points := sw.Points()
	var jobs []Job
	for _, j := range sw.Jobs(o.Shard, o.Shards) {
		if !o.Done[j] {
			jobs = append(jobs, j)
		}
	}
	budget := time.Duration(sw.BudgetMs) * time.Millisecond
	return RunJobs(len(jobs), o.Parallel, o.Stop, func(i int) (RunRecord, error) {
		j := jobs[i]
		p := points[j.Point]
		variant, set := sw.runArgs(s, p)
		origins := map[string]string{}
		for _, a := range sw.Grid {
			origins[a.Key] = "-grid"
		}
		res, err := harness.Run(s, variant, harness.Options{Seed: j.Seed, Set: set, Budget: budget, Origins: origins})
		if err != nil {
			return RunRecord{}, err
		}
		res.World = nil
		return NewRunRecord(sw, p, res), nil
	}, o.OnRun)
}

// RunJobs runs jobs 0..n-1 on parallel workers (many worlds at once, never
// threads inside one), calling onRun (when set) for each finished one from
// one goroutine at a time, in completion order. It stops taking jobs at the
// first error or when stop is closed, and reports how many ran, whether it
// stopped early and the first error. Sweep and matrix share it.
func RunJobs[T any](n, parallel int, stop <-chan struct{}, run func(i int) (T, error), onRun func(T) error) (int, bool, error) {
	var (
		mu      sync.Mutex
		wg      sync.WaitGroup
		next    int
		ran     int
		stopped bool
		first   error
	)
	halted := func() bool {
		select {
		case <-stop:
			return true
		default:
			return false
		}
	}
	for w := 0; w < max(parallel, 1); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				if next >= n || first != nil || stopped || halted() {
					stopped = stopped || (next < n && first == nil)
					mu.Unlock()
					return
				}
				i := next
				next++
				mu.Unlock()
				rec, err := run(i)
				mu.Lock()
				if err == nil && first == nil && onRun != nil {
					err = onRun(rec)
				}
				if err != nil && first == nil {
					first = err
				}
				ran++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return ran, stopped, first
}

// SortRecords sorts records by (configuration, seed) and drops repeated
// runs (a run journaled twice keeps its first record).
func SortRecords(recs []RunRecord) []RunRecord {
	return SortRecordsOf(recs, func(r *RunRecord) *RunRecord { return r })
}

// SortRecordsOf is SortRecords for any record that carries a RunRecord
// (a matrix's run records embed one): base returns it.
func SortRecordsOf[T any](recs []T, base func(*T) *RunRecord) []T {
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := base(&recs[i]), base(&recs[j])
		if a.Point != b.Point {
			return a.Point < b.Point
		}
		return a.Seed < b.Seed
	})
	out := recs[:0]
	for i := range recs {
		if i > 0 {
			a, b := base(&recs[i]), base(&recs[i-1])
			if a.Point == b.Point && a.Seed == b.Seed {
				continue
			}
		}
		out = append(out, recs[i])
	}
	return out
}

// Row is one configuration of a sweep, aggregated over its seeds.
type Row struct {
	Config []string `json:"config"` // key=value, in grid order
	Values []string `json:"-"`
	Runs   int      `json:"runs"`
	// RunsFailed counts runs that broke (a panic, an await that never
	// happened); RunsWithLoss those that lost an acknowledged record;
	// RunsBug those with a violation outside Kafka's contract;
	// RunsUnknown those where a checker could not decide.
	RunsFailed   int `json:"runs_failed"`
	RunsWithLoss int `json:"runs_with_loss"`
	RunsBug      int `json:"runs_bug"`
	RunsUnknown  int `json:"runs_unknown"`
	Acked        int `json:"acked"`
	Lost         int `json:"lost"`
	// LossRate is Lost/Acked pooled over the runs; LossLow and LossHigh
	// its 95% percentile bootstrap interval over runs (sweep_stats.go: [0,
	// 1] when fewer than two runs acknowledged anything).
	LossRate float64 `json:"loss_rate"`
	LossLow  float64 `json:"loss_ci_low"`
	LossHigh float64 `json:"loss_ci_high"`
	// PRunLoss is RunsWithLoss/Runs, the probability that a run loses an
	// acknowledged record; PRunLossLow and PRunLossHigh its 95% Wilson
	// score interval over runs ([0, 1] with no run).
	PRunLoss         float64 `json:"p_run_loss"`
	PRunLossLow      float64 `json:"p_run_loss_low"`
	PRunLossHigh     float64 `json:"p_run_loss_high"`
	RunsDiverged     int     `json:"runs_diverged"`
	DivergentOffsets int     `json:"divergent_offsets"`
	Attempts         int     `json:"attempts"`
	Unavailable      int     `json:"unavailable"`
	// Unavailability is Unavailable/Attempts pooled over the runs;
	// UnavailLow and UnavailHigh its 95% percentile bootstrap interval
	// over runs, as for the loss rate.
	Unavailability float64 `json:"unavailability"`
	UnavailLow     float64 `json:"unavailability_ci_low"`
	UnavailHigh    float64 `json:"unavailability_ci_high"`
	// LatencyP50Ms and LatencyP99Ms are acknowledged produces' latencies
	// in virtual milliseconds (0 when nothing was acknowledged).
	LatencyP50Ms float64 `json:"latency_p50_ms"`
	LatencyP99Ms float64 `json:"latency_p99_ms"`
}

// Aggregate builds one row per configuration from the runs' records.
func Aggregate(sw *Spec, recs []RunRecord) []Row {
	points := sw.Points()
	rows := make([]Row, len(points))
	hists := make([]Histogram, len(points))
	samples := make([][]runSample, len(points))
	for i, p := range points {
		rows[i] = Row{Config: sw.Pairs(p), Values: p.Values}
	}
	for _, r := range recs {
		if r.Point < 0 || r.Point >= len(rows) {
			continue
		}
		row := &rows[r.Point]
		row.Runs++
		if r.Failed != "" {
			row.RunsFailed++
		}
		if r.AckedLost > 0 {
			row.RunsWithLoss++
		}
		bug, unknown := false, false
		for _, v := range r.Verdicts {
			bug = bug || strings.HasSuffix(v, "=bug")
			unknown = unknown || strings.HasSuffix(v, "=unknown")
		}
		if bug {
			row.RunsBug++
		}
		if unknown {
			row.RunsUnknown++
		}
		row.Acked += r.Acked
		row.Lost += r.AckedLost
		if r.DivergentOffsets > 0 {
			row.RunsDiverged++
		}
		row.DivergentOffsets += r.DivergentOffsets
		row.Attempts += r.Attempts
		row.Unavailable += r.Unavailable
		hists[r.Point] = hists[r.Point].Merge(r.Latency)
		samples[r.Point] = append(samples[r.Point], runSample{seed: r.Seed,
			loss: Ratio{r.AckedLost, r.Acked}, unavail: Ratio{r.Unavailable, r.Attempts}})
	}
	for i := range rows {
		row := &rows[i]
		row.setIntervals(strings.Join(row.Config, " "), samples[i])
		row.LatencyP50Ms = float64(hists[i].Quantile(0.5)) / 1e6
		row.LatencyP99Ms = float64(hists[i].Quantile(0.99)) / 1e6
	}
	return rows
}
