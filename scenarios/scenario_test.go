package scenarios

import (
	"regexp"
	"strings"
	"testing"
)

// TestUnknownScenarioListsEveryScenario: the error names every scenario
// 'kafkasim list' shows, the swarm included.
func TestUnknownScenarioListsEveryScenario(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	_, err = Load("nope")
	if err == nil {
		t.Fatal("no error for an unknown scenario")
	}
	for _, s := range all {
		if !strings.Contains(err.Error(), s.Name+",") {
			t.Errorf("%v: %s is not listed", err, s.Name)
		}
	}
	if s, err := Load("swarm"); err != nil || s.Name != "swarm" {
		t.Errorf("Load(swarm) = %v, %v", s, err)
	}
}

// TestSourcesCiteWhatExists: every scenario cites its sources by KIP or
// JIRA number, Kafka's documentation or code, or kafkasim itself; never
// the "reference" sections or "seeds" notes this repository does not hold.
func TestSourcesCiteWhatExists(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	cite := regexp.MustCompile(`KIP-[0-9]+|KAFKA-[0-9]+|Kafka documentation|Kafka's|kafkasim swarm|Assignor`)
	for _, s := range all {
		if strings.Contains(s.Source, "reference section") || strings.Contains(s.Source, "seeds ") || !cite.MatchString(s.Source) {
			t.Errorf("%s: source %q", s.Name, s.Source)
		}
	}
}
