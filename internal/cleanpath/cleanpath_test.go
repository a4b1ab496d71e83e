package cleanpath

import (
	"path"
	"testing"
)

// names are every name of up to n characters over "a./".
func names(n int) []string {
	var out []string
	var gen func(prefix string)
	gen = func(prefix string) {
		out = append(out, prefix)
		if len(prefix) < n {
			for _, c := range "a./" {
				gen(prefix + string(c))
			}
		}
	}
	gen("")
	return out
}

// TestIsClean: IsClean(n) implies path.Clean(n) == n, Clean and Dir are
// path.Clean and path.Dir, and the names the brokers use are recognized
// (every name of up to 5 characters over "a./" checked, and some typical
// ones).
func TestIsClean(t *testing.T) {
	for _, n := range names(5) {
		if IsClean(n) && path.Clean(n) != n {
			t.Errorf("%q: IsClean, but path.Clean gives %q", n, path.Clean(n))
		}
		if Clean(n) != path.Clean(n) {
			t.Errorf("Clean(%q) = %q, path.Clean %q", n, Clean(n), path.Clean(n))
		}
		if Dir(n) != path.Dir(n) {
			t.Errorf("Dir(%q) = %q, path.Dir %q", n, Dir(n), path.Dir(n))
		}
	}
	for _, n := range []string{"/", "a", "/data/t-0/00000000000000000000.log", "data/replication-offset-checkpoint.tmp", "a.b/c/d..", "/tmp/kafka-logs/.kafka_cleanshutdown", ".a/b", "a/.b", "a/..b"} {
		if !IsClean(n) {
			t.Errorf("%q: clean, not recognized", n)
		}
	}
}

// TestJoin: Join is path.Join over every pair of names of up to 4
// characters of "a./".
func TestJoin(t *testing.T) {
	ns := names(4)
	for _, d := range ns {
		for _, n := range ns {
			if Join(d, n) != path.Join(d, n) {
				t.Fatalf("Join(%q, %q) = %q, path.Join %q", d, n, Join(d, n), path.Join(d, n))
			}
		}
	}
	if Join("/tmp/kafka-logs", ".kafka_cleanshutdown") != "/tmp/kafka-logs/.kafka_cleanshutdown" {
		t.Fatal("dot file")
	}
}
