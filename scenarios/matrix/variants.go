package matrix

// This file decides which variant of each scenario a matrix runs
// (Spec.Variants: the -variant arguments) and says what each row ran: the
// variant, whether -variant chose it, and the settings in effect besides
// the release (Settings, RanAs), so that a row of unclean-election reads
// "variant unclean (unclean.leader.election.enable=true)" and never "Kafka
// 4.1 loses" by default.
//
// Precedence of a run's properties, lowest first: the release's defaults,
// the script's set lines, the variant's, the -config files (in order),
// -set, and over everything the version-selecting keys of the column's
// release (VersionKeys: Release.Set).

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"
)

// How a cell's variant was chosen (Cell.VariantFrom).
const (
	VariantFirst = "first"    // the scenario's first variant: no -variant named one
	VariantFlag  = "-variant" // a -variant argument named it
)

// variantChoice is the variant of one scenario and how it was chosen.
type variantChoice struct {
	name, from string
}

// chooseVariants resolves the -variant arguments over the scenarios (in
// -scenario order; args are their -scenario arguments): SCENARIO=V names
// the variant of one scenario (by its name or its -scenario argument), V
// alone the variant of every scenario that has a variant V; a pair wins
// over V alone. It returns one choice per scenario and a note for each
// scenario V alone left at its first variant. Errors name what was wrong
// and what is allowed.
func chooseVariants(given []string, scripts []*scenarios.Script, args []string) ([]variantChoice, []string, error) {
	out := make([]variantChoice, len(scripts))
	for i, s := range scripts {
		out[i] = variantChoice{s.Variants[0].Name, VariantFirst}
	}
	bare := ""
	named := map[int]string{} // scenario index -> the -variant argument
	for _, g := range given {
		scen, v, pair := cutLast(g, "=")
		if !pair {
			v = g
		}
		if strings.TrimSpace(v) == "" || (pair && strings.TrimSpace(scen) == "") {
			return nil, nil, fmt.Errorf("-variant %q: want V (every scenario that has a variant V) or SCENARIO=V", g)
		}
		if !pair {
			if bare != "" && bare != v {
				return nil, nil, fmt.Errorf("-variant %s and -variant %s: one variant alone applies to every scenario that has it; name the scenario of the others: -variant SCENARIO=V", bare, v)
			}
			bare = v
			continue
		}
		i := slices.IndexFunc(scripts, func(s *scenarios.Script) bool { return s.Name == scen })
		if i < 0 {
			i = slices.Index(args, scen)
		}
		if i < 0 {
			return nil, nil, fmt.Errorf("-variant %s: %s is not a scenario of this matrix (allowed: %s)", g, scen, strings.Join(names(scripts), ", "))
		}
		if prev, twice := named[i]; twice && prev != g {
			return nil, nil, fmt.Errorf("-variant %s and -variant %s: two variants of %s; a matrix runs one variant of each scenario", prev, g, scripts[i].Name)
		}
		if _, err := scripts[i].Variant(v); err != nil {
			return nil, nil, fmt.Errorf("-variant %s: %w", g, err)
		}
		named[i] = g
		out[i] = variantChoice{v, VariantFlag}
	}
	if bare == "" {
		return out, nil, nil
	}
	var notes []string
	found := false
	for i, s := range scripts {
		if _, err := s.Variant(bare); err != nil {
			if _, ok := named[i]; !ok {
				notes = append(notes, fmt.Sprintf("-variant %s: %s has no variant %s; it runs its first, %s (variants: %s)", bare, s.Name, bare, out[i].name, strings.Join(variantNames(s), ", ")))
			}
			continue
		}
		found = true
		if _, ok := named[i]; !ok {
			out[i] = variantChoice{bare, VariantFlag}
		}
	}
	if !found {
		var allowed []string
		for _, s := range scripts {
			allowed = append(allowed, s.Name+": "+strings.Join(variantNames(s), ", "))
		}
		return nil, nil, fmt.Errorf("-variant %s: no scenario of this matrix has a variant %q (allowed: %s)", bare, bare, strings.Join(allowed, "; "))
	}
	return out, notes, nil
}

// cutLast cuts s around the last sep (a script path may hold '=', a
// variant name does not).
func cutLast(s, sep string) (before, after string, found bool) {
	i := strings.LastIndex(s, sep)
	if i < 0 {
		return s, "", false
	}
	return s[:i], s[i+len(sep):], true
}

func names(scripts []*scenarios.Script) []string {
	var out []string
	for _, s := range scripts {
		out = append(out, s.Name)
	}
	return out
}

func variantNames(s *scenarios.Script) []string {
	var out []string
	for _, v := range s.Variants {
		out = append(out, v.Name)
	}
	return out
}

// IsVersionKey reports whether key is one of VersionKeys: the column's
// release decides it, so a matrix's -set may not.
func IsVersionKey(key string) bool { return slices.Contains(VersionKeys, key) }

// settings returns what a run of variant v sets besides the release, as
// sorted key=value: the variant's properties and script variables with
// base's (the -config files and -set) over them, the version-selecting
// keys left out; and, apart, the version-selecting keys v or base pin,
// which the release replaces.
func settings(v scenarios.Variant, base map[string]string) (set, replaced []string) {
	merged := map[string]string{}
	for _, m := range []map[string]string{v.Props, base} {
		for k, val := range m {
			merged[k] = val
		}
	}
	for k, val := range merged {
		if IsVersionKey(k) {
			replaced = append(replaced, k+"="+val)
		} else {
			set = append(set, k+"="+val)
		}
	}
	sort.Strings(set)
	sort.Strings(replaced)
	return set, replaced
}

// RanAs says what a row ran besides its release, in one line:
//
//	variant unclean (unclean.leader.election.enable=true)
//	variant hw (truncation=hw overridden by the release)
//	variant elr (eligible.leader.replicas.version=1; inter.broker.protocol.version=4.0 overridden by the release)
func (r Row) RanAs() string {
	s := "variant " + r.Variant
	var in []string
	if len(r.Settings) > 0 {
		in = append(in, strings.Join(r.Settings, ", "))
	}
	if len(r.Replaced) > 0 {
		in = append(in, strings.Join(r.Replaced, ", ")+" overridden by the release")
	}
	if len(in) > 0 {
		s += " (" + strings.Join(in, "; ") + ")"
	}
	return s
}
