package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
)

// TestProducerDefaultsFollowTheRelease: a 'producer' step without acks
// gets its release's default — acks=1 before 3.0, all from 3.0 (KIP-679) —
// as a client of that release would.
func TestProducerDefaultsFollowTheRelease(t *testing.T) {
	for _, tc := range []struct {
		version string
		acks    int16
	}{{"2.0", 1}, {"3.0", -1}} {
		src := "brokers 3\ntopic t partitions=1 rf=3\nset inter.broker.protocol.version=" + tc.version +
			"\nproducer p1\nrun 5s\nsend p1 t/0 3 interval=10ms\nrun 2s\n"
		s, err := scenarios.Parse("defaults.txt", "defaults", strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(s, "", Options{Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		var sends int
		for _, op := range res.History.Ops {
			if op.Kind == checkers.Send && op.Process == "p1" {
				sends++
				if op.Acks != tc.acks {
					t.Errorf("%s: %s sent with acks=%d, want %d", tc.version, op.Value, op.Acks, tc.acks)
				}
			}
		}
		if sends != 3 {
			t.Fatalf("%s: %d sends, want 3", tc.version, sends)
		}
	}
}
