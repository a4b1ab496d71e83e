package scenarios

// This file is the script variables: which $names a script has (its
// variant lines' and, with a swarm step, the swarm's arguments) and what
// values each accepts. Validate, harness.Prepare and a sweep's grid check through
// it.

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// swarmRates are the swarm arguments that are probabilities.
var swarmRates = map[string]bool{"crash": true, "power-loss": true, "pause": true, "partition": true, "heal": true, "consumer-crash": true, "consumer-stall": true, "consumer-pause": true, "wipe-disk": true}

// IsSwarmRate reports whether name ($crash, or crash written without the
// $) is one of the swarm's rates, a probability.
func IsSwarmRate(name string) bool { return swarmRates[strings.TrimPrefix(name, "$")] }

// Variables returns the script variables a grid or -set may set: those of
// the variant lines and, when the script has a swarm step, its arguments.
func (s *Script) Variables() map[string]bool {
	vars := map[string]bool{}
	for _, v := range s.Variants {
		for k := range v.Props {
			if strings.HasPrefix(k, "$") {
				vars[k] = true
			}
		}
	}
	for _, st := range s.Steps {
		if st.Op == "swarm" {
			for _, k := range SwarmKeys {
				vars["$"+k] = true
			}
		}
	}
	return vars
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CheckValue validates the value of a known script variable, named with
// or without its $; a name that is no variable is not checked here (the
// script's own check, CheckVariable, refuses it).
func CheckValue(name, v string) error {
	k := strings.TrimPrefix(name, "$")
	switch {
	case swarmRates[k]:
		if f, err := strconv.ParseFloat(v, 64); err != nil || f < 0 || f > 1 || math.IsNaN(f) {
			return fmt.Errorf("%s=%q: want a probability in [0,1]", name, v)
		}
	case k == "interval" || k == "fault-every":
		if d, err := ParseDuration(v); err != nil || d <= 0 {
			return fmt.Errorf("%s=%q: want a positive duration such as 20ms or 2s", name, v)
		}
	case k == "clients":
		if n, err := strconv.Atoi(v); err != nil || n < 1 {
			return fmt.Errorf("%s=%q: want a number >= 1", name, v)
		}
	case k == "profile":
		return CheckProfileMode(name, v)
	case k == "acks":
		if v != "all" && v != "-1" && v != "1" && v != "0" {
			return fmt.Errorf("%s=%q: allowed 0, 1, -1, all", name, v)
		}
	}
	return nil
}

// CheckProfileMode validates a $profile value; name is how the input
// named it ($profile or profile).
func CheckProfileMode(name, v string) error {
	if v != ProfileSwarm && v != ProfileFixed {
		return fmt.Errorf("%s=%q: allowed swarm (the fault kinds and rates drawn from the seed, the default) or fixed (the script's rates as given)", name, v)
	}
	return nil
}

// The values of $profile.
const (
	ProfileSwarm = "swarm" // draw the enabled fault kinds and their rates from the seed
	ProfileFixed = "fixed" // the script's rates, as given
)
