package scenarios

import (
	"slices"
	"strings"
	"testing"
)

// TestEndPhaseLineErrors: a malformed 'end-phase' header line, or one
// that names what is not a node of the script, is refused at its line,
// saying what is allowed.
func TestEndPhaseLineErrors(t *testing.T) {
	const k = "brokers 3\ncontrollers 3\ntopic t rf=3\n" // lines 1-3
	const z = "brokers 3\ntopic t rf=3\n"                // lines 1-2
	const cut = "cut controller <-> ctl0\n"
	cases := []struct{ name, src, want string }{
		{"no argument", k + "end-phase\n" + cut, `f.txt:4: end-phase: want 'end-phase heal' (the default`},
		{"unknown word", k + "end-phase keep\n" + cut, `f.txt:4: end-phase: want 'end-phase heal'`},
		{"two words", k + "end-phase keep-cuts heal\n" + cut, `f.txt:4: end-phase: want 'end-phase heal'`},
		{"unknown key", k + "end-phase keep=ctl0,ctl1\n" + cut, `f.txt:4: end-phase: want 'end-phase heal'`},
		{"empty list", k + "end-phase keep-cuts=\n" + cut, `f.txt:4: end-phase keep-cuts="": an empty node name`},
		{"empty name", k + "end-phase keep-cuts=ctl0,,ctl1\n" + cut, `f.txt:4: end-phase keep-cuts="ctl0,,ctl1": an empty node name`},
		{"one name", k + "end-phase keep-cuts=ctl0\n" + cut, `f.txt:4: end-phase keep-cuts="ctl0": a cut is between two nodes, name at least two`},
		{"twice named", k + "end-phase keep-cuts=ctl0,ctl1,ctl0\n" + cut, `f.txt:4: end-phase keep-cuts="ctl0,ctl1,ctl0": ctl0 named twice`},
		{"given twice", k + "end-phase keep-cuts\nend-phase heal\n" + cut, `f.txt:5: end-phase: given twice (first at line 4)`},
		{"in the body", k + cut + "end-phase keep-cuts\n", `f.txt:5: "end-phase" belongs in the header`},
		{"nothing cut", k + "end-phase keep-cuts\nrun 1s\ncrash b0\n", `f.txt:4: end-phase: keep-cuts: the script has no cut, partition or swarm step`},
		{"controller", k + "end-phase keep-cuts=controller,ctl1\n" + cut, `f.txt:4: end-phase: keep-cuts: "controller" names the active controller at each step`},
		{"variable", k + "end-phase keep-cuts=$a,ctl1\n" + cut, `f.txt:4: end-phase: keep-cuts: $a: a header line takes node names`},
		{"controller out of range", k + "end-phase keep-cuts=ctl0,ctl3\n" + cut, `f.txt:4: end-phase: keep-cuts: "ctl3" is not a controller`},
		{"broker out of range", k + "end-phase keep-cuts=b0,b3\n" + cut, `f.txt:4: end-phase: keep-cuts: "b3" is not a broker`},
		{"ctlN in ZooKeeper mode", z + "end-phase keep-cuts=ctl0,b1\ncut b0 <-> b1\n", `f.txt:3: end-phase: keep-cuts: "ctl0": no dedicated KRaft controllers in this script`},
		{"unknown client", z + "end-phase keep-cuts=b0,p9\ncut b0 <-> b1\n", `f.txt:3: end-phase: keep-cuts: "p9" is no node of the script (brokers 3 makes b0..b2`},
		{"near miss", k + "end-phse keep-cuts\n" + cut, `f.txt:4: unknown keyword "end-phse"; did you mean "end-phase"?`},
	}
	for _, c := range cases {
		_, err := Parse("f.txt", "f", strings.NewReader(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: script %q:\n  error %v\n  want it to contain %q", c.name, c.src, err, c.want)
		}
	}
}

// TestEndPhaseLineReachesTheEndOptions: each form of the line is what
// EndOptions gives the harness; without the line every cut is healed.
func TestEndPhaseLineReachesTheEndOptions(t *testing.T) {
	const k = "brokers 3\ncontrollers 3\ntopic t rf=3\nset kafkasim.liveness.timeout.ms=5000\n"
	cases := []struct {
		line    string
		keep    bool
		between []string
	}{
		{"", false, nil},
		{"end-phase heal\n", false, nil},
		{"end-phase keep-cuts\n", true, nil},
		{"end-phase keep-cuts=ctl0,ctl1,ctl2\n", true, []string{"ctl0", "ctl1", "ctl2"}},
		{"end-phase keep-cuts=b0,p1\n", true, []string{"b0", "p1"}}, // a client the steps make
	}
	for _, c := range cases {
		src := k + c.line + "produce p1 t/0 m0\ncut p1 <-> b0\npartition ctl0 | ctl1,ctl2,b0,b1,b2\n"
		s, err := Parse("f.txt", "f", strings.NewReader(src))
		if err != nil {
			t.Fatalf("%q: %v", c.line, err)
		}
		o, err := s.EndOptions(s.Variants[0], nil)
		if err != nil {
			t.Fatalf("%q: %v", c.line, err)
		}
		if o.KeepCuts != c.keep || !slices.Equal(o.KeepCutsBetween, c.between) || !o.FinalRead || o.LivenessTimeout.String() != "5.000s" {
			t.Errorf("%q: end options %+v, want keep-cuts %t between %v (final reads on, liveness 5s)", c.line, o, c.keep, c.between)
		}
	}
}
