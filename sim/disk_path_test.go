package sim

import (
	"path"
	"testing"
)

// TestIsClean: isClean(n) implies path.Clean(n) == n, cleanDir and dirOf
// are path.Clean and path.Dir, and the names the brokers use are
// recognized (every name of up to 5 characters over
// "a./" checked, and some typical ones).
func TestIsClean(t *testing.T) {
	var names []string
	var gen func(prefix string)
	gen = func(prefix string) {
		names = append(names, prefix)
		if len(prefix) < 5 {
			for _, c := range "a./" {
				gen(prefix + string(c))
			}
		}
	}
	gen("")
	for _, n := range names {
		if isClean(n) && path.Clean(n) != n {
			t.Errorf("%q: isClean, but path.Clean gives %q", n, path.Clean(n))
		}
		if n != "" && cleanDir(n) != path.Clean(n) {
			t.Errorf("cleanDir(%q) = %q, path.Clean %q", n, cleanDir(n), path.Clean(n))
		}
		if dirOf(n) != path.Dir(n) {
			t.Errorf("dirOf(%q) = %q, path.Dir %q", n, dirOf(n), path.Dir(n))
		}
	}
	for _, n := range []string{"/", "a", "/data/t-0/00000000000000000000.log", "data/replication-offset-checkpoint.tmp", "a.b/c/d..", "/tmp/kafka-logs/.kafka_cleanshutdown", ".a/b", "a/.b", "a/..b"} {
		if !isClean(n) {
			t.Errorf("%q: clean, not recognized", n)
		}
	}
}
