package replay

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadChoiceFile: no input panics the choice-file reader, and a file
// it reads writes back to one it reads the same.
func FuzzReadChoiceFile(f *testing.F) {
	if b, err := os.ReadFile(filepath.Join("..", "testdata", "kip101-hw-lag.kip279.stale-response.choices")); err == nil {
		f.Add(b)
	}
	f.Add([]byte("version 1\nscenario s\nvariant v\nseed 1\n"))
	f.Add([]byte("order:0/2\nlatency:3/7\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		cf, err := ReadChoiceFile(bytes.NewReader(in))
		if err != nil {
			if _, ok := err.(*ChoiceMismatch); !ok {
				t.Fatalf("error of type %T, want *ChoiceMismatch: %v", err, err)
			}
			return
		}
		var out bytes.Buffer
		if err := cf.Write(&out); err != nil {
			t.Fatalf("write: %v", err)
		}
		again, err := ReadChoiceFile(&out)
		if err != nil {
			t.Fatalf("a written file does not read back: %v\n%s", err, out.String())
		}
		if len(again.Choices) != len(cf.Choices) || again.Seed != cf.Seed || again.Scenario != cf.Scenario || again.Variant != cf.Variant {
			t.Fatalf("read back differs: %d choices seed %d %s/%s, was %d seed %d %s/%s",
				len(again.Choices), again.Seed, again.Scenario, again.Variant, len(cf.Choices), cf.Seed, cf.Scenario, cf.Variant)
		}
	})
}
