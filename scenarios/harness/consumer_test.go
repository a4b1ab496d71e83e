package harness

import (
	"strings"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/checkers"
)

func parseInline(t testing.TB, name, text string) *scenarios.Script {
	s, err := scenarios.Parse(name+".txt", name, strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// BenchmarkConsumerGroupSwarm: 3 consumers, a 6-partition topic, 10,000
// records sent under swarm faults; reports runs per second and the
// simulated-to-wall speedup.
func BenchmarkConsumerGroupSwarm(b *testing.B) {
	s := parseInline(b, "consumer-bench", scenarios.GroupSwarmBench)
	var sim, wall time.Duration
	for i := 0; i < b.N; i++ {
		start := time.Now()
		res, err := Run(s, "", Options{Seed: uint64(i + 1), Budget: time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		wall += time.Since(start)
		sim += time.Duration(res.SimTime)
		if res.Failed != "" {
			b.Fatalf("seed %d: %s", i+1, res.Failed)
		}
		if i == 0 {
			sends, consumed := 0, 0
			for _, op := range res.History.Ops {
				switch {
				case op.Kind == checkers.Send:
					sends++
				case op.Kind == checkers.Consume && op.Outcome == checkers.OK:
					consumed += len(op.Records)
				}
			}
			b.Logf("seed 1: %d sends, %d records consumed, %d events", sends, consumed, res.Events)
		}
	}
	b.ReportMetric(float64(b.N)/wall.Seconds(), "runs/s")
	b.ReportMetric(sim.Seconds()/wall.Seconds(), "sim/wall")
}

// TestConsumerStepErrors: bad consumer steps are refused with a reason.
func TestConsumerStepErrors(t *testing.T) {
	cases := []struct {
		step, want string
		before     bool // refused before the run: bad input
	}{
		{"consumer c1 topic=t", "group.id", true},
		{"consumer c1 group.id=g topic=nope", "topic", true},
		{"consumer c1 group.id=g topic=t pattern=exactly-once", "pattern", true},
		{"consumer c1 group.id=g topic=t partition.assignment.strategy=fastest", "assignor", true},
		{"consumer c1 group.id=g topic=t session.timeout.ms=1000", "session.timeout.ms", true},
		{"consumer c1 group.id=g topic=t session.timeout.ms=2000 heartbeat.interval.ms=500", "INVALID_SESSION_TIMEOUT", true},
		{"consumer c1 group.id=g topic=t offsets.storage=redis", "kafka, zookeeper", true},
		{"kill-consumer nobody", `no consumer "nobody" before this line`, true}, // scenarios/validate.go, since issue 13
	}
	for _, c := range cases {
		s, err := scenarios.Parse("bad.txt", "bad", strings.NewReader("brokers 1\ntopic t\nset offsets.topic.replication.factor=1\nrun 1s\n"+c.step+"\nrun 1s\n"))
		res := &Result{}
		if err == nil {
			res, err = Run(s, "", Options{Seed: 1})
		}
		msg := ""
		switch {
		case err != nil:
			msg = err.Error()
		case res.Failed != "":
			msg = res.Failed
		}
		if !strings.Contains(msg, c.want) {
			t.Errorf("%q: error %q, want one mentioning %q", c.step, msg, c.want)
		}
		if c.before && err == nil {
			t.Errorf("%q: refused during the run (%q), want before it, as bad input", c.step, msg)
		}
	}
}

// TestGroupUncleanElectionContrast: under unclean election of
// __consumer_offsets the new member resumes below an acknowledged commit
// (offset-rewind); with it off, never.
func TestGroupUncleanElectionContrast(t *testing.T) {
	all, err := scenarios.Builtin()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if s.Name != "group-unclean-election" {
			continue
		}
		for variant, want := range map[string]bool{"unclean": true, "clean": false} {
			res, err := Run(s, variant, Options{Seed: 1, Budget: time.Second})
			if err != nil || res.Failed != "" {
				t.Fatalf("%s: %v %s", variant, err, res.Failed)
			}
			rewound := false
			for _, v := range res.Verdicts {
				for _, a := range v.Anomalies {
					rewound = rewound || a.Kind == "offset-rewind"
				}
			}
			if rewound != want {
				t.Errorf("%s: offset-rewind %v, want %v", variant, rewound, want)
			}
		}
		return
	}
	t.Fatal("no group-unclean-election scenario")
}
