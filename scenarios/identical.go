package scenarios

import (
	"fmt"
	"sort"
	"strings"
)

// IdenticalVariants groups the script's variants by what they run under
// set: variants whose configuration, script variables and end-phase
// settings come out the same run the same world, so a caller runs each
// group once. Groups keep the script's order (by their first variant).
// Variants that do not prepare (bad input) form groups of their own.
func (s *Script) IdenticalVariants(set map[string]string) [][]Variant {
	var groups [][]Variant
	byKey := map[string]int{}
	for _, v := range s.Variants {
		key, err := s.runKey(v, set)
		if err != nil {
			groups = append(groups, []Variant{v})
			continue
		}
		if i, ok := byKey[key]; ok {
			groups[i] = append(groups[i], v)
			continue
		}
		byKey[key] = len(groups)
		groups = append(groups, []Variant{v})
	}
	return groups
}

// runKey renders everything a variant's run depends on besides the seed.
func (s *Script) runKey(v Variant, set map[string]string) (string, error) {
	_, cfg, err := s.Prepare(v.Name, set)
	if err != nil {
		return "", err
	}
	var parts []string
	parts = append(parts, cfg.NonDefaultPairs()...)
	vars := scriptVars(v, set)
	for k, val := range vars {
		parts = append(parts, k+"="+val)
	}
	end, err := s.endOptions(v, set)
	if err != nil {
		return "", err
	}
	sort.Strings(parts)
	return fmt.Sprintf("%s|%v|%t", strings.Join(parts, " "), end.livenessTimeout, end.finalRead), nil
}
