package harness

import (
	"slices"
	"testing"
)

// TestGivenDefaults: a given setting absent from the non-default pairs is
// marked a default, unless it is accepted but not modelled (its value need
// not be the default) or a script variable.
func TestGivenDefaults(t *testing.T) {
	given := map[string]string{"acks": "all", "min.insync.replicas": "2", "num.io.threads": "4", "$crash": "0.3", "producer.linger.ms": "0",
		"consumer.group.protocol": "consumer", "producer.linger.ms.x": "1", "group.protocol": "classic"}
	got, client := givenDefaults(given, []string{"min.insync.replicas=2"}, []string{"num.io.threads=4"})
	if want := []string{"acks=all", "group.protocol=classic", "producer.linger.ms.x=1", "producer.linger.ms=0"}; !slices.Equal(got, want) {
		t.Errorf("givenDefaults = %v, want %v", got, want)
	}
	// A client's setting that is no default is no "(default)".
	if want := []string{"consumer.group.protocol=consumer"}; !slices.Equal(client, want) {
		t.Errorf("client settings = %v, want %v", client, want)
	}
}
