package scenarios

import (
	"strconv"
	"strings"
	"testing"
)

// TestSwarmClientsAreBounded: a swarm with more clients than
// MaxSwarmClients is bad input naming the bound ($clients=200 used to run
// into 9 GB), before the run starts; the bound itself is allowed.
func TestSwarmClientsAreBounded(t *testing.T) {
	s := Swarm()
	over := strconv.Itoa(MaxSwarmClients + 1)
	_, _, err := s.Prepare("", map[string]string{"$clients": over})
	if err == nil || !strings.Contains(err.Error(), "clients="+over) || !strings.Contains(err.Error(), "at most "+strconv.Itoa(MaxSwarmClients)) {
		t.Fatalf("$clients=%s: got %v, want an error naming the bound %d", over, err, MaxSwarmClients)
	}
	if _, _, err := s.Prepare("", map[string]string{"$clients": strconv.Itoa(MaxSwarmClients)}); err != nil {
		t.Fatalf("$clients=%d: %v", MaxSwarmClients, err)
	}
}
