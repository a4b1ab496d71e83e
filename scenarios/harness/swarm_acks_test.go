package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/scenarios"
)

// swarmProducer returns the producer configuration the built-in swarm's
// clients get under variant and set, as Run makes it.
func swarmProducer(t *testing.T, variant string, set map[string]string) (config.Producer, error) {
	t.Helper()
	s := scenarios.Swarm()
	v, cfg, err := Prepare(s, variant, set)
	if err != nil {
		return config.Producer{}, err
	}
	vars := scenarios.ScriptVars(v, set)
	for _, st := range s.Steps {
		if st.Op == "swarm" {
			sp, err := parseSwarm(st.Substitute(vars), vars, cfg.Broker.Mechanisms(), producerSet(s, v, set))
			return sp.producer, err
		}
	}
	t.Fatal("the swarm has no swarm step")
	return config.Producer{}, nil
}

// TestSwarmProducersFollowTheRelease: with no -set, each variant's
// clients are what they were when the variants named acks and
// enable.idempotence (so their goldens hold); with acks given by -set, a
// grid or $acks, the release's rule decides idempotence and the note says
// so; what the user sets is never overridden by the step.
func TestSwarmProducersFollowTheRelease(t *testing.T) {
	const offNote = "enable.idempotence defaulted to true but acks=1 was set explicitly"
	for _, c := range []struct {
		variant string
		set     map[string]string
		acks    config.Acks
		idem    bool
		note    string
	}{
		{"kip279-safe", nil, config.AcksAll, true, ""},
		{"kip101-safe", nil, config.AcksAll, true, ""},
		{"hw-unsafe", nil, config.AcksLeader, false, ""},
		// -grid acks=1 sets both; -set acks=1 or $acks=1 alone do too.
		{"kip279-safe", map[string]string{"acks": "1", "$acks": "1"}, config.AcksLeader, false, offNote},
		{"kip279-safe", map[string]string{"acks": "1"}, config.AcksLeader, false, offNote},
		{"kip279-safe", map[string]string{"$acks": "1"}, config.AcksLeader, false, offNote},
		{"kip279-safe", map[string]string{"enable.idempotence": "false"}, config.AcksAll, false, ""},
		// A 0.10.2 producer has no idempotence; a 1.1 one must ask.
		{"kip279-safe", map[string]string{"truncation": "hw"}, config.AcksAll, false, ""},
		{"kip279-safe", map[string]string{"truncation": "kip101"}, config.AcksAll, false, ""},
		// 3.0.0 never applied its default (KAFKA-13598); 3.0 is 3.0.1.
		{"kip279-safe", map[string]string{"inter.broker.protocol.version": "3.0.0"}, config.AcksAll, false, "KAFKA-13598"},
		{"kip279-safe", map[string]string{"inter.broker.protocol.version": "3.0"}, config.AcksAll, true, ""},
		{"hw-unsafe", map[string]string{"acks": "all"}, config.AcksAll, false, ""},
		{"hw-unsafe", map[string]string{"truncation": "kip279"}, config.AcksLeader, false, offNote},
	} {
		p, err := swarmProducer(t, c.variant, c.set)
		if err != nil {
			t.Errorf("%s %v: %v", c.variant, c.set, err)
			continue
		}
		if p.Acks != c.acks || p.EnableIdempotence != c.idem || (c.note == "") != (p.IdempotenceNote == "") || !strings.Contains(p.IdempotenceNote, c.note) {
			t.Errorf("%s %v: acks=%s idempotence=%v note %q; want acks=%s idempotence=%v note with %q",
				c.variant, c.set, p.Acks, p.EnableIdempotence, p.IdempotenceNote, c.acks, c.idem, c.note)
		}
	}
	// kip101-safe asks for idempotence as a 1.1 client must: acks=1 is the
	// explicit conflict Kafka 1.1 refuses, and the error says whose it is.
	if _, err := swarmProducer(t, "kip101-safe", map[string]string{"acks": "1", "$acks": "1"}); err == nil ||
		!strings.Contains(err.Error(), "enable.idempotence=true is variant kip101-safe's") {
		t.Errorf("kip101-safe with acks=1: %v; want the conflict, named as the variant's", err)
	}
}

// TestSwarmAcks1RunSendsWithAcks1: a run of the swarm with acks=1 given
// has acks=1 clients without idempotence in its history, and says why in
// ProducerNotes.
func TestSwarmAcks1RunSendsWithAcks1(t *testing.T) {
	res, err := Run(scenarios.Swarm(), "kip279-safe", Options{Seed: 1, Set: map[string]string{"acks": "1", "$acks": "1"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"p1", "p2"} {
		p, ok := res.History.Producer(name)
		if !ok || p.Acks != "1" || p.Idempotent {
			t.Errorf("%s: acks=%s idempotent=%v, want acks=1 without idempotence", p.Process, p.Acks, p.Idempotent)
		}
	}
	if len(res.ProducerNotes) != 1 || !strings.HasPrefix(res.ProducerNotes[0], "p1, p2: enable.idempotence defaulted to true but acks=1") {
		t.Errorf("ProducerNotes %q", res.ProducerNotes)
	}
	def, err := Run(scenarios.Swarm(), "kip279-safe", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := def.History.Producer("p1"); def.ProducerNotes != nil || !ok || p.Acks != "all" || !p.Idempotent {
		t.Errorf("kip279-safe: notes %q producers %+v; want idempotent acks=all clients", def.ProducerNotes, def.History.Producers)
	}
}
