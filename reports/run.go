package reports

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// VerdictJSON is one checker's verdict in JSON output.
type VerdictJSON struct {
	Checker   string   `json:"checker"`
	Result    string   `json:"result"`
	Permitted bool     `json:"permitted"` // every anomaly is within Kafka's contract
	Anomalies []string `json:"anomalies"`
	// Groups file every anomaly (also those past the listed ones) by
	// reason; acked-loss only (checkers.AnomalyGroup).
	Groups []GroupJSON `json:"groups,omitempty"`
	Notes  []string    `json:"notes,omitempty"`
	// NotJudged: the checker does not apply to this history (the result
	// is "unknown", left out of the exit code; checkers.Verdict.NotJudged).
	NotJudged bool `json:"not_judged,omitempty"`
}

// RunJSON is one run in JSON output (kafkasim run -json). Protocol is
// "inter.broker.protocol.version=V (truncation=RULE)", Overridden the -set
// overrides of what the variant sets, SameAs the variants identical to
// this one under -set (run once, as this one).
type RunJSON struct {
	Scenario   string   `json:"scenario"`
	Variant    string   `json:"variant"`
	Seed       uint64   `json:"seed"`
	Config     []string `json:"config"`
	Protocol   string   `json:"protocol"`
	Overridden []string `json:"overridden,omitempty"`
	// NotModelled are the properties accepted but not modelled, key=value;
	// ConfigNotes where a property given did not take effect as given.
	NotModelled []string `json:"not_modelled,omitempty"`
	ConfigNotes []string `json:"config_notes,omitempty"`
	// ProducerNotes say where a producer's release decided its
	// idempotence otherwise than its properties read.
	ProducerNotes []string `json:"producer_notes,omitempty"`
	SameAs        []string `json:"same_as,omitempty"`
	Profile       string   `json:"profile,omitempty"` // the swarm profile, when the scenario has a swarm step
	// ScheduleFrom is the variant whose choice file ran under this one
	// (replay -choices F -variant OTHER); its trace hash is not checked.
	ScheduleFrom string        `json:"schedule_from,omitempty"`
	TraceHash    string        `json:"trace_hash"`
	Events       uint64        `json:"events"`
	SimTimeNs    int64         `json:"sim_time_ns"`
	Verdicts     []VerdictJSON `json:"verdicts"`
	Stats        harness.Stats `json:"stats"`
	Expected     bool          `json:"expected"` // the run passed: harness.Result.OK
	Mismatches   []string      `json:"mismatches,omitempty"`
	// Unexpected are the verdicts that fail the run with no expect line
	// (harness.Unexpected); ExpectNote says why expect lines did not apply.
	Unexpected []string `json:"unexpected,omitempty"`
	ExpectNote string   `json:"expect_note,omitempty"`
	// Exit is the run's exit code by the one rule (harness.ExitRule).
	Exit   int    `json:"exit"`
	Failed string `json:"failed,omitempty"`
	Replay string `json:"replay"`
}

// NewRunJSON converts a result.
func NewRunJSON(r *harness.Result) RunJSON {
	out := RunJSON{Scenario: r.Scenario, Variant: r.Variant, Seed: r.Seed, Config: r.Config, Profile: r.Profile,
		TraceHash: fmt.Sprintf("%016x", r.TraceHash), Events: r.Events, SimTimeNs: int64(r.SimTime),
		Protocol: r.Protocol, Overridden: r.Overridden, NotModelled: r.NotModelled, ConfigNotes: r.ConfigNotes, ProducerNotes: r.ProducerNotes, SameAs: r.SameAs, ScheduleFrom: r.ScheduleFrom,
		Stats: r.Stats, Expected: r.OK(), Mismatches: r.Mismatches, Failed: r.Failed, Replay: r.Replay,
		Unexpected: harness.Unexpected(r), ExpectNote: r.ExpectNote, Exit: r.Exit()}
	if out.Config == nil {
		out.Config = []string{}
	}
	out.Verdicts = NewVerdictsJSON(r.Verdicts)
	return out
}

// NewVerdictsJSON converts verdicts.
func NewVerdictsJSON(verdicts []checkers.Verdict) []VerdictJSON {
	var out []VerdictJSON
	for _, v := range verdicts {
		vj := VerdictJSON{Checker: v.Checker, Result: v.Result.String(), Permitted: !v.ContractBroken(), Anomalies: []string{}, Notes: v.Notes, NotJudged: v.NotJudged,
			Groups: newGroupsJSON(v.Groups)}
		for _, a := range v.Anomalies {
			vj.Anomalies = append(vj.Anomalies, a.String())
		}
		out = append(out, vj)
	}
	return out
}

// WriteRunJSON writes one run as a JSON object on one line.
func WriteRunJSON(w io.Writer, r *harness.Result) error {
	b, err := json.Marshal(NewRunJSON(r))
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// maxListed is how many anomalies per checker the text output shows.
const maxListed = 5

// WriteRunText writes a run's verdicts and counts for people.
func WriteRunText(w io.Writer, r *harness.Result) {
	fmt.Fprintf(w, "scenario %s, variant %s, seed %d: %d events, %v simulated, trace %016x (times below: simulated)\n", r.Scenario, r.Variant, r.Seed, r.Events, r.SimTime, r.TraceHash)
	if r.ScheduleFrom != "" {
		fmt.Fprintf(w, "  schedule from variant %s, run under %s (the trace hash is not checked: the file's is the %s run's)\n", r.ScheduleFrom, r.Variant, r.ScheduleFrom)
	}
	if len(r.SameAs) > 0 {
		fmt.Fprintf(w, "  variants %s identical under -set %s: run once\n", strings.Join(append([]string{r.Variant}, r.SameAs...), ", "), scenarios.SetLabel(r.Set))
	}
	if len(r.Overridden) > 0 {
		fmt.Fprintf(w, "  variant %s, overridden: %s\n", r.Variant, strings.Join(r.Overridden, ", "))
	}
	if r.Protocol != "" {
		fmt.Fprintf(w, "  protocol: %s\n", r.Protocol)
	}
	if len(r.Config)+len(r.GivenDefaults) > 0 {
		line := slices.Clone(r.Config)
		for _, kv := range r.GivenDefaults {
			line = append(line, kv+" (default)")
		}
		fmt.Fprintf(w, "  config: %s\n", strings.Join(line, " "))
	}
	for _, kv := range r.Config {
		// A planted bug makes the run a test of the checkers, not of Kafka.
		if k, v, _ := strings.Cut(kv, "="); strings.HasPrefix(k, mutant.Prefix) && v == "true" {
			if m, ok := mutant.ByName(strings.TrimPrefix(k, mutant.Prefix)); ok {
				fmt.Fprintf(w, "  MUTANT %s (a planted bug, not Kafka): %s\n", m.Name, m.Mistake)
			}
		}
	}
	if len(r.NotModelled) > 0 {
		fmt.Fprintf(w, "  accepted, not modelled: %s\n", strings.Join(r.NotModelled, ", "))
	}
	for _, n := range r.ConfigNotes {
		fmt.Fprintf(w, "  note: %s\n", n)
	}
	for _, n := range r.ProducerNotes {
		fmt.Fprintf(w, "  note: producer %s\n", n)
	}
	if r.Profile != "" {
		fmt.Fprintf(w, "  profile: %s\n", r.Profile)
	}
	WriteVerdictsText(w, r.Verdicts)
	fmt.Fprintf(w, "  acknowledged %d, acknowledged and lost %d, divergent offsets %d\n", r.Stats.Acked, r.Stats.AckedLost, r.Stats.DivergentOffsets)
	writeAckedBy(w, r.Stats)
	writeSends(w, r.Stats)
	if r.Stats.TxnCommitted+r.Stats.TxnAborted+r.Stats.TxnUnknown > 0 {
		fmt.Fprintf(w, "  transactions committed %d, aborted %d, outcome unknown %d (their records are not counted as acknowledged sends)\n", r.Stats.TxnCommitted, r.Stats.TxnAborted, r.Stats.TxnUnknown)
	}
	if r.Failed != "" {
		fmt.Fprintf(w, "  RUN FAILED: %s\n", r.Failed)
	}
	if len(r.Mismatches) > 0 {
		fmt.Fprintf(w, "  not as the scenario expects: %s\n", strings.Join(r.Mismatches, "; "))
	}
	if u := harness.Unexpected(r); len(u) > 0 {
		fmt.Fprintf(w, "  fails the run (no expect line names it): %s\n", strings.Join(u, "; "))
	}
	if r.ExpectNote != "" {
		fmt.Fprintf(w, "  note: %s\n", r.ExpectNote)
	}
	if anyViolation(r) || r.Failed != "" {
		fmt.Fprintf(w, "  replay: %s\n", r.Replay)
	}
}

// maxAckedBy is how many clients and topics the acknowledged count's
// breakdown lists.
const maxAckedBy = 10

// writeAckedBy says what the acknowledged count counts, in a served run
// (harness.Stats.AckedBy): by client and topic, the retries acknowledged
// again, and the end phase's probes, which it leaves out.
func writeAckedBy(w io.Writer, st harness.Stats) {
	if len(st.AckedBy) == 0 && st.Probes == 0 && st.SetAside == 0 {
		return
	}
	var parts []string
	for i, a := range st.AckedBy {
		if i == maxAckedBy {
			parts = append(parts, fmt.Sprintf("and %d more (-history has them all)", len(st.AckedBy)-i))
			break
		}
		parts = append(parts, fmt.Sprintf("%s on %s %d", a.Process, a.Topic, a.Acked))
	}
	line := "  acknowledged by client and topic: none"
	if len(parts) > 0 {
		line = "  acknowledged by client and topic: " + strings.Join(parts, ", ")
	}
	if st.AckedAgain > 0 {
		line += fmt.Sprintf("; %d of them an idempotent producer's retry, acknowledged again at the first send's offset", st.AckedAgain)
	}
	if st.Probes > 0 {
		line += fmt.Sprintf("; not counted: the end phase's %d probes", st.Probes)
	}
	if st.SetAside > 0 {
		line += fmt.Sprintf("; set aside: %d operations (sends and reads) on topics deleted after them (DeleteTopics: deleting is not losing)", st.SetAside)
	}
	fmt.Fprintln(w, line)
}

// writeSends says what became of each producer's sends, so that a run in
// which nothing got through says so rather than "acknowledged 0".
func writeSends(w io.Writer, st harness.Stats) {
	if len(st.Sends) == 0 {
		return
	}
	var parts []string
	attempted, acked := 0, 0
	for i, c := range st.Sends {
		attempted += c.Attempted
		acked += c.Acked
		if i == maxAckedBy {
			parts = append(parts, fmt.Sprintf("and %d more producers (-json has them all)", len(st.Sends)-i))
			continue
		}
		if i > maxAckedBy {
			continue
		}
		s := fmt.Sprintf("%s %d sent: %d acknowledged, %d failed, %d unknown (timed out, or unanswered when the run ended)", c.Process, c.Attempted, c.Acked, c.Failed, c.Unknown)
		if c.Unanswered > 0 {
			s += fmt.Sprintf(", %d unanswered (acks=0)", c.Unanswered)
		}
		if c.Scheduled > 0 {
			s += fmt.Sprintf(", %d never attempted of %d scheduled", c.NeverAttempted, c.Scheduled)
		}
		parts = append(parts, s)
	}
	fmt.Fprintf(w, "  sends: %s\n", strings.Join(parts, "; "))
	if acked == 0 && attempted > 0 {
		fmt.Fprintf(w, "  nothing got through: none of the %d sends was acknowledged\n", attempted)
	}
}

func anyViolation(r *harness.Result) bool {
	for _, v := range r.Verdicts {
		if v.Result == checkers.ResultViolation {
			return true
		}
	}
	return false
}

// WriteVerdictsText writes one line per verdict and its first anomalies,
// and under an unknown verdict its notes: "unknown" alone would not say
// whether the checker ran out of budget, had no replica to judge, or was
// never meant to judge this history (every partition transactional).
func WriteVerdictsText(w io.Writer, verdicts []checkers.Verdict) {
	WriteVerdictsTextOpts(w, verdicts, 16, false)
}

// WriteVerdictsTextOpts is WriteVerdictsText with the checker names padded
// to width, and with notes set, each failed verdict's notes as well.
func WriteVerdictsTextOpts(w io.Writer, verdicts []checkers.Verdict, width int, notes bool) {
	for _, v := range verdicts {
		mark := v.Mark()
		if v.Result == checkers.ResultViolation && !v.ContractBroken() {
			mark += " (permitted by Kafka's contract)"
		}
		fmt.Fprintf(w, "  %-*s %s\n", width, v.Checker, mark)
		if len(v.Groups) > 0 {
			writeGroupsText(w, v)
			v.Anomalies, v.Omitted = nil, 0 // the groups stand for them
		}
		for i, a := range v.Anomalies {
			if i == maxListed {
				break
			}
			fmt.Fprintf(w, "      %s\n", a.String())
		}
		if more := v.Omitted + max(0, len(v.Anomalies)-maxListed); more > 0 {
			fmt.Fprintf(w, "      ... and %d more (-json lists them)\n", more)
		}
		if v.Result == checkers.ResultUnknown || notes && v.Result != checkers.ResultOK {
			for _, n := range v.Notes {
				fmt.Fprintf(w, "      note: %s\n", n)
			}
		}
	}
}
