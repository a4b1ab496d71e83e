package bench

import "testing"

// TestGoalsJudge: each goal says met, not met, or cannot tell, from the
// figures it names.
func TestGoalsJudge(t *testing.T) {
	for _, c := range []struct {
		name    string
		g       *Goal
		r       Result
		met, ok bool
	}{
		{"fast enough", speedGoal(1000), Result{Speedup: 1000}, true, true},
		{"too slow", speedGoal(1000), Result{Speedup: 999}, false, true},
		{"cluster met", cluster60sGoal, Result{Speedup: 1200, AllocsPerRecord: 3, PeakHeapMB: 40}, true, true},
		{"cluster too many allocs", cluster60sGoal, Result{Speedup: 1200, AllocsPerRecord: 11, PeakHeapMB: 40}, false, true},
		{"cluster too much heap", cluster60sGoal, Result{Speedup: 1200, AllocsPerRecord: 3, PeakHeapMB: 65}, false, true},
		{"cluster too slow", cluster60sGoal, Result{Speedup: 500, AllocsPerRecord: 1, PeakHeapMB: 30}, false, true},
		{"kernel met", kernelGoal, Result{VsBareLoop: 0.5}, true, true},
		{"kernel slow", kernelGoal, Result{VsBareLoop: 0.1}, false, true},
		{"kernel allocates", kernelGoal, Result{VsBareLoop: 0.5, AllocsPerRecord: 0.1}, false, true},
		{"kernel alone", kernelGoal, Result{}, false, false},
		{"explore met", exploreGoal, Result{RunsPerS: 10000}, true, true},
		{"explore slow", exploreGoal, Result{RunsPerS: 1200}, false, true},
	} {
		met, ok := c.g.Met(c.r)
		if ok != c.ok || (ok && met != c.met) {
			t.Errorf("%s: %s on %+v gives met=%v ok=%v, want met=%v ok=%v", c.name, c.g.Text, c.r, met, ok, c.met, c.ok)
		}
	}
}

// TestEveryTargetHasAGoal: the workloads issue 17 sets a target for carry
// it; the yardsticks do not.
func TestEveryTargetHasAGoal(t *testing.T) {
	want := map[string]bool{"kernel": true, "cluster60s-zk": true, "cluster60s-kraft": true, "swarm": true, "group-swarm": true, "explore": true}
	for _, w := range Workloads {
		if (w.Goal != nil) != want[w.Name] {
			t.Errorf("%s: goal %v, want one: %v", w.Name, w.Goal != nil, want[w.Name])
		}
	}
}
