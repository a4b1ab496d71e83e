package bench

// This file lists the standard workloads. Each is the workload of the
// benchmark named beside it in the test files, so `go test -bench` and
// `kafkasim bench` measure the same thing.

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/explore"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/scenarios/workload"
	"github.com/kafkasim/kafkasim/sim"
)

// Sample is what one run of a workload simulated.
type Sample struct {
	Simulated sim.Duration
	Events    uint64
	// Records is the unit of the per-record figures: records sent, events
	// (the kernel), operations checked, or explored runs.
	Records int
	// Runs is set by the explore workload: runs explored.
	Runs int
}

// Workload is one standard workload.
type Workload struct {
	Name string
	What string
	// Unit names Sample.Records ("record", "event", "op", "run").
	Unit string
	// Setup, if set, runs once before the measured runs (not measured)
	// and returns the measured function.
	Setup func() (func() (Sample, error), error)
	Run   func() (Sample, error)
}

// Workloads are the standard workloads, in the order the table shows them.
var Workloads = []Workload{
	{Name: "bare-loop", Unit: "event", What: fmt.Sprintf("a bare binary-heap event loop with interface dispatch, %d events in flight, 2M events (the yardstick)", QueueDepth), Run: bareLoopPingPong},
	{Name: "kernel", Unit: "event", What: fmt.Sprintf("sim.World ping-pong between two nodes, %d messages in flight, a latency drawn per message, 2M events", QueueDepth), Run: kernelPingPong},
	{Name: "cluster60s-zk", Unit: "record", What: "3 brokers, 6 partitions RF3, 10,000 × 100 B acks=all over 60 s, ZooKeeper (BenchmarkCluster60s)", Run: func() (Sample, error) { return cluster60s(false) }},
	{Name: "cluster60s-kraft", Unit: "record", What: "the same on KRaft: metadata.version 4.0, 3 controllers", Run: func() (Sample, error) { return cluster60s(true) }},
	{Name: "swarm", Unit: "record", What: "swarm runs (kip279-safe, seeds 1-10), every checker (BenchmarkSwarm)", Run: swarm},
	{Name: "group-swarm", Unit: "record", What: "3 consumers in a group, 6 partitions, swarm faults (BenchmarkConsumerGroupSwarm)", Run: groupSwarm},
	{Name: "explore", Unit: "run", What: "explore kip101-hw-lag (kip279: no violation) exhaustively to depth 6, one worker", Run: exploreHWLag},
	{Name: "checkers-10k", Unit: "op", What: "every checker on the 10,000-send history of a cluster run (porcupine included)", Setup: checkers10k},
}

func cluster60s(kraft bool) (Sample, error) {
	w, d, err := cluster.Workload60s(1, kraft)
	if err != nil {
		return Sample{}, err
	}
	if res := w.RunFor(60 * sim.Second); res.Reason == sim.Panicked {
		return Sample{}, fmt.Errorf("%v", res.Panic)
	}
	if err := cluster.CheckWorkload60s(d); err != nil {
		return Sample{}, err
	}
	return Sample{Simulated: sim.Duration(w.Now()), Events: w.Events(), Records: cluster.Workload60sRecords}, nil
}

func runScript(s *scenarios.Script, variant string, budget time.Duration, seeds int) (Sample, error) {
	var out Sample
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		res, err := harness.Run(s, variant, harness.Options{Seed: seed, Budget: budget})
		if err != nil {
			return Sample{}, err
		}
		if res.Failed != "" {
			return Sample{}, fmt.Errorf("seed %d: %s", seed, res.Failed)
		}
		for _, op := range res.History.Ops {
			if op.Kind == checkers.Send {
				out.Records++
			}
		}
		out.Simulated += sim.Duration(res.SimTime)
		out.Events += res.Events
	}
	return out, nil
}

// swarmSeeds is how many seeds the swarm workload runs: one seed's
// linearizability search can cost many times another's, so its speed is
// the mean over several, as BenchmarkSwarm's.
const swarmSeeds = 10

func swarm() (Sample, error) {
	return runScript(scenarios.Swarm(), "kip279-safe", 2*time.Second, swarmSeeds)
}

func groupSwarm() (Sample, error) {
	s, err := scenarios.Parse("group-swarm-bench.txt", "group-swarm-bench", strings.NewReader(scenarios.GroupSwarmBench))
	if err != nil {
		return Sample{}, err
	}
	return runScript(s, "", time.Millisecond, 1)
}

func exploreHWLag() (Sample, error) {
	s, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		return Sample{}, err
	}
	ex, err := explore.Run(s, explore.Config{Variant: "kip279", Parallel: 1, NoOrders: true,
		Params: workload.ExploreParams{Depth: 6, Records: 2}})
	if err != nil {
		return Sample{}, err
	}
	return Sample{Records: ex.Runs, Runs: ex.Runs}, nil
}

// checkers10kScript sends 10,000 records to 4 partitions with acks=all.
const checkers10kScript = `describe 10,000 acknowledged sends for the checkers benchmark
brokers 3
topic t partitions=4 rf=3
set min.insync.replicas=2
producer p1 acks=all
run 3s
send p1 t/0 2500 interval=2ms
send p1 t/1 2500 interval=2ms
send p1 t/2 2500 interval=2ms
send p1 t/3 2500 interval=2ms
run 10s
`

// checkers10k runs the script once (not measured) and measures the
// checkers on its history.
func checkers10k() (func() (Sample, error), error) {
	s, err := scenarios.Parse("checkers-bench.txt", "checkers-bench", strings.NewReader(checkers10kScript))
	if err != nil {
		return nil, err
	}
	res, err := harness.Run(s, "", harness.Options{Seed: 1, Budget: time.Minute})
	if err != nil {
		return nil, err
	}
	if res.Failed != "" {
		return nil, fmt.Errorf("%s", res.Failed)
	}
	return func() (Sample, error) {
		for _, v := range checkers.CheckAll(res.History, res.Final, nil, checkers.Options{LinearizabilityBudget: time.Minute}) {
			if v.Result == checkers.ResultViolation {
				return Sample{}, fmt.Errorf("%s: %s", v.Checker, v.Result)
			}
		}
		return Sample{Records: len(res.History.Ops)}, nil
	}, nil
}
