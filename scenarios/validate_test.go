package scenarios

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBuiltinScriptsPassValidation: every script that ships (and the test
// scripts) is accepted whole, under every variant.
func TestBuiltinScriptsPassValidation(t *testing.T) {
	all, err := All()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("testdata/*.txt")
	for _, f := range files {
		s, err := Load(f)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		all = append(all, s)
	}
	for _, s := range all {
		for _, v := range s.Variants {
			if _, _, err := s.Prepare(v.Name, nil); err != nil {
				t.Errorf("%s/%s: %v", s.Name, v.Name, err)
			}
		}
	}
	_ = os.Stdout
	_ = strings.Contains
}
