package scenarios

import (
	"os"
	"regexp"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
)

// BenchmarkSwarm is issue 5's benchmark: one swarm run (kip279-safe: 3
// brokers, 3 partitions, RF=3, 60 s of faults and load, then healing) per
// op, with every checker. Run with -cpu 1 for the one-core figure. It
// reports runs per second, the simulated-to-wall speedup and the peak heap
// of a run. The linearizability budget is the suite's (2 s): a seed whose
// history makes porcupine search long spends up to that.
func BenchmarkSwarm(b *testing.B) {
	s := Swarm()
	var simulated float64
	var peak uint64
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		res, err := s.Run("kip279-safe", Options{Seed: uint64(i + 1), Budget: 2 * time.Second})
		if err != nil || res.Failed != "" {
			b.Fatal(err, res.Failed)
		}
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		peak = max(peak, after.HeapInuse)
		simulated += float64(res.SimTime) / 1e9
	}
	wall := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.N)/wall, "runs/s")
	b.ReportMetric(simulated/wall, "speedup")
	b.ReportMetric(float64(peak)/(1<<20), "heap-MB")
}

// BenchmarkSafeSwarms is issue 12's false-alarm count: every safe swarm
// and group-swarm variant over 300 seeds (set KAFKASIM_SEEDS to change),
// two worlds at once. It fails on any contract-breaking verdict outside
// bugCheckers and reports, per variant, the runs with a contract break
// ("bug"), the runs showing a bug the modelled Kafka release has
// ("kafka-bug": KAFKA-6361 under kip101-safe), the runs some checker could not judge ("unknown") and the runs
// whose liveness failed. Not part of `go test ./...` (minutes, not
// seconds): go test ./scenarios -run XXX -bench SafeSwarms -benchtime 1x
func BenchmarkSafeSwarms(b *testing.B) {
	seeds := 300
	if n, err := strconv.Atoi(os.Getenv("KAFKASIM_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	group := builtinScript(b, "group-swarm")
	for i := 0; i < b.N; i++ {
		for _, c := range []struct {
			s *Script
			v string
		}{{Swarm(), "kip279-safe"}, {Swarm(), "kip101-safe"}, {group, "eager"}, {group, "cooperative"}, {group, "zk-offsets"}} {
			cases, err := RunSuite([]*Script{c.s}, SuiteOptions{Seeds: seeds, Parallel: 2, Filter: regexp.MustCompile("^" + regexp.QuoteMeta(c.s.Name+"/"+c.v) + "$")})
			if err != nil {
				b.Fatal(err)
			}
			bugs, known, unknown, stuck := 0, 0, 0, 0
			for _, cr := range cases {
				for _, r := range cr.Runs {
					broken, kafka, unk := false, false, false
					for _, v := range r.Verdicts {
						kafka = kafka || (v.ContractBroken() && bugCheckers[c.s.Name+"/"+c.v+" "+v.Checker])
						if v.ContractBroken() && !bugCheckers[c.s.Name+"/"+c.v+" "+v.Checker] {
							broken = true
							b.Errorf("%s/%s seed %d: %s:\n%s", c.s.Name, c.v, r.Seed, v.Checker, v)
						}
						unk = unk || v.Result == checkers.ResultUnknown
						if v.Checker == checkers.NameLiveness && v.Result != checkers.ResultOK {
							stuck++
						}
					}
					if broken {
						bugs++
					}
					if kafka {
						known++
					}
					if unk {
						unknown++
					}
				}
			}
			b.ReportMetric(float64(bugs), c.v+"-bug-runs")
			b.ReportMetric(float64(known), c.v+"-kafka-bug-runs")
			b.ReportMetric(float64(unknown), c.v+"-unknown-runs")
			b.ReportMetric(float64(stuck), c.v+"-liveness-failures")
		}
	}
}
