package config

import (
	"strings"
	"testing"
)

// TestProducerIdempotenceByRelease checks the producer's idempotence rule
// of each release against what Kafka's source does at its tag, for
// enable.idempotence set to true or left unset, with each of the settings
// that conflict with idempotence (and with none).
//
// Verified in apache/kafka:
//   - 0.11.0.0 KafkaProducer: idempotenceEnabled = getBoolean(enable.idempotence)
//     (default false) or transactional.id; configureRetries, then
//     configureInflightRequests ("Must set max.in.flight.requests.per.connection
//     to 1", default lowered to 1), then configureAcks ("Must set acks to all")
//     throw ConfigException.
//   - 1.0.0 .. 2.6 KafkaProducer.configureInflightRequests: "at most 5"
//     (KAFKA-5494); 2.7, 2.8 ProducerConfig.maybeOverrideAcksAndRetries:
//     retries=0 and acks != all throw; the default is false.
//   - 3.0.0 and 3.1.0 ProducerConfig: enable.idempotence defaults to true but
//     idempotenceEnabled() is `userConfiguredIdempotence && getBoolean(...)`,
//     so an unset one is off (KAFKA-13598); explicit conflicts throw.
//   - 3.0.1, 3.1.1, 3.2.0 .. trunk ProducerConfig.postProcessAndValidateIdempotenceConfigs
//     (KAFKA-13598 #11691, KAFKA-13673 #11788): retries=0, acks != all,
//     max.in.flight > 5 throw when enable.idempotence is set, else
//     log.info/log.warn "Idempotence will be disabled because ..." and turn
//     it off; docs/upgrade.html "Notable changes in 3.1.1" and "in 3.2.0".
//   - 4.0 (KAFKA-17927, apache/kafka PR #17717, merged to trunk in
//     November 2024, after the mirror's trunk): the max.in.flight branch
//     throws "To use the idempotent producer, max.in.flight... must be set
//     to at most 5" whenever idempotence is on (getBoolean, default true).
func TestProducerIdempotenceByRelease(t *testing.T) {
	type outcome int
	const (
		on outcome = iota
		off
		bad
	)
	names := [...]string{on: "on", off: "off", bad: "error"}
	conflicts := []map[string]string{
		nil,
		{PropAcks: "1"},
		{PropRetries: "0"},
		{PropMaxInFlight: "6"},
	}
	for _, c := range []struct {
		release string
		m       Mechanisms
		// unset[i], explicit[i]: the outcome with conflicts[i] and
		// enable.idempotence unset or set to true.
		unset, explicit [4]outcome
		note            string // in the note of the unset rows but the first
	}{
		// Kafka before 0.11 has no enable.idempotence (it would warn and
		// ignore it): kafkasim's simplification runs the idempotent
		// producer as asked, with its conflicts.
		{"0.10.2", V0_10_2.Mechanisms(), [4]outcome{off, off, off, off}, [4]outcome{on, bad, bad, bad}, ""},
		{"0.11.0", V0_11_0.Mechanisms(), [4]outcome{off, off, off, off}, [4]outcome{on, bad, bad, bad}, ""},
		{"1.0", V1_0.Mechanisms(), [4]outcome{off, off, off, off}, [4]outcome{on, bad, bad, bad}, ""},
		{"2.8", V2_8.Mechanisms(), [4]outcome{off, off, off, off}, [4]outcome{on, bad, bad, bad}, ""},
		{"3.0.0", V3_0.MechanismsAt(0), [4]outcome{off, off, off, off}, [4]outcome{on, bad, bad, bad}, "KAFKA-13598"},
		{"3.0.1", V3_0.MechanismsAt(1), [4]outcome{on, off, off, off}, [4]outcome{on, bad, bad, bad}, "KAFKA-13673"},
		{"3.0.2", V3_0.MechanismsAt(2), [4]outcome{on, off, off, off}, [4]outcome{on, bad, bad, bad}, "KAFKA-13673"},
		{"3.1.0", V3_1.MechanismsAt(0), [4]outcome{off, off, off, off}, [4]outcome{on, bad, bad, bad}, "KAFKA-13598"},
		{"3.1 (3.1.1)", V3_1.Mechanisms(), [4]outcome{on, off, off, off}, [4]outcome{on, bad, bad, bad}, "KAFKA-13673"},
		{"3.2", V3_2.Mechanisms(), [4]outcome{on, off, off, off}, [4]outcome{on, bad, bad, bad}, "KAFKA-13673"},
		{"3.9", V3_9.Mechanisms(), [4]outcome{on, off, off, off}, [4]outcome{on, bad, bad, bad}, "KAFKA-13673"},
		// 4.0 (KAFKA-17927, PR #17717; the mirror's trunk predates it, read
		// in the PR's diff): max.in.flight > 5 is refused while idempotence
		// is on, by default too.
		{"4.0", V4_0.Mechanisms(), [4]outcome{on, off, off, bad}, [4]outcome{on, bad, bad, bad}, "KAFKA-13673"},
		{"4.1", V4_1.Mechanisms(), [4]outcome{on, off, off, bad}, [4]outcome{on, bad, bad, bad}, "KAFKA-13673"},
	} {
		for i, extra := range conflicts {
			for _, explicit := range []bool{false, true} {
				props := map[string]string{}
				for k, v := range extra {
					props[k] = v
				}
				want := c.unset[i]
				if explicit {
					props[PropEnableIdempotence] = "true"
					want = c.explicit[i]
				}
				p, err := ParseProducerWith(c.m, props)
				got := on
				switch {
				case err != nil:
					got = bad
				case !p.EnableIdempotence:
					got = off
				}
				if got != want {
					t.Errorf("%s %v: idempotence %s (%v), want %s", c.release, props, names[got], err, names[want])
					continue
				}
				switch {
				case err != nil:
					if !strings.Contains(err.Error(), PropEnableIdempotence) {
						t.Errorf("%s %v: %v does not name enable.idempotence", c.release, props, err)
					}
				case !explicit && c.note != "" && (i > 0 || c.note == "KAFKA-13598"):
					if !strings.Contains(p.IdempotenceNote, c.note) {
						t.Errorf("%s %v: note %q, want one citing %s", c.release, props, p.IdempotenceNote, c.note)
					}
				case p.IdempotenceNote != "" && c.m.Idempotence:
					t.Errorf("%s %v: note %q, want none", c.release, props, p.IdempotenceNote)
				}
				if got == on && p.Acks != AcksAll {
					t.Errorf("%s %v: idempotent with acks=%s", c.release, props, p.Acks)
				}
			}
		}
	}
}

// TestIdempotenceNoteNamesTheSetting: the note names each conflicting
// setting as it was given.
func TestIdempotenceNoteNamesTheSetting(t *testing.T) {
	p, err := ParseProducerWith(V3_9.Mechanisms(), map[string]string{PropAcks: "1"})
	if err != nil || p.EnableIdempotence || p.Acks != AcksLeader ||
		p.IdempotenceNote != "enable.idempotence defaulted to true but acks=1 was set explicitly: idempotence is off, as Kafka's producer turns it off from 3.0.1 (KAFKA-13598, KAFKA-13673)" {
		t.Errorf("acks=1 on 3.9: %+v, %v", p, err)
	}
	p, err = ParseProducerWith(V3_9.Mechanisms(), map[string]string{PropAcks: "0", PropRetries: "0"})
	if err != nil || p.EnableIdempotence || !strings.Contains(p.IdempotenceNote, "retries=0 and acks=0 were set explicitly") {
		t.Errorf("acks=0 retries=0 on 3.9: %+v, %v", p, err)
	}
	// 4.0 refuses more than 5 in flight unless idempotence is off
	// explicitly, even with acks=1 set (the check runs before the default
	// is turned off); 3.9 turns the default off.
	if _, err := ParseProducerWith(V4_0.Mechanisms(), map[string]string{PropAcks: "1", PropMaxInFlight: "6"}); err == nil || !strings.Contains(err.Error(), "KAFKA-17927") {
		t.Errorf("4.0 acks=1 max.in.flight=6: %v, want KAFKA-17927's refusal", err)
	}
	if p, err := ParseProducerWith(V4_0.Mechanisms(), map[string]string{PropMaxInFlight: "6", PropEnableIdempotence: "false"}); err != nil || p.EnableIdempotence {
		t.Errorf("4.0 max.in.flight=6 enable.idempotence=false: %+v, %v", p, err)
	}
	if p, err := ParseProducerWith(V3_9.Mechanisms(), map[string]string{PropAcks: "1", PropMaxInFlight: "6"}); err != nil || p.EnableIdempotence ||
		!strings.Contains(p.IdempotenceNote, "acks=1 and max.in.flight.requests.per.connection=6 were set explicitly") {
		t.Errorf("3.9 acks=1 max.in.flight=6: %+v, %v", p, err)
	}
	// Set to false: nothing to note.
	if p, _ := ParseProducerWith(V3_9.Mechanisms(), map[string]string{PropAcks: "1", PropEnableIdempotence: "false"}); p.IdempotenceNote != "" {
		t.Errorf("enable.idempotence=false: note %q", p.IdempotenceNote)
	}
	// Before 0.11 the property does not exist in Kafka: the note says so.
	if p, _ := ParseProducerWith(V0_10_2.Mechanisms(), map[string]string{PropEnableIdempotence: "true"}); !strings.Contains(p.IdempotenceNote, "0.11.0") {
		t.Errorf("0.10.2 enable.idempotence=true: note %q", p.IdempotenceNote)
	}
}

// TestIdempotence011InFlight: Kafka 0.11's idempotent producer lowers an
// unset max.in.flight.requests.per.connection to 1 and refuses any other
// value; 1.0 takes up to 5 (KAFKA-5494).
func TestIdempotence011InFlight(t *testing.T) {
	p, err := ParseProducerWith(V0_11_0.Mechanisms(), map[string]string{PropEnableIdempotence: "true"})
	if err != nil || p.MaxInFlightRequestsPerConnection != 1 || p.Acks != AcksAll {
		t.Errorf("0.11 idempotent: %+v, %v; want max.in.flight 1, acks=all", p, err)
	}
	if _, err := ParseProducerWith(V0_11_0.Mechanisms(), map[string]string{PropTransactionalID: "tx", PropMaxInFlight: "2"}); err == nil ||
		!strings.Contains(err.Error(), "KAFKA-5494") {
		t.Errorf("0.11 transactional with max.in.flight=2: %v, want the conflict", err)
	}
	if p, err := ParseProducerWith(V1_0.Mechanisms(), map[string]string{PropEnableIdempotence: "true", PropMaxInFlight: "5"}); err != nil || p.MaxInFlightRequestsPerConnection != 5 {
		t.Errorf("1.0 idempotent with 5 in flight: %+v, %v", p, err)
	}
	// Not idempotent: 0.11 leaves max.in.flight alone.
	if p, err := ParseProducerWith(V0_11_0.Mechanisms(), nil); err != nil || p.MaxInFlightRequestsPerConnection != 5 {
		t.Errorf("0.11 default: %+v, %v", p, err)
	}
}
