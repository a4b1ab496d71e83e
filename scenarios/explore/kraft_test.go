package explore

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/workload"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
)

// kraftScript is the KRaft exploration cluster: 3 controllers, 2 brokers,
// one partition (rf=2), pre-vote off as before 4.0.
const kraftScript = "../testdata/kraft-explore.txt"

// kraftBound is the bound the KRaft tests explore: 4 actions, 1 record,
// crashes and cuts between voters (KRaftDefaultFaults).
var kraftBound = workload.ExploreParams{Depth: 4, Records: 1}

func exploreKRaft(t testing.TB, set map[string]string, p workload.ExploreParams, parallel int) *Exploration {
	t.Helper()
	s, err := scenarios.Load(kraftScript)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Run(s, Config{Set: set, Params: p, Parallel: parallel, NoOrders: true})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// TestExploreKRaftFindsPlantedVoteBug: with the planted bug (a voter grants
// its vote without Raft's log up-to-date check, KIP-595's Vote handling)
// the explorer finds a voter with a shorter log elected over committed
// records — a Leader Completeness (or State Machine Safety) violation, or
// a follower halting on the fatal error of a truncation below its high
// watermark that the new leader asks for (the raft checker's "fatal") —
// within 4 actions.
func TestExploreKRaftFindsPlantedVoteBug(t *testing.T) {
	ex := exploreKRaft(t, map[string]string{"kafkasim.raft.vote.check.log": "false"}, kraftBound, 2)
	if ex.Found == nil || ex.Checker != checkers.NameRaft {
		t.Fatalf("no raft violation found: %+v (%s)", ex.Report, ex.Checker)
	}
	var kinds []string
	for _, v := range ex.Found.Verdicts {
		if v.Checker == checkers.NameRaft {
			for _, a := range v.Anomalies {
				kinds = append(kinds, a.Kind)
			}
		}
	}
	if !slices.Contains(kinds, "leader-completeness") && !slices.Contains(kinds, "state-machine-safety") {
		t.Fatalf("raft anomalies %v, want leader-completeness or state-machine-safety", kinds)
	}
	if acts := workload.ExploreActions(ex.Found); len(acts) == 0 || ex.Violation.Depth > kraftBound.Depth {
		t.Fatalf("actions %v, depth %d", acts, ex.Violation.Depth)
	}
	t.Logf("%d runs, %d states: %s", ex.Runs, ex.States, strings.Join(workload.ExploreActions(ex.Found), "; "))
}

// TestExploreKRaftSafeUpToDepth4: with Raft's log check the quorum keeps
// Election Safety, Leader Completeness, State Machine Safety and Log
// Matching, and no acknowledged record is lost, for every action sequence
// of the same bound.
func TestExploreKRaftSafeUpToDepth4(t *testing.T) {
	p := kraftBound
	if testing.Short() {
		p.Depth = 3
	}
	ex := exploreKRaft(t, nil, p, 2)
	if ex.Found != nil || !ex.Exhausted {
		t.Fatalf("safe configuration: %+v (%s)", ex.Report, ex.Checker)
	}
	if ex.States < 500 {
		t.Fatalf("only %d states explored", ex.States)
	}
}

// TestExploreKRaftDeterministic: the same KRaft search gives the same
// counts twice, on 1 and on 3 workers.
func TestExploreKRaftDeterministic(t *testing.T) {
	p := workload.ExploreParams{Depth: 3, Records: 1}
	a, b := exploreKRaft(t, nil, p, 1), exploreKRaft(t, nil, p, 3)
	if a.Runs != b.Runs || a.States != b.States {
		t.Fatalf("parallel 1: %d runs %d states; parallel 3: %d runs %d states", a.Runs, a.States, b.Runs, b.States)
	}
}

// TestExploreKRaftRefusesElect: the quorum controller elects partition
// leaders, so elect and unclean are not KRaft actions.
func TestExploreKRaftRefusesElect(t *testing.T) {
	s, err := scenarios.Load(kraftScript)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Run(s, Config{Params: workload.ExploreParams{Depth: 2, Faults: []string{"crash", "elect"}}}); err == nil || !strings.Contains(err.Error(), "elects") {
		t.Fatalf("elect on KRaft: %v", err)
	}
	if abs, _ := filepath.Abs(kraftScript); s.ReplayName() != abs {
		t.Fatalf("replay name %q", s.ReplayName())
	}
}

// BenchmarkExploreKRaft measures the KRaft exploration's runs/s and
// states/s (depth 3, 1 record, crashes and cuts, one worker).
func BenchmarkExploreKRaft(b *testing.B) {
	runs, states := 0, 0
	var secs float64
	for i := 0; i < b.N; i++ {
		ex := exploreKRaft(b, nil, workload.ExploreParams{Depth: 3, Records: 1}, 1)
		runs, states, secs = runs+ex.Runs, states+ex.States, secs+ex.Elapsed.Seconds()
	}
	b.ReportMetric(float64(runs)/secs, "runs/s")
	b.ReportMetric(float64(states)/secs, "states/s")
}
