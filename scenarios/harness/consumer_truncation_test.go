package harness

import (
	"testing"
)

// TestConsumerTruncation: in consumer-truncation, the KIP-320 consumer
// detects the truncation and rewinds to the divergence point (a
// nonmonotonic poll, every new record delivered); the pre-KIP-320 one
// skips the new records (lost writes) and never validates.
func TestConsumerTruncation(t *testing.T) {
	s := builtinScript(t, "consumer-truncation")
	for _, seed := range []uint64{1, 2, 3} {
		for _, v := range []string{"kip320", "pre-kip320"} {
			res, err := Run(s, v, Options{Seed: seed, KeepTrace: true})
			if err != nil {
				t.Fatal(err)
			}
			kinds := map[string]int{}
			for _, vd := range res.Verdicts {
				if vd.Checker == "consumer" {
					for _, a := range vd.Anomalies {
						kinds[a.Kind]++
					}
				}
			}
			detected := 0
			for _, r := range res.World.Trace().Records() {
				if r.Kind == "consumer-truncation-detected" {
					detected++
				}
			}
			switch v {
			case "kip320":
				if detected != 1 || kinds["lost-write"] != 0 || kinds["nonmonotonic-poll"] == 0 {
					t.Errorf("seed %d kip320: %d detections, consumer anomalies %v: want one detection, a rewind and no lost write", seed, detected, kinds)
				}
			default:
				if detected != 0 || kinds["lost-write"] != 5 {
					t.Errorf("seed %d pre-kip320: %d detections, consumer anomalies %v: want the 5 new records skipped", seed, detected, kinds)
				}
			}
		}
	}
}
