package harness

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// TestRunRefusesUnknownVariables: -set of a $name the script does not have
// is refused by run and replay (Prepare) as by sweep, and so is a step's
// $name that the variant being run does not set.
func TestRunRefusesUnknownVariables(t *testing.T) {
	s, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Prepare(s, "hw", map[string]string{"$nosuch": "1"}); err == nil || !strings.Contains(err.Error(), "-set $nosuch=1: scenario kip101-hw-lag has no script variable $nosuch (it has none)") {
		t.Errorf("kip101-hw-lag -set $nosuch=1: %v", err)
	}
	a, err := scenarios.Load("acks1-leader-crash")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Prepare(a, "acks1", map[string]string{"$ack": "1"}); err == nil || !strings.Contains(err.Error(), "no script variable $ack (its variables: $acks)") {
		t.Errorf("acks1-leader-crash -set $ack=1: %v", err)
	}
	if _, _, err := Prepare(a, "acks1", map[string]string{"$acks": "2"}); err == nil || !strings.Contains(err.Error(), `-set $acks=2: $acks="2": allowed 0, 1, -1, all`) {
		t.Errorf("acks1-leader-crash -set $acks=2: %v", err)
	}
	if _, _, err := Prepare(a, "acks1", map[string]string{"$acks": "all"}); err != nil {
		t.Errorf("acks1-leader-crash -set $acks=all: %v", err)
	}
	src := "brokers 2\ntopic t rf=2\nvariant a $acks=1\nvariant b\nproduce p1 t/0 m1 acks=$acks\n"
	v, err := scenarios.Parse("f.txt", "f", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Prepare(v, "a", nil); err != nil {
		t.Errorf("variant a sets $acks: %v", err)
	}
	if _, _, err := Prepare(v, "b", nil); err == nil || !strings.Contains(err.Error(), "f.txt:5: produce uses $acks, which variant b does not set") {
		t.Errorf("variant b does not set $acks: %v", err)
	}
	if _, _, err := Prepare(v, "b", map[string]string{"$acks": "0"}); err != nil {
		t.Errorf("variant b with -set $acks=0: %v", err)
	}
}

// TestBuiltinScriptsPassValidation: every script that ships, the swarm's
// and the test scripts are accepted whole, under every variant.
func TestBuiltinScriptsPassValidation(t *testing.T) {
	all, err := scenarios.All()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../testdata/*.txt")
	for _, f := range files {
		s, err := scenarios.Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		all = append(all, s)
	}
	for _, s := range all {
		for _, v := range s.Variants {
			if _, _, err := Prepare(s, v.Name, nil); err != nil {
				t.Errorf("%s/%s: %v", s.Name, v.Name, err)
			}
		}
	}
}
