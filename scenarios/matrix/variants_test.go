package matrix

import (
	"strings"
	"testing"
)

// TestVariantChoice: SCENARIO=V wins over V alone; V alone applies to
// every scenario that has it and leaves the others at their first, with a
// note; the cells carry the variant and how it was chosen.
func TestVariantChoice(t *testing.T) {
	p, err := NewPlan(&Spec{Scenarios: []string{"kip101-hw-lag", "kip101-power-loss", "unclean-election"}, Versions: []string{"2.0"}, Seeds: 1,
		Variants: []string{"kip101", "kip101-power-loss=kip279"}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range p.Cells {
		got = append(got, c.Scenario+":"+c.Variant+":"+c.VariantFrom)
	}
	want := "kip101-hw-lag:kip101:-variant kip101-power-loss:kip279:-variant unclean-election:unclean:first"
	if strings.Join(got, " ") != want {
		t.Errorf("cells %v, want %s", got, want)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "unclean-election has no variant kip101; it runs its first, unclean") {
		t.Errorf("notes %q", p.Notes)
	}
	for _, bad := range []struct {
		variants []string
		want     string
	}{
		{[]string{"nope"}, `no scenario of this matrix has a variant "nope" (allowed: kip101-hw-lag: hw, kip101, kip279; unclean-election: unclean, clean)`},
		{[]string{"unclean-election=kip101"}, `scenario unclean-election has no variant "kip101" (allowed: unclean, clean)`},
		{[]string{"swarm=hw-unsafe"}, "swarm is not a scenario of this matrix (allowed: kip101-hw-lag, unclean-election)"},
		{[]string{"hw", "clean"}, "one variant alone applies to every scenario that has it"},
	} {
		_, err := NewPlan(&Spec{Scenarios: []string{"kip101-hw-lag", "unclean-election"}, Versions: []string{"2.0"}, Seeds: 1, Variants: bad.variants})
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want %q", bad.variants, err, bad.want)
		}
	}
}

// TestRowsSayWhatTheyRan: a row's settings are the variant's with the
// matrix's Set over them; the version-selecting keys are apart, as the
// release's; RanAs renders them in one line.
func TestRowsSayWhatTheyRan(t *testing.T) {
	p, err := NewPlan(&Spec{Scenarios: []string{"unclean-election", "swarm"}, Versions: []string{"2.0", "4.1"}, Seeds: 1,
		Set: map[string]string{"min.insync.replicas": "1", "inter.broker.protocol.version": "3.9"}})
	if err != nil {
		t.Fatal(err)
	}
	rows := p.Aggregate(nil)
	want := map[string]string{
		"unclean-election": "variant unclean (min.insync.replicas=1, unclean.leader.election.enable=true; inter.broker.protocol.version=3.9 overridden by the release)",
		"swarm":            "variant kip279-safe ($acks=all, min.insync.replicas=1, unclean.leader.election.enable=false; inter.broker.protocol.version=3.9, truncation=kip279 overridden by the release)",
	}
	for _, r := range rows {
		if got := r.RanAs(); got != want[r.Scenario] || r.VariantFrom != VariantFirst {
			t.Errorf("%s on %s: %q (%s), want %q (first)", r.Scenario, r.Version, got, r.VariantFrom, want[r.Scenario])
		}
		if !strings.Contains(strings.Join(r.Set, " "), "inter.broker.protocol.version="+r.Version) {
			t.Errorf("%s on %s: set %v, want the release's own", r.Scenario, r.Version, r.Set)
		}
	}
	if got := (Row{Variant: "default"}).RanAs(); got != "variant default" {
		t.Errorf("a variant without settings: %q", got)
	}
}
