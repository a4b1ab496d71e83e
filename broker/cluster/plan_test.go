package cluster

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
)

// TestPlanBuildsWhatBuildBuilds: a cluster built from one Plan in several
// worlds (on ZooKeeper, with the manual controller and on KRaft, with a
// crash and a restart) runs exactly as one built by Build from the spec:
// the same trace hash each time, so nothing a world did to its cluster
// leaked into the plan.
func TestPlanBuildsWhatBuildBuilds(t *testing.T) {
	cfg, err := config.Parse(nil)
	if err != nil {
		t.Fatal(err)
	}
	kcfg, err := config.Parse(map[string]string{"process.roles": "broker"})
	if err != nil {
		t.Fatal(err)
	}
	topics := []Topic{{Name: "t", Partitions: 2, ReplicationFactor: 3}}
	for _, tc := range []struct {
		name string
		spec Spec
	}{
		{"zookeeper", Spec{Brokers: 3, Topics: topics, Config: cfg, OffsetsTopic: true}},
		{"manual", Spec{Brokers: 3, Topics: topics, Config: cfg, ManualController: true}},
		{"kraft", Spec{Brokers: 3, Topics: topics, Config: kcfg}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			runHash := func(build func(w *sim.World) (*Cluster, error)) uint64 {
				w, err := sim.New(sim.Config{Seed: 7})
				if err != nil {
					t.Fatal(err)
				}
				c, err := build(w)
				if err != nil {
					t.Fatal(err)
				}
				w.RunFor(5 * sim.Second)
				if err := w.Inject(sim.Crash{Node: c.Brokers[1]}); err != nil {
					t.Fatal(err)
				}
				w.RunFor(5 * sim.Second)
				if err := w.Inject(sim.Restart{Node: c.Brokers[1]}); err != nil {
					t.Fatal(err)
				}
				if res := w.RunFor(20 * sim.Second); res.Reason == sim.Panicked {
					t.Fatal(res.Panic)
				}
				return w.Trace().Hash()
			}
			want := runHash(func(w *sim.World) (*Cluster, error) { return Build(w, tc.spec) })
			p, err := NewPlan(tc.spec)
			if err != nil {
				t.Fatal(err)
			}
			for i := 0; i < 3; i++ {
				if got := runHash(p.Build); got != want {
					t.Fatalf("world %d built from the plan: trace hash %x, Build's %x", i, got, want)
				}
			}
		})
	}
}

// TestNewPlanRefusesWhatBuildRefuses: the checks are NewPlan's.
func TestNewPlanRefusesWhatBuildRefuses(t *testing.T) {
	cfg, _ := config.Parse(nil)
	spec := Spec{Brokers: 2, Topics: []Topic{{Name: "t", Partitions: 1, ReplicationFactor: 3}}, Config: cfg}
	w, _ := sim.New(sim.Config{Seed: 1})
	_, errBuild := Build(w, spec)
	_, errPlan := NewPlan(spec)
	if errBuild == nil || errPlan == nil || errBuild.Error() != errPlan.Error() {
		t.Fatalf("Build: %v; NewPlan: %v; want the same error", errBuild, errPlan)
	}
}
