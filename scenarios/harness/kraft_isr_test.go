package harness

import (
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

func rec(t sim.Time, name, kind string, kv ...string) sim.Record {
	r := sim.Record{Time: t, Name: name, Kind: kind}
	for i := 0; i+1 < len(kv); i += 2 {
		r.Fields = append(r.Fields, sim.S(kv[i], kv[i+1]))
	}
	return r
}

// TestKRaftISRChangeStandsWhereItWasAppended: a committed ISR change is
// dated by its append to the metadata log, not by its commit (kraft-swarm
// kraft-dynamic-wipe seed 276: an expansion appended at 19 s without a
// majority commits at 54 s); a proposal that another leader truncated and
// that never commits is no fact, and a commit whose proposal the trace
// lacks keeps its commit time.
func TestKRaftISRChangeStandsWhereItWasAppended(t *testing.T) {
	s := sim.Time(sim.Second)
	change := func(at sim.Time, epoch, isr string) sim.Record {
		return rec(at, "ctl2", "partition-change", "partition", "t-0", "leader", "0", "leader-epoch", "0", "partition-epoch", epoch, "isr", isr, "reason", "alter-partition")
	}
	commit := func(at sim.Time, name, epoch, isr string) sim.Record {
		return rec(at, name, "partition-committed", "partition", "t-0", "offset", "24", "leader", "0", "leader-epoch", "0", "partition-epoch", epoch, "isr", isr, "recovery", "0")
	}
	recs := []sim.Record{
		commit(2*s, "ctl0", "2", "[0]"), // no partition-change in the trace: its commit time
		change(10*s, "3", "[0,1]"),      // proposed by a leader that lost its epoch: truncated
		change(19*s, "3", "[0,2]"),      // the next leader's, committed at 54 s
		commit(54*s, "ctl2", "3", "[0,2]"),
		commit(55*s, "ctl1", "3", "[0,2]"), // another controller replaying it
	}
	got := kraftISRChanges(recs)
	if len(got) != 2 {
		t.Fatalf("kraftISRChanges: %d changes %v, want 2", len(got), got)
	}
	if got[0].Time != 2*s || len(got[0].ISR) != 1 {
		t.Errorf("first change %+v: want ISR [0] at its commit, 2s", got[0])
	}
	if got[1].Time != 19*s || len(got[1].ISR) != 2 || got[1].ISR[1] != 2 {
		t.Errorf("second change %+v: want ISR [0 2] at its append, 19s, not its commit at 54s", got[1])
	}
}
