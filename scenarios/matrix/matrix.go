package matrix

// This file is the matrix engine: scenarios × releases, N seeds per cell,
// in parallel worlds, and the aggregation of the runs into one row per
// (scenario, release).
//
// A scenario runs "under a release" as one variant (the one -variant names,
// else its FIRST: variants.go), with the version-selecting properties it
// pins (VersionKeys) replaced by the release's own (Release.Set). A cell that cannot run on its release is not
// run and says why in its status: a 'controller manual' script on a KRaft
// release (there is no controller to stand in for), or a configuration
// the scenario refuses (harness.Prepare's error, e.g. a 'controllers N'
// header on a ZooKeeper release).
//
// Determinism: cells are numbered scenario-major in the order given (the
// releases in -versions order), seeds are 1..N, and the (cell, seed) space
// of the runnable cells is numbered cell-major; shard i/n runs the jobs
// whose number is i modulo n. Runs come back in completion order, but
// every output is built from records sorted by (cell, seed).

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/scenarios/sweep"
)

// ConsumerSkip is the anomaly of a consumer that silently skipped
// acknowledged records: the consumer checker's lost-write.
const ConsumerSkip = checkers.NameConsumer + ":lost-write"

// CommittedLost is the anomaly of a record once below a leader's HW that
// the final log lacks (in the acked-loss verdict).
const CommittedLost = checkers.NameAckedLoss + ":" + checkers.KindCommittedLost

// ConsumerLostRecord is a lost-write whose record is not in the final
// committed log: the broker lost it, the consumer skipped nothing.
const ConsumerLostRecord = checkers.NameConsumer + ":lost-write-not-in-log"

// inFinalLog reports whether the anomaly's record is in its partition's
// final committed log, at the offset named.
func inFinalLog(f checkers.Final, a checkers.Anomaly) bool {
	pf, ok := f.Partition(a.Topic, a.Partition)
	if !ok || len(a.Offsets) == 0 {
		return true // cannot tell: count it as a skip
	}
	j, ok := pf.Judge()
	if !ok {
		return true
	}
	e, ok := j.At(a.Offsets[0])
	return ok && e.Value == a.Value && e.Offset < j.HW
}

// StatusRan is the status of a cell that ran; any other status starts
// with "n/a: " and says why.
const StatusRan = "ran"

// Spec is what decides a matrix's runs: shards of one matrix must agree on
// every field (it is written to DIR/matrix-spec.json and compared by merge).
type Spec struct {
	// Scenarios are the -scenario arguments (names or script paths), in order.
	Scenarios []string `json:"scenarios"`
	// Skipped are default scenarios not known to this build, with a note.
	Skipped  []string `json:"skipped,omitempty"`
	Versions []string `json:"versions"`
	// Variants are the -variant arguments, one a string: V (every
	// scenario that has a variant V) or SCENARIO=V (its name or its
	// -scenario argument); a scenario none names runs its first variant.
	Variants []string `json:"variants,omitempty"`
	// Set are overrides every cell starts from (the -config files, -set
	// over them); each release's own keys are layered over them
	// (config.Overlay).
	Set   map[string]string `json:"set,omitempty"`
	Seeds int               `json:"seeds"`
	// BudgetMs is the linearizability budget of each run, in wall ms.
	BudgetMs int64 `json:"budget_ms"`
}

// Cell is one (scenario, release) of a matrix.
type Cell struct {
	Index    int
	Script   *scenarios.Script
	Scenario string // the script's name
	Release  Release
	Variant  string
	// VariantFrom is VariantFirst or VariantFlag.
	VariantFrom string
	// Set are the -set overrides of the cell's runs: Spec.Set and the
	// release's keys over it.
	Set map[string]string
	// Settings are what the runs set besides the release (the variant's
	// properties, Spec.Set over them), Replaced the version-selecting
	// keys of those, which the release replaces: key=value, sorted.
	Settings, Replaced []string
	Status             string
}

// Plan is a matrix's cells, scenario-major.
type Plan struct {
	Spec  *Spec
	Cells []Cell
	// Notes say where a -variant V left a scenario at its first variant.
	Notes []string
}

// NewPlan validates the spec and builds its cells. Errors are bad input:
// an unknown scenario or version label, two scenarios of one name, an
// unknown variant or -variant of another scenario, seeds < 1.
func NewPlan(sp *Spec) (*Plan, error) {
	if sp.Seeds < 1 {
		return nil, fmt.Errorf("-seeds %d: must be >= 1", sp.Seeds)
	}
	if len(sp.Scenarios) == 0 {
		return nil, fmt.Errorf("no scenario: give -scenario NAME|FILE (kafkasim list)")
	}
	rels, err := ParseVersions(strings.Join(sp.Versions, ","))
	if err != nil {
		return nil, err
	}
	p := &Plan{Spec: sp}
	seen := map[string]bool{}
	byName := map[string]string{}
	var scripts []*scenarios.Script
	for _, name := range sp.Scenarios {
		if seen[name] {
			return nil, fmt.Errorf("-scenario %s given twice", name)
		}
		seen[name] = true
		s, err := scenarios.Load(name)
		if err != nil {
			return nil, fmt.Errorf("-scenario: %w", err)
		}
		if prev, dup := byName[s.Name]; dup {
			return nil, fmt.Errorf("-scenario %s and -scenario %s: both are scenario %s, and a matrix has one row of a name; rename the file", prev, name, s.Name)
		}
		byName[s.Name] = name
		scripts = append(scripts, s)
	}
	choices, notes, err := chooseVariants(sp.Variants, scripts, sp.Scenarios)
	if err != nil {
		return nil, err
	}
	p.Notes = notes
	for k, s := range scripts {
		for _, r := range rels {
			p.Cells = append(p.Cells, newCell(len(p.Cells), s, choices[k], r, sp.Set))
		}
	}
	return p, nil
}

func newCell(i int, s *scenarios.Script, vc variantChoice, r Release, base map[string]string) Cell {
	v, _ := s.Variant(vc.name) // chooseVariants checked it
	c := Cell{Index: i, Script: s, Scenario: s.Name, Release: r, Variant: v.Name, VariantFrom: vc.from, Status: StatusRan}
	c.Settings, c.Replaced = settings(v, base)
	c.Set = map[string]string{}
	for k, val := range base {
		c.Set[k] = val
	}
	config.Overlay(c.Set, r.Set(s.Configuration(v, base)))
	if s.Manual && r.Mode == ModeKRaft {
		c.Status = "n/a: a 'controller manual' script (its leader-and-isr steps are the ZooKeeper controller's decisions); KRaft has no such controller"
		return c
	}
	if _, _, err := harness.Prepare(s, v.Name, c.Set); err != nil {
		c.Status = "n/a: " + oneLine(err.Error())
	}
	return c
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// SetPairs returns the cell's overrides as sorted key=value strings.
func (c Cell) SetPairs() []string {
	out := make([]string, 0, len(c.Set))
	for k, v := range c.Set {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// Job is one run of a matrix.
type Job struct {
	Cell int
	Seed uint64
}

// Jobs returns the runs of shard i of n (n = 0 or 1: every run), in
// (cell, seed) order; cells that are n/a have none.
func (p *Plan) Jobs(shard, shards int) []Job {
	var out []Job
	k := 0
	for _, c := range p.Cells {
		if c.Status != StatusRan {
			continue
		}
		for s := 1; s <= p.Spec.Seeds; s++ {
			if shards <= 1 || k%shards == shard {
				out = append(out, Job{Cell: c.Index, Seed: uint64(s)})
			}
			k++
		}
	}
	return out
}

// RunRecord is one run of a matrix, as a line of runs.jsonl: a sweep's run
// record (its point is the cell's index, its config the cell's -set
// overrides) with the cell's scenario and version.
type RunRecord struct {
	Scenario string `json:"scenario"`
	Version  string `json:"version"`
	// Anomalies are the distinct checker:kind of the run's anomalies
	// (consumer:lost-write, acked-loss:lost, ...), sorted.
	Anomalies []string `json:"anomalies"`
	sweep.RunRecord
}

// NewRunRecord summarises a result of cell c.
func NewRunRecord(c Cell, r *harness.Result) RunRecord {
	rec := sweep.NewRunRecord(&sweep.Spec{}, sweep.Point{Index: c.Index}, r)
	rec.Config = c.SetPairs()
	kinds := map[string]bool{}
	for _, v := range r.Verdicts {
		for _, a := range v.Anomalies {
			k := v.Checker + ":" + a.Kind
			if k == ConsumerSkip && !inFinalLog(r.Final, a) {
				// The broker lost the record (an acks=1 leader failure,
				// say) before the consumer could read it: a loss, already
				// counted, not a consumer skipping what the log holds.
				k = ConsumerLostRecord
			}
			kinds[k] = true
		}
	}
	an := make([]string, 0, len(kinds))
	for k := range kinds {
		an = append(an, k)
	}
	sort.Strings(an)
	return RunRecord{Scenario: c.Scenario, Version: c.Release.Label, Anomalies: an, RunRecord: rec}
}

// Options configure the running of a matrix.
type Options struct {
	Parallel      int
	Shard, Shards int
	// Done lists the runs already finished (resume): they are skipped.
	Done map[Job]bool
	// OnRun is called for every finished run, from one goroutine at a
	// time, in completion order; an error stops the matrix.
	OnRun func(RunRecord) error
	// Stop, when closed, stops the matrix from starting new runs.
	Stop <-chan struct{}
}

// Run runs the plan's jobs (of one shard). It returns the number of runs
// made and whether it was stopped before the end.
func (p *Plan) Run(o Options) (int, bool, error) {
	var jobs []Job
	for _, j := range p.Jobs(o.Shard, o.Shards) {
		if !o.Done[j] {
			jobs = append(jobs, j)
		}
	}
	budget := time.Duration(p.Spec.BudgetMs) * time.Millisecond
	return sweep.RunJobs(len(jobs), o.Parallel, o.Stop, func(i int) (RunRecord, error) {
		j := jobs[i]
		c := p.Cells[j.Cell]
		res, err := harness.Run(c.Script, c.Variant, harness.Options{Seed: j.Seed, Set: c.Set, Budget: budget})
		if err != nil {
			return RunRecord{}, fmt.Errorf("%s under %s seed %d: %w", c.Scenario, c.Release.Label, j.Seed, err)
		}
		res.World = nil
		return NewRunRecord(c, res), nil
	}, o.OnRun)
}

// SortRecords sorts records by (cell, seed) and drops repeated runs.
func SortRecords(recs []RunRecord) []RunRecord {
	return sweep.SortRecordsOf(recs, func(r *RunRecord) *sweep.RunRecord { return &r.RunRecord })
}

// Row is one (scenario, release) of a matrix, aggregated over its seeds.
type Row struct {
	Scenario string `json:"scenario"`
	Version  string `json:"version"`
	Mode     string `json:"mode"`
	Variant  string `json:"variant"`
	// VariantFrom says how the variant was chosen: "first" (the
	// scenario's first: no -variant named one) or "-variant".
	VariantFrom string `json:"variant_from"`
	// Settings are what the runs set besides the release: the variant's
	// properties and script variables, the -config files' and -set's over
	// them (key=value, sorted). Replaced are the version-selecting keys
	// among those, which the release overrides (RanAs renders all three).
	Settings []string `json:"settings"`
	Replaced []string `json:"replaced_by_release"`
	// Set are the cell's -set overrides as its replay commands give them:
	// Spec.Set and the release's keys.
	Set    []string `json:"set"`
	Status string   `json:"status"`
	Runs   int      `json:"runs"`
	// RunsWithLoss counts runs that lost an acknowledged record; PRunLoss
	// is RunsWithLoss/Runs with its 95% Wilson interval over runs.
	RunsWithLoss int     `json:"runs_with_loss"`
	PRunLoss     float64 `json:"p_run_loss"`
	PRunLossLow  float64 `json:"p_run_loss_low"`
	PRunLossHigh float64 `json:"p_run_loss_high"`
	Acked        int     `json:"acked"`
	Lost         int     `json:"lost"`
	// LossRate is Lost/Acked pooled over the runs, with its 95% percentile
	// bootstrap interval over runs (scenarios/sweep: [0, 1] with fewer
	// than two runs that acknowledged anything).
	LossRate float64 `json:"loss_rate"`
	LossLow  float64 `json:"loss_ci_low"`
	LossHigh float64 `json:"loss_ci_high"`
	// RunsDiverged counts runs whose replicas ended with divergent
	// offsets; RunsBug runs with a violation outside Kafka's contract;
	// RunsPermitted runs with a violation, all within the contract;
	// RunsLivenessFailed runs whose liveness checker found a violation
	// outside the contract; RunsOffline runs where a partition stayed
	// offline by design (KIP-966's ELR waits for an eligible replica
	// rather than elect an unclean one: liveness permitted);
	// RunsUnknown runs where a checker could not decide; RunsFailed runs
	// that could not be carried out.
	RunsDiverged       int `json:"runs_diverged"`
	RunsBug            int `json:"runs_bug"`
	RunsPermitted      int `json:"runs_permitted"`
	RunsLivenessFailed int `json:"runs_liveness_failed"`
	RunsOffline        int `json:"runs_offline_by_design"`
	RunsUnknown        int `json:"runs_unknown"`
	RunsFailed         int `json:"runs_failed"`
	// RunsSkipped counts runs in which a consumer silently skipped
	// acknowledged records (the consumer checker's lost-write: KIP-320's
	// problem before 2.1).
	RunsSkipped int `json:"runs_consumer_skipped"`
	// RunsCommittedLost counts runs that lost a committed record
	// (Vanlightly's "no global loss of committed data") but no
	// acknowledged one: what an unclean election of a replica holding
	// every acknowledged record loses.
	RunsCommittedLost int `json:"runs_committed_lost"`
	// Anomalies counts runs per checker:kind, as "checker:kind=runs",
	// sorted.
	Anomalies []string `json:"anomalies"`
}

// Aggregate builds one row per cell from the runs' records (sorted).
func (p *Plan) Aggregate(recs []RunRecord) []Row {
	rows := make([]Row, len(p.Cells))
	samples := make([][]sweep.Ratio, len(p.Cells))
	kinds := make([]map[string]int, len(p.Cells))
	for i, c := range p.Cells {
		rows[i] = Row{Scenario: c.Scenario, Version: c.Release.Label, Mode: c.Release.Mode, Variant: c.Variant, VariantFrom: c.VariantFrom,
			Settings: nonNil(c.Settings), Replaced: nonNil(c.Replaced), Set: c.SetPairs(), Status: c.Status}
	}
	for _, r := range recs {
		if r.Point < 0 || r.Point >= len(rows) {
			continue
		}
		row := &rows[r.Point]
		row.Runs++
		if r.AckedLost > 0 {
			row.RunsWithLoss++
		}
		if r.DivergentOffsets > 0 {
			row.RunsDiverged++
		}
		if r.Failed != "" {
			row.RunsFailed++
		}
		var bug, permitted, unknown, live, offline bool
		for _, v := range r.Verdicts {
			name, out, _ := strings.Cut(v, "=")
			bug = bug || out == "bug"
			permitted = permitted || out == "permitted"
			unknown = unknown || out == "unknown"
			live = live || (name == checkers.NameLiveness && out == "bug")
			offline = offline || (name == checkers.NameLiveness && out == "permitted")
		}
		if bug {
			row.RunsBug++
		} else if permitted {
			row.RunsPermitted++
		}
		if live {
			row.RunsLivenessFailed++
		}
		if offline {
			row.RunsOffline++
		}
		if unknown {
			row.RunsUnknown++
		}
		if kinds[r.Point] == nil {
			kinds[r.Point] = map[string]int{}
		}
		for _, k := range r.Anomalies {
			kinds[r.Point][k]++
			if k == ConsumerSkip {
				row.RunsSkipped++
			}
			if k == CommittedLost && r.AckedLost == 0 {
				row.RunsCommittedLost++
			}
		}
		row.Acked += r.Acked
		row.Lost += r.AckedLost
		samples[r.Point] = append(samples[r.Point], sweep.Ratio{Num: r.AckedLost, Den: r.Acked})
	}
	for i := range rows {
		row := &rows[i]
		row.Anomalies = []string{}
		for k, n := range kinds[i] {
			row.Anomalies = append(row.Anomalies, k+"="+strconv.Itoa(n))
		}
		sort.Strings(row.Anomalies)
		row.PRunLoss = 0
		if row.Runs > 0 {
			row.PRunLoss = float64(row.RunsWithLoss) / float64(row.Runs)
		}
		row.PRunLossLow, row.PRunLossHigh = sweep.Wilson(row.RunsWithLoss, row.Runs)
		row.LossRate = sweep.PooledRatio(samples[i])
		row.LossLow, row.LossHigh = sweep.BootstrapRatio(samples[i], "matrix "+row.Scenario+" "+row.Version+" loss")
	}
	return rows
}

// nonNil returns xs, or an empty slice for nil (JSON [] rather than null).
func nonNil(xs []string) []string {
	if xs == nil {
		return []string{}
	}
	return xs
}
