package harness

import (
	"slices"
	"testing"
)

// TestGivenDefaults: a given setting absent from the non-default pairs is
// marked a default, unless it is accepted but not modelled (its value need
// not be the default) or a script variable.
func TestGivenDefaults(t *testing.T) {
	given := map[string]string{"acks": "all", "min.insync.replicas": "2", "num.io.threads": "4", "$crash": "0.3", "producer.linger.ms": "0"}
	got := givenDefaults(given, []string{"min.insync.replicas=2"}, []string{"num.io.threads=4"})
	if want := []string{"acks=all", "producer.linger.ms=0"}; !slices.Equal(got, want) {
		t.Errorf("givenDefaults = %v, want %v", got, want)
	}
}
