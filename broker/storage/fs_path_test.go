package storage

import (
	"path"
	"testing"
)

// TestJoinPath: joinPath is path.Join over every pair of names of up to 4
// characters of "a./".
func TestJoinPath(t *testing.T) {
	var names []string
	var gen func(prefix string)
	gen = func(prefix string) {
		names = append(names, prefix)
		if len(prefix) < 4 {
			for _, c := range "a./" {
				gen(prefix + string(c))
			}
		}
	}
	gen("")
	for _, d := range names {
		for _, n := range names {
			if joinPath(d, n) != path.Join(d, n) {
				t.Fatalf("joinPath(%q, %q) = %q, path.Join %q", d, n, joinPath(d, n), path.Join(d, n))
			}
		}
	}
	if joinPath("/tmp/kafka-logs", ".kafka_cleanshutdown") != "/tmp/kafka-logs/.kafka_cleanshutdown" {
		t.Fatal("dot file")
	}
}
