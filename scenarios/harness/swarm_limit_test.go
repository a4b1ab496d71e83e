package harness

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// TestSwarmClientsAreBounded: a swarm with more clients than
// MaxSwarmClients is bad input naming the bound ($clients=200 used to run
// into 9 GB), before the run starts; the bound itself is allowed.
func TestSwarmClientsAreBounded(t *testing.T) {
	s := scenarios.Swarm()
	over := strconv.Itoa(scenarios.MaxSwarmClients + 1)
	_, _, err := Prepare(s, "", map[string]string{"$clients": over})
	if err == nil || !strings.Contains(err.Error(), "clients="+over) || !strings.Contains(err.Error(), "at most "+strconv.Itoa(scenarios.MaxSwarmClients)) {
		t.Fatalf("$clients=%s: got %v, want an error naming the bound %d", over, err, scenarios.MaxSwarmClients)
	}
	if _, _, err := Prepare(s, "", map[string]string{"$clients": strconv.Itoa(scenarios.MaxSwarmClients)}); err != nil {
		t.Fatalf("$clients=%d: %v", scenarios.MaxSwarmClients, err)
	}
}
