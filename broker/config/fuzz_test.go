package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzReadProperties: no input panics the properties reader; an error
// names the file and a line; every entry's line is within the file.
func FuzzReadProperties(f *testing.F) {
	for _, name := range []string{"server.properties", "producer.properties", "consumer.properties"} {
		if b, err := os.ReadFile(filepath.Join("..", "..", "examples", "config", name)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("a=b\\\n  c\nkey\\u0041 = v\\u00e9\n! comment\n# c\nx:y\n"))
	f.Add([]byte("bad=\\u12"))
	f.Fuzz(func(t *testing.T, in []byte) {
		entries, err := ReadProperties("f.properties", in)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "f.properties:") {
				t.Fatalf("error does not name the file and line: %v", err)
			}
			return
		}
		lines := strings.Count(string(in), "\n") + strings.Count(string(in), "\r") + 1
		for _, e := range entries {
			if e.Line < 1 || e.Line > lines {
				t.Fatalf("entry %q at line %d of a %d-line file", e.Key, e.Line, lines)
			}
			if !utf8.ValidString(e.Key) || !utf8.ValidString(e.Value) {
				t.Fatalf("entry %q=%q is not valid UTF-8 (ISO-8859-1 is decoded)", e.Key, e.Value)
			}
		}
	})
}
