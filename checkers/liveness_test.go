package checkers

import (
	"bytes"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

const sec = sim.Time(sim.Second)

func stuckISR(broker int32) LivenessCondition {
	return LivenessCondition{Kind: LivenessNotInISR, Topic: "t", Partition: 0, Broker: broker, Description: "ISR [1]"}
}

// TestLivenessHeldIsOK: a phase whose conditions all held at some sample
// is ok, however long they took within the timeout.
func TestLivenessHeldIsOK(t *testing.T) {
	l := &Liveness{Start: 10 * sec, Deadline: 70 * sec, Samples: []LivenessSample{
		{Time: 10 * sec, Unmet: []LivenessCondition{stuckISR(2)}},
		{Time: 12 * sec},
	}}
	v := CheckLiveness(l)
	if v.Result != ResultOK || len(v.Notes) == 0 || !strings.Contains(v.Notes[0], "12.000s") {
		t.Fatalf("%s: want ok, held at 12s", v)
	}
}

// TestLivenessStuckIsABug: conditions unmet at the deadline are a
// violation outside the contract, each naming what stayed stuck and since
// when (the start of its unbroken unmet run), with the replay command.
func TestLivenessStuckIsABug(t *testing.T) {
	probe := LivenessCondition{Kind: LivenessProbeFailed, Topic: "t", Partition: 0, Broker: -1}
	l := &Liveness{Start: 10 * sec, Deadline: 70 * sec, Replay: "kafkasim replay -scenario x -variant y -seed 1", Samples: []LivenessSample{
		{Time: 10 * sec, Unmet: []LivenessCondition{stuckISR(2), probe}},
		{Time: 11 * sec, Unmet: []LivenessCondition{probe}},              // b2 rejoined...
		{Time: 15 * sec, Unmet: []LivenessCondition{stuckISR(2), probe}}, // ...and fell out again
		{Time: 70 * sec, Unmet: []LivenessCondition{stuckISR(2), probe}},
	}}
	v := CheckLiveness(l)
	if v.Result != ResultViolation || !v.ContractBroken() || len(v.Anomalies) != 2 {
		t.Fatalf("%s: want a violation with 2 anomalies outside the contract", v)
	}
	a := v.Anomalies[0]
	if a.Kind != LivenessNotInISR || len(a.Replicas) != 1 || a.Replicas[0] != 2 || a.Times[0] != 15*sec ||
		!strings.Contains(a.Description, "stuck since 15.000s") || !strings.Contains(a.Description, "b2") {
		t.Errorf("anomaly %s: want b2 out of the ISR since 15s", a)
	}
	if b := v.Anomalies[1]; b.Kind != LivenessProbeFailed || b.Times[0] != 10*sec {
		t.Errorf("anomaly %s: want the probe unmet since 10s", b)
	}
	if !strings.Contains(v.String(), "replay: kafkasim replay -scenario x") {
		t.Errorf("%s: want the replay command", v)
	}
}

// TestLivenessUnknown: no phase, a skipped phase, no sample, or a phase
// that ended early while still stuck cannot be judged: unknown, never ok.
func TestLivenessUnknown(t *testing.T) {
	for name, l := range map[string]*Liveness{
		"absent":    nil,
		"skipped":   {Skipped: "the run broke"},
		"no sample": {Start: sec, Deadline: 61 * sec},
		"cut short": {Start: sec, Deadline: 61 * sec, Samples: []LivenessSample{{Time: 2 * sec, Unmet: []LivenessCondition{stuckISR(1)}}}},
	} {
		if v := CheckLiveness(l); v.Result != ResultUnknown || len(v.Notes) == 0 {
			t.Errorf("%s: %s: want unknown with a reason", name, v)
		}
	}
}

// TestLivenessTravelsInHistoryFile: the liveness samples are saved inside
// the final line and judged again by check; a file without them gives an
// unknown liveness verdict.
func TestLivenessTravelsInHistoryFile(t *testing.T) {
	f := HistoryFile{Source: "test", Final: Final{Liveness: &Liveness{Start: sec, Deadline: 61 * sec,
		Samples: []LivenessSample{{Time: 61 * sec, Unmet: []LivenessCondition{stuckISR(2)}}}}}}
	var buf bytes.Buffer
	if err := WriteHistoryFile(&buf, f); err != nil {
		t.Fatal(err)
	}
	g, err := ReadHistoryFile(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if v := find(CheckFile(g, Options{SkipLinearizability: true}), NameLiveness); v.Result != ResultViolation {
		t.Errorf("read back: %s: want the violation again", v)
	}
	g.Final.Liveness = nil
	if v := find(CheckFile(g, Options{SkipLinearizability: true}), NameLiveness); v.Result != ResultUnknown {
		t.Errorf("without samples: %s: want unknown", v)
	}
}

func find(vs []Verdict, name string) Verdict {
	for _, v := range vs {
		if v.Checker == name {
			return v
		}
	}
	return Verdict{Checker: name, Result: ResultUnknown, Notes: []string{"missing"}}
}

// TestLivenessOfflineByDesign: a partition Kafka keeps leaderless on
// purpose (KIP-966: no eligible replica, unclean election off) is a
// permitted violation naming why; another partition stuck the same way is
// still a contract break.
func TestLivenessOfflineByDesign(t *testing.T) {
	noLeader := func(p int32) LivenessCondition {
		return LivenessCondition{Kind: LivenessNoLeader, Topic: "t", Partition: p, Broker: -1}
	}
	l := &Liveness{Start: 10 * sec, Deadline: 70 * sec,
		Offline: []OfflinePartition{{Topic: "t", Partition: 0, Why: "permitted: KIP-966 keeps t-0 offline"}},
		Samples: []LivenessSample{{Time: 70 * sec, Unmet: []LivenessCondition{noLeader(0), noLeader(1)}}}}
	v := CheckLiveness(l)
	if v.Result != ResultViolation || len(v.Anomalies) != 2 {
		t.Fatalf("%s: want two anomalies", v)
	}
	if a := v.Anomalies[0]; !a.Permitted || !strings.Contains(a.Description, "KIP-966") {
		t.Errorf("t-0: %s, want permitted naming KIP-966", a)
	}
	if a := v.Anomalies[1]; a.Permitted {
		t.Errorf("t-1: %s, want a contract break", a)
	}
}

// TestLivenessStuckLSOPermitsLaggingOnly: on a partition whose LSO an
// unclean election left stuck, a lagging group is permitted, a missing
// leader is not.
func TestLivenessStuckLSOPermitsLaggingOnly(t *testing.T) {
	l := &Liveness{Start: 0, Deadline: 10 * sec, StuckLSO: []OfflinePartition{{Topic: "t", Partition: 0, Why: "permitted: KAFKA-20716"}},
		Samples: []LivenessSample{{Time: 10 * sec, Unmet: []LivenessCondition{
			{Kind: LivenessGroupLagging, Topic: "t", Partition: 0, Broker: -1, Group: "g"},
			{Kind: LivenessNoLeader, Topic: "t", Partition: 0, Broker: -1},
		}}}}
	v := CheckLiveness(l)
	if v.Result != ResultViolation || len(v.Anomalies) != 2 {
		t.Fatalf("verdict %s %v", v.Result, v.Anomalies)
	}
	for _, a := range v.Anomalies {
		if a.Permitted != (a.Kind == LivenessGroupLagging) {
			t.Errorf("%s permitted=%v", a.Kind, a.Permitted)
		}
	}
}

// TestLivenessUnwritable: a partition with fewer replicas than its
// min.insync.replicas may fail its probe, and a group whose offsets live
// on such a partition may stay unstable and lag; the same conditions on
// another partition or group, and a missing leader on the unwritable
// partition, are still contract breaks.
func TestLivenessUnwritable(t *testing.T) {
	l := &Liveness{Start: 0, Deadline: 10 * sec,
		Unwritable: []OfflinePartition{{Topic: "t", Partition: 0, Why: "permitted: t-0 has 1 replica(s) and min.insync.replicas=2"}},
		Groups:     []UnwritableGroup{{Group: "g", Why: "permitted: the group's offsets partition __consumer_offsets-1 has 1 replica(s)"}},
		Samples: []LivenessSample{{Time: 10 * sec, Unmet: []LivenessCondition{
			{Kind: LivenessProbeFailed, Topic: "t", Partition: 0, Broker: -1},
			{Kind: LivenessProbeFailed, Topic: "t", Partition: 1, Broker: -1},
			{Kind: LivenessNoLeader, Topic: "t", Partition: 0, Broker: -1},
			{Kind: LivenessGroupUnstable, Broker: -1, Group: "g"},
			{Kind: LivenessGroupLagging, Topic: "t", Partition: 1, Broker: -1, Group: "g"},
			{Kind: LivenessGroupUnstable, Broker: -1, Group: "h"},
		}}}}
	v := CheckLiveness(l)
	if v.Result != ResultViolation || len(v.Anomalies) != 6 {
		t.Fatalf("verdict %s %v", v.Result, v.Anomalies)
	}
	want := []bool{true, false, false, true, true, false}
	for i, a := range v.Anomalies {
		if a.Permitted != want[i] {
			t.Errorf("anomaly %d %s: permitted=%v, want %v", i, a, a.Permitted, want[i])
		}
		if a.Permitted && !strings.Contains(a.Description, "min.insync.replicas") && !strings.Contains(a.Description, "offsets partition") {
			t.Errorf("anomaly %d: %s does not say why", i, a.Description)
		}
	}
}
