package explore

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios/workload"

	"github.com/kafkasim/kafkasim/scenarios/replay"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

func explore1(t *testing.T, variant, checker string, depth int) *Exploration {
	t.Helper()
	s, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	cfg := Config{Variant: variant, Params: workload.ExploreParams{Depth: depth, Records: 2}, Parallel: 2, NoOrders: true}
	if checker != "" {
		cfg.Checkers = []string{checker}
	}
	ex, err := Run(s, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return ex
}

// TestExploreKIP101LossUnderHW: the model checker finds KIP-101's data loss
// (a follower truncates to its lagging HW and is elected) under HW
// truncation, as the TLA+ KafkaTruncateToHighWatermark model does.
func TestExploreKIP101LossUnderHW(t *testing.T) {
	ex := explore1(t, "hw", "acked-loss", 8)
	if ex.Found == nil || ex.Checker != "acked-loss" || violated(ex.Found, []string{"acked-loss"}) != "acked-loss" {
		t.Fatalf("no acked-loss found: %+v", ex.Report)
	}
	story := strings.Join(harness.Story(ex.Found), "; ")
	if !strings.Contains(story, "truncates to HW=") || !strings.Contains(story, "is lost") {
		t.Fatalf("the story does not tell the loss: %s", story)
	}
}

// TestExploreDivergence: KIP-101's divergence under hw and KAFKA-6361's
// under kip101 are found within depth 9.
func TestExploreDivergence(t *testing.T) {
	for _, v := range []string{"hw", "kip101"} {
		ex := explore1(t, v, "divergence", 9)
		if ex.Found == nil || ex.Checker != "divergence" {
			t.Fatalf("%s: no divergence found: %+v", v, ex.Report)
		}
	}
}

// TestExploreKIP279NothingUpToDepth8: leader-epoch truncation with KIP-279
// keeps every acknowledged record and converges for every action sequence
// of up to 8 actions (2 brokers, 2 records, crashes and clean elections).
func TestExploreKIP279NothingUpToDepth8(t *testing.T) {
	ex := explore1(t, "kip279", "", 8)
	if ex.Found != nil || !ex.Exhausted {
		t.Fatalf("kip279: %+v (%s)", ex.Report, ex.Checker)
	}
	if ex.States < 1000 {
		t.Fatalf("only %d states explored", ex.States)
	}
}

// TestExploreDeterministic: the same search gives the same counts and the
// same counterexample on 1 and 3 workers.
func TestExploreDeterministic(t *testing.T) {
	s, _ := scenarios.Load("kip101-hw-lag")
	var reps []*Exploration
	for _, p := range []int{1, 3} {
		ex, err := Run(s, Config{Variant: "hw", Params: workload.ExploreParams{Depth: 8, Records: 2}, Parallel: p, NoOrders: true})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, ex)
	}
	a, b := reps[0], reps[1]
	if a.Runs != b.Runs || a.States != b.States || a.Found.TraceHash != b.Found.TraceHash {
		t.Fatalf("parallel 1: %d runs %d states; parallel 3: %d runs %d states", a.Runs, a.States, b.Runs, b.States)
	}
}

// TestChoiceFileRoundTripAndMismatch: a saved violation replays exactly;
// a file for another scenario, variant, configuration or version, or whose
// choices run out, are left over or exceed their ranges, is refused.
func TestChoiceFileRoundTripAndMismatch(t *testing.T) {
	s, _ := scenarios.Load("kip101-hw-lag")
	ex := explore1(t, "hw", "acked-loss", 8)
	var buf bytes.Buffer
	if err := ex.File.Write(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := replay.ReadChoiceFile(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.RunChoiceFile(s, f, nil, harness.Options{})
	if err != nil || res.TraceHash != ex.Found.TraceHash {
		t.Fatalf("replay: %v, hash %x want %x", err, res.TraceHash, ex.Found.TraceHash)
	}
	other, _ := scenarios.Load("kip279-fast-failover")
	bad := map[string]func() error{
		"scenario": func() error { _, err := replay.RunChoiceFile(other, f, nil, harness.Options{}); return err },
		"config": func() error {
			_, err := replay.RunChoiceFile(s, f, map[string]string{"min.insync.replicas": "2"}, harness.Options{})
			return err
		},
		"version": func() error {
			g := *f
			g.Version = "0.1"
			_, err := replay.RunChoiceFile(s, &g, nil, harness.Options{})
			return err
		},
		"variant": func() error {
			g := *f
			g.Variant = "kip279"
			_, err := replay.RunChoiceFile(s, &g, nil, harness.Options{})
			return err
		},
		"ran out": func() error {
			g := *f
			g.Choices = g.Choices[:len(g.Choices)-1]
			_, err := replay.RunChoiceFile(s, &g, nil, harness.Options{})
			return err
		},
		"left over": func() error {
			g := *f
			g.Choices = append(append([]sim.Choice(nil), g.Choices...), sim.Choice{Kind: sim.KindFault, N: 2})
			_, err := replay.RunChoiceFile(s, &g, nil, harness.Options{})
			return err
		},
		"range": func() error {
			g := *f
			g.Choices = append([]sim.Choice(nil), g.Choices...)
			g.Choices[0].N++
			_, err := replay.RunChoiceFile(s, &g, nil, harness.Options{})
			return err
		},
		"syntax": func() error {
			_, err := replay.ReadChoiceFile(strings.NewReader(strings.Replace(buf.String(), "fault:", "nope:", 1)))
			return err
		},
	}
	for name, fn := range bad {
		var m *replay.ChoiceMismatch
		if err := fn(); !errors.As(err, &m) {
			t.Errorf("%s: got %v, want a *ChoiceMismatch", name, err)
		}
	}
}

// TestExplorePartitions: with one-way link cuts (and heals) as actions too,
// hw still loses an acknowledged record and kip279 loses nothing and
// converges up to depth 6.
func TestExplorePartitions(t *testing.T) {
	s, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		variant string
		found   bool
	}{{"hw", true}, {"kip279", false}} {
		ex, err := Run(s, Config{Variant: c.variant, Params: workload.ExploreParams{Depth: 6, Records: 2, Faults: []string{"crash", "elect", "partition"}}, Parallel: 2, NoOrders: true})
		if err != nil {
			t.Fatal(err)
		}
		if (ex.Found != nil) != c.found || (!c.found && !ex.Exhausted) {
			t.Fatalf("%s with partitions: found=%v exhausted=%v (%s)", c.variant, ex.Found != nil, ex.Exhausted, ex.Checker)
		}
	}
}
