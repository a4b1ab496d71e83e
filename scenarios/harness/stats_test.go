package harness

import (
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
)

// TestStatsCountSaysWhatItCounts: Acked counts the clients' acknowledged
// sends, the end phase's probes left out; with the breakdown of a served
// run it names who sent what, and which sends were an idempotent
// producer's retry acknowledged again (at the first one's offset).
func TestStatsCountSaysWhatItCounts(t *testing.T) {
	send := func(process, topic string, pid int64, seq int32, offset int64) checkers.Op {
		return checkers.Op{Kind: checkers.Send, Outcome: checkers.OK, Process: process, Topic: topic, ProducerID: pid, Sequence: seq, Offset: offset}
	}
	h := checkers.History{
		Ops: []checkers.Op{
			send("app/pid1", "t", 1, 0, 0), send("app/pid1", "t", 1, 1, 1),
			send("app/pid1", "t", 1, 1, 1),                           // the retry of sequence 1, answered as a duplicate
			send("plain", "x", 0, 0, 0), send("plain", "x", 0, 0, 1), // no idempotence: two records
			send(CheckerClient, "t", 0, 0, 2),
			{Kind: checkers.Send, Outcome: checkers.Fail, Process: "plain", Topic: "x"},
		},
		Producers: []checkers.Producer{{Process: "app/pid1", Idempotent: true}, {Process: "plain"}},
	}
	var plain Stats
	plain.count(h, false)
	if plain.Acked != 5 || plain.AckedBy != nil || plain.AckedAgain != 0 || plain.Probes != 0 {
		t.Fatalf("without the breakdown: %+v, want Acked 5 only", plain)
	}
	var served Stats
	served.count(h, true)
	want := []AckedCount{{Process: "app/pid1", Topic: "t", Acked: 3}, {Process: "plain", Topic: "x", Acked: 2}}
	if served.Acked != 5 || served.AckedAgain != 1 || served.Probes != 1 || len(served.AckedBy) != 2 || served.AckedBy[0] != want[0] || served.AckedBy[1] != want[1] {
		t.Fatalf("with the breakdown: %+v, want Acked 5, AckedBy %v, AckedAgain 1, Probes 1", served, want)
	}
}
