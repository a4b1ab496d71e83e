// verdict.go: three-valued verdicts with evidence, and CheckAll.
//
// What it decides: a checker's Result is Violation when it found at least
// one anomaly (even a Permitted one: "any loss is a violation"), Unknown when
// it found none but could not judge everything (porcupine's time budget ran
// out, no replica was alive to judge a partition), and OK otherwise. Whether
// a violation breaks Kafka's contract is per anomaly (Permitted), so the
// suite can expect "loss, but only permitted loss".
//
// What it simplifies: evidence is flat (record, offsets, replicas, steps,
// times) and rendered by one String form shared by traces and reports.

package checkers

import (
	"strconv"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/sim"
)

// The stable names of the checkers, as Verdict.Checker and on the command line.
const (
	NameLinearizability = "linearizability"
	NameAckedLoss       = "acked-loss"
	NameDivergence      = "divergence"
	NameInvariants      = "invariants"
	NameDuplicates      = "duplicates"
	NameOrdering        = "ordering"
)

// Names lists the checker names in the order CheckAll returns verdicts.
var Names = []string{NameLinearizability, NameAckedLoss, NameDivergence, NameInvariants, NameDuplicates, NameOrdering, NameLiveness}

// Result is a checker's three-valued outcome.
type Result uint8

// The results of a checker.
const (
	ResultOK Result = iota
	ResultViolation
	ResultUnknown
)

// String returns "ok", "violation" or "unknown" (the JSON spelling).
func (r Result) String() string {
	switch r {
	case ResultOK:
		return "ok"
	case ResultViolation:
		return "violation"
	case ResultUnknown:
		return "unknown"
	}
	return "result(" + strconv.Itoa(int(r)) + ")"
}

// Anomaly is one piece of evidence against a run.
type Anomaly struct {
	// Kind is a short stable name: "lost", "moved", "uncommitted",
	// "divergent", "not-converged", "duplicate", "reordered",
	// "nonlinearizable", or an invariant's name.
	Kind        string
	Description string
	// Topic and Partition locate it.
	Topic     string
	Partition int32
	// Value is the record concerned, if any.
	Value string
	// Offsets, Replicas (broker ids), Steps (trace steps) and Times are the
	// evidence; each may be empty.
	Offsets  []int64
	Replicas []int32
	Steps    []uint64
	Times    []sim.Time
	// Ops are the indexes (Op.Index) of the history operations involved.
	Ops []int
	// Permitted is true when Kafka's contract allows this anomaly under the
	// run's configuration and faults; false means a protocol bug.
	Permitted bool
	// Reason is the contract's sentence for Permitted, shared by every
	// anomaly lost for the same reason (acked-loss sets it; AnomalyGroup).
	// It is already part of Description, so String does not print it.
	Reason string
	// Group is the anomaly's group, 1 + its index in Verdict.Groups; 0:
	// in none.
	Group int
}

// String renders the anomaly on one line:
// "lost t-0 m2 offsets=[1] replicas=[0 1]: ... [contract broken]".
func (a Anomaly) String() string {
	var b strings.Builder
	b.WriteString(a.Kind)
	if a.Topic != "" {
		b.WriteString(" " + tpString(a.Topic, a.Partition))
	}
	if a.Value != "" {
		b.WriteString(" " + a.Value)
	}
	if len(a.Offsets) > 0 {
		b.WriteString(" offsets=[")
		for i, o := range a.Offsets {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatInt(o, 10))
		}
		b.WriteByte(']')
	}
	if len(a.Replicas) > 0 {
		b.WriteString(" replicas=" + brokerList(a.Replicas))
	}
	if len(a.Steps) > 0 {
		b.WriteString(" steps=[")
		for i, s := range a.Steps {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(strconv.FormatUint(s, 10))
		}
		b.WriteByte(']')
	}
	if len(a.Times) > 0 {
		b.WriteString(" times=[")
		for i, t := range a.Times {
			if i > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(t.String())
		}
		b.WriteByte(']')
	}
	if a.Description != "" {
		b.WriteString(": " + a.Description)
	}
	if a.Permitted {
		b.WriteString(" [permitted]")
	} else {
		b.WriteString(" [contract broken]")
	}
	return b.String()
}

// Verdict is one checker's judgement of a run.
type Verdict struct {
	Checker string
	Result  Result
	// Anomalies are in a deterministic order (partition, then offset or
	// history order).
	Anomalies []Anomaly
	// Omitted counts anomalies not kept (a checker keeps at most
	// MaxAnomalies).
	Omitted int
	// Groups file every anomaly, kept or omitted, by reason (groups.go);
	// nil for a checker that does not group.
	Groups []AnomalyGroup
	// Notes say what was checked and, for Unknown, why it could not judge.
	Notes []string
	// NotJudged marks an Unknown verdict of a checker that does not apply
	// to the history at all (linearizability when every partition holds
	// transactions, which the transactions checker judges): it is shown
	// as "not judged" and left out of exit codes and undecided counts,
	// since it says nothing about the run, as the raft checker is left out
	// of a ZooKeeper run.
	NotJudged bool
	// Porcupine holds what a report needs to draw porcupine's visualization
	// (linearizability only; nil otherwise).
	Porcupine *PorcupineEvidence
}

// MaxAnomalies bounds the anomalies a verdict keeps.
const MaxAnomalies = 200

// PorcupineEvidence is porcupine's output for a linearizability verdict:
// for each partition checked, porcupine.Visualize(Model, p.Info(budget), w)
// draws its history and (partial) linearizations as one HTML file. The
// order of partial linearizations inside the info is not deterministic;
// nothing in Verdict.String depends on it.
type PorcupineEvidence struct {
	Model      porcupine.Model
	Partitions []PartitionEvidence
	// Elapsed is the wall time porcupine took (not deterministic).
	Elapsed time.Duration
}

// PartitionEvidence is porcupine's result for one topic-partition.
type PartitionEvidence struct {
	Topic     string
	Partition int32
	// Result is porcupine's: ok, violation (Illegal) or unknown (timeout).
	Result Result
	// Ops is the number of operations checked.
	Ops int
	// info is porcupine's linearization info of ops (the partition's
	// history as recorded), nil until computed: the check keeps it for a
	// partition it does not find linearizable when it searched the
	// history's own times (linearizability_postpone.go), Info computes it
	// for the others.
	info  *porcupine.LinearizationInfo
	ops   []porcupine.Operation
	model porcupine.Model // unpartitioned
}

// Info returns porcupine's linearization info of the partition's history as
// recorded, for porcupine.Visualize. A linearizable partition is judged on
// an equivalent, narrowed history (checkers/linearizability_narrow.go), so
// its info is searched for on the first call, within budget: past it the
// info is porcupine's partial one. A partition that was not checked (the
// checker's budget was spent) has empty info.
func (p *PartitionEvidence) Info(budget time.Duration) porcupine.LinearizationInfo {
	if p.info == nil {
		var info porcupine.LinearizationInfo
		if p.ops != nil {
			_, info = porcupine.CheckOperationsVerbose(p.model, p.ops, budget)
		}
		p.info = &info
	}
	return *p.info
}

// Broken returns the anomalies outside Kafka's contract (Permitted false).
func (v Verdict) Broken() []Anomaly {
	var out []Anomaly
	for _, a := range v.Anomalies {
		if !a.Permitted {
			out = append(out, a)
		}
	}
	return out
}

// ContractBroken reports whether any anomaly is outside Kafka's contract.
func (v Verdict) ContractBroken() bool { return len(v.Broken()) > 0 }

// Undecided reports whether the checker applied but could not decide:
// Unknown, and not NotJudged.
func (v Verdict) Undecided() bool { return v.Result == ResultUnknown && !v.NotJudged }

// Mark is the verdict's result as a reader sees it: its Result, or "not
// judged".
func (v Verdict) Mark() string {
	if v.NotJudged {
		return "not judged"
	}
	return v.Result.String()
}

// String renders the verdict: a header line, then one indented line per
// note and anomaly. It is deterministic (no wall times).
func (v Verdict) String() string {
	var b strings.Builder
	b.WriteString(v.Checker + ": " + v.Mark())
	if n := len(v.Anomalies) + v.Omitted; n > 0 {
		noun := " anomalies, "
		if n == 1 {
			noun = " anomaly, "
		}
		b.WriteString(" (" + strconv.Itoa(n) + noun + strconv.Itoa(len(v.Broken())) + " listed outside the contract)")
	}
	for _, n := range v.Notes {
		b.WriteString("\n  note: " + n)
	}
	for _, a := range v.Anomalies {
		b.WriteString("\n  " + a.String())
	}
	if v.Omitted > 0 {
		b.WriteString("\n  … " + strconv.Itoa(v.Omitted) + " more")
	}
	return b.String()
}

// NewVerdict builds a Verdict as the checkers here do, for checkers that
// live in other packages (checkers/jepsen): Violation if any anomaly, else
// Unknown if unknown, else OK; it keeps at most MaxAnomalies anomalies.
func NewVerdict(name string, anomalies []Anomaly, unknown bool, notes ...string) Verdict {
	return verdict(name, anomalies, unknown, notes...)
}

// verdict builds a Verdict from what a checker found: Violation if any
// anomaly, else Unknown if unknown, else OK. It caps the anomalies.
func verdict(name string, anomalies []Anomaly, unknown bool, notes ...string) Verdict {
	v := Verdict{Checker: name, Notes: notes}
	if len(anomalies) > MaxAnomalies {
		v.Omitted = len(anomalies) - MaxAnomalies
		anomalies = anomalies[:MaxAnomalies]
	}
	v.Anomalies = anomalies
	switch {
	case len(anomalies) > 0:
		v.Result = ResultViolation
	case unknown:
		v.Result = ResultUnknown
	}
	return v
}

// Options configure CheckAll.
type Options struct {
	// LinearizabilityBudget is porcupine's wall-time budget; 0 means
	// DefaultBudget. Past it the linearizability verdict is Unknown.
	LinearizabilityBudget time.Duration
	// SkipLinearizability leaves porcupine out (its verdict is Unknown).
	SkipLinearizability bool
	// Transactions is the run's transaction history, nil for a run
	// without transactions: the consumer checker lets read_committed
	// consumers read past the records of aborted and open transactions.
	Transactions *TxnHistory
}

// CheckAll runs every checker on a run and returns the verdicts in Names
// order, then, when the history declares consumers, in ConsumerNames order,
// then, when it has share groups, the share checker, then, on a KRaft run (Final.Raft set), the raft checker. monitor is the invariants Monitor fed during the run; nil gives an
// Unknown invariants verdict.
func CheckAll(h History, f Final, monitor *Monitor, opts Options) []Verdict {
	// NB: one contract for every checker (a pure function of f; its
	// cache only memoizes), not one each.
	con := newContract(f)
	var lin Verdict
	if opts.SkipLinearizability {
		lin = verdict(NameLinearizability, nil, true, "skipped")
	} else {
		lin = linearizability(h, f, opts.LinearizabilityBudget, con)
	}
	inv := verdict(NameInvariants, nil, true, "no monitor observed the run")
	if monitor != nil {
		inv = monitor.VerdictWith(h, f)
	}
	out := []Verdict{lin, monitor.committedLoss(ackedLoss(h, f, con), h, f, con), divergence(f, con), inv, duplicates(h, f, con, opts.Transactions), ordering(h, f, con), CheckLiveness(f.Liveness)}
	if len(h.Consumers) > 0 {
		// The consumer checkers (ConsumerNames) judge runs with group consumers.
		// NB: one set of consumer facts for both (read only once built).
		cf := newConsumerFacts(h, f, con)
		cf.withoutUncommittedTxns(opts.Transactions)
		out = append(out, consumers(h, cf), groups(h, cf))
	}
	if len(h.ShareGroups) > 0 || hasShareOps(h) {
		out = append(out, share(h, con, f)) // share groups (KIP-932, share.go)
	}
	if f.Raft != nil {
		out = append(out, Raft(f.Raft)) // KRaft runs (raft.go)
	}
	return out
}

// endPhaseCheckers judge what the end phase sets up: the final log after
// healing (acked-loss), convergence (divergence), the liveness phase, and
// the final reads (consumer's unseen and lost writes, transactions'
// read_committed reads). The others judge what the run did while it ran
// (invariants, linearizability of the operations recorded, duplicates and
// order in what was read, group membership, raft).
var endPhaseCheckers = map[string]bool{NameAckedLoss: true, NameDivergence: true, NameLiveness: true, NameConsumer: true, NameTransactions: true}

// NeedsEndPhase reports whether checker name judges what the end phase
// sets up, so that a run cut short before it cannot be judged by it.
func NeedsEndPhase(name string) bool { return endPhaseCheckers[name] }

// NotJudgedVerdict is the verdict of a checker that does not apply to a
// run, with why (Verdict.NotJudged).
func NotJudgedVerdict(name, why string) Verdict {
	return Verdict{Checker: name, Result: ResultUnknown, NotJudged: true, Notes: []string{why}}
}
