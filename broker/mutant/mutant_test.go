package mutant

import (
	"strings"
	"testing"
)

func TestCatalogue(t *testing.T) {
	if len(Catalogue) < 30 {
		t.Errorf("%d mutants, want at least 30", len(Catalogue))
	}
	if len(Catalogue) > 64 {
		t.Fatalf("%d mutants do not fit a Set", len(Catalogue))
	}
	seen := map[string]bool{}
	for i, m := range Catalogue {
		if int(m.ID) != i {
			t.Errorf("%s: ID %d at index %d", m.Name, m.ID, i)
		}
		if m.Name == "" || strings.ToLower(m.Name) != m.Name || strings.ContainsAny(m.Name, " .=") || seen[m.Name] {
			t.Errorf("mutant %d: bad or repeated name %q", i, m.Name)
		}
		seen[m.Name] = true
		if m.Mistake == "" || m.Where == "" || m.Layer == "" {
			t.Errorf("%s: undocumented", m.Name)
		}
		if len(m.Targets) == 0 && m.Equivalent == "" {
			t.Errorf("%s: no scenario reaches it and it is not equivalent", m.Name)
		}
		if got, ok := ByName(m.Name); !ok || got.ID != m.ID {
			t.Errorf("ByName(%q) = %v, %v", m.Name, got.ID, ok)
		}
	}
}

func TestSet(t *testing.T) {
	var s Set
	if s.On(FsyncLies) || s.String() != "" {
		t.Fatalf("zero Set has %q", s)
	}
	s = s.With(FsyncLies, true).With(HWBeforeISRFetch, true)
	if !s.On(FsyncLies) || !s.On(HWBeforeISRFetch) || s.On(IndexOffByOne) {
		t.Fatalf("Set %q", s)
	}
	if got := s.String(); got != "hw-before-isr-fetch,fsync-lies" {
		t.Errorf("String = %q", got)
	}
	if s = s.With(FsyncLies, false); s.On(FsyncLies) {
		t.Errorf("With(false) left it on")
	}
}
