package harness

// This file groups a script's variants that -set makes identical: what
// each runs under is prepared as its run would be, so that a caller runs
// each group once (labels.go of package scenarios names what a run ran).

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"
)

// IdenticalVariants groups variants (of s, in its order) by what they run under
// set: variants whose configuration, script variables and end-phase
// settings come out the same run the same world, so a caller runs each
// group once. Groups keep the script's order (by their first variant).
// Variants that do not prepare (bad input) form groups of their own.
func IdenticalVariants(s *scenarios.Script, set map[string]string, variants []scenarios.Variant) [][]scenarios.Variant {
	var groups [][]scenarios.Variant
	byKey := map[string]int{}
	for _, v := range variants {
		key, err := runKey(s, v, set)
		if err != nil {
			groups = append(groups, []scenarios.Variant{v})
			continue
		}
		if i, ok := byKey[key]; ok {
			groups[i] = append(groups[i], v)
			continue
		}
		byKey[key] = len(groups)
		groups = append(groups, []scenarios.Variant{v})
	}
	return groups
}

// runKey renders everything a variant's run depends on besides the seed.
func runKey(s *scenarios.Script, v scenarios.Variant, set map[string]string) (string, error) {
	_, cfg, err := Prepare(s, v.Name, set)
	if err != nil {
		return "", err
	}
	var parts []string
	parts = append(parts, cfg.NonDefaultPairs()...)
	vars := scenarios.ScriptVars(v, set)
	for k, val := range vars {
		parts = append(parts, k+"="+val)
	}
	end, err := s.EndOptions(v, set)
	if err != nil {
		return "", err
	}
	sort.Strings(parts)
	return fmt.Sprintf("%s|%v|%t", strings.Join(parts, " "), end.LivenessTimeout, end.FinalRead), nil
}
