package explore

import (
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/workload"
)

// kraftDynamicScript is kraftScript with a dynamic quorum (KIP-853,
// kafkasim.kraft.version=1).
const kraftDynamicScript = "../testdata/kraft-explore-dynamic.txt"

// reconfigBound adds KIP-853's voter changes (up to two a run: a
// controller removed and added back, or two removals) to the KRaft tests'
// crashes and cuts.
var reconfigBound = workload.ExploreParams{Depth: 3, Records: 1, Faults: []string{"crash", "partition", "reconfig"}}

func exploreDynamic(t testing.TB, set map[string]string, p workload.ExploreParams) *Exploration {
	t.Helper()
	s, err := scenarios.Load(kraftDynamicScript)
	if err != nil {
		t.Fatal(err)
	}
	ex, err := Run(s, Config{Set: set, Params: p, Parallel: 2, NoOrders: true})
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// TestExploreKRaftReconfigSafe: KIP-853's claim on a 3-voter quorum with
// one reconfiguration (a voter removed and added back, one uncommitted
// change at a time) among crashes and cuts: Election Safety, Leader
// Completeness, State Machine Safety, Log Matching and no acknowledged
// record lost, for every sequence of 3 actions; the voter changes reach
// states the same bound without them does not.
func TestExploreKRaftReconfigSafe(t *testing.T) {
	with := exploreDynamic(t, nil, reconfigBound)
	if with.Found != nil || !with.Exhausted {
		t.Fatalf("one reconfiguration: %+v (%s)", with.Report, with.Checker)
	}
	p := reconfigBound
	p.Faults = []string{"crash", "partition"}
	without := exploreDynamic(t, nil, p)
	if with.States <= without.States {
		t.Fatalf("reconfig explored %d states, without it %d: the voter changes reach nothing new", with.States, without.States)
	}
	t.Logf("reconfig: %d runs, %d states; without: %d runs, %d states", with.Runs, with.States, without.Runs, without.States)
}

// TestExploreReconfigNeedsDynamicQuorum: reconfig is refused, as bad
// input naming what is allowed, on a static quorum and in ZooKeeper mode.
func TestExploreReconfigNeedsDynamicQuorum(t *testing.T) {
	for _, tc := range []struct{ script, want string }{
		{kraftScript, "kafkasim.kraft.version=1"},
		{"kip101-hw-lag", "KRaft cluster with a dynamic quorum"},
	} {
		s, err := scenarios.Load(tc.script)
		if err != nil {
			t.Fatal(err)
		}
		p := workload.ExploreParams{Depth: 2, Faults: []string{"crash", "reconfig"}}
		if _, err := Run(s, Config{Params: p}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s with reconfig: %v, want an error naming %q", tc.script, err, tc.want)
		}
	}
}

// TestExploreKRaftFindsOverlappingVoterChanges: with the planted bug
// raft-voter-changes-overlap (a leader accepts a voter change while
// another is uncommitted) the explorer finds the leader's second change
// within the bound, as the raft checker's voter-change-overlap.
func TestExploreKRaftFindsOverlappingVoterChanges(t *testing.T) {
	ex := exploreDynamic(t, map[string]string{"kafkasim.mutant.raft-voter-changes-overlap": "true"}, reconfigBound)
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
	if !slices.Contains(kinds, "voter-change-overlap") {
		t.Fatalf("raft anomalies %v, want voter-change-overlap", kinds)
	}
	t.Logf("%d runs, %d states: %s", ex.Runs, ex.States, strings.Join(workload.ExploreActions(ex.Found), "; "))
}

// TestExploreKRaftReconfigDeterministic: a search with voter changes gives
// the same counts on 1 and on 3 workers.
func TestExploreKRaftReconfigDeterministic(t *testing.T) {
	s, err := scenarios.Load(kraftDynamicScript)
	if err != nil {
		t.Fatal(err)
	}
	p := reconfigBound
	p.Depth = 2
	var runs, states [2]int
	for i, parallel := range []int{1, 3} {
		ex, err := Run(s, Config{Params: p, Parallel: parallel, NoOrders: true})
		if err != nil {
			t.Fatal(err)
		}
		runs[i], states[i] = ex.Runs, ex.States
	}
	if runs[0] != runs[1] || states[0] != states[1] {
		t.Fatalf("parallel 1: %d runs %d states; parallel 3: %d runs %d states", runs[0], states[0], runs[1], states[1])
	}
}
