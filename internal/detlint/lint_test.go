package detlint

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProtocolCodeStaysInTheSimulation is the determinism lint of the
// project: it fails on any escape in broker/ and model/.
func TestProtocolCodeStaysInTheSimulation(t *testing.T) {
	var roots []string
	for _, r := range []string{"../../broker", "../../model"} {
		if _, err := os.Stat(r); err == nil {
			roots = append(roots, r)
		}
	}
	if len(roots) == 0 {
		t.Fatal("neither broker/ nor model/ found: the lint would check nothing")
	}
	findings, err := Check(roots...)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range findings {
		t.Error(f)
	}
}

// TestCheckFindsEveryEscape runs the lint on a file that does every
// forbidden thing and on one that does none.
func TestCheckFindsEveryEscape(t *testing.T) {
	dir := t.TempDir()
	bad := `package bad

import (
	"crypto/rand"
	"math/rand/v2"
	"net"
	"os"
	"sync"
	clock "time"
)

func f() {
	var mu sync.Mutex
	mu.Lock()
	ch := make(chan int)
	go func() { ch <- 1 }()
	<-ch
	select {}
	_ = clock.Now()
	clock.Sleep(1)
	_ = clock.After(1)
	_ = rand.IntN(3)
	_, _ = os.ReadFile("x")
	_, _ = net.Dial("tcp", "x")
	_ = rand.Read
}
`
	good := `package good

import (
	"math/rand/v2"
	"time"
)

func g(r *rand.Rand) time.Duration {
	_ = rand.New(rand.NewPCG(1, 2))
	return time.Duration(r.IntN(3))
}
`
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.MkdirAll(filepath.Join(dir, "bad"), 0o755))
	must(os.MkdirAll(filepath.Join(dir, "good"), 0o755))
	must(os.WriteFile(filepath.Join(dir, "bad", "bad.go"), []byte(bad), 0o644))
	must(os.WriteFile(filepath.Join(dir, "good", "good.go"), []byte(good), 0o644))
	must(os.WriteFile(filepath.Join(dir, "good", "x_test.go"), []byte(bad), 0o644))

	findings, err := Check(filepath.Join(dir, "good"))
	must(err)
	if len(findings) != 0 {
		t.Fatalf("clean file flagged: %v", findings)
	}
	findings, err = Check(filepath.Join(dir, "bad"))
	must(err)
	var all strings.Builder
	for _, f := range findings {
		all.WriteString(f.String() + "\n")
	}
	for _, want := range []string{"imports crypto/rand", "imports net", "imports os", "imports sync", "go statement", "channel type", "channel send", "channel receive", "select", "time.Now", "time.Sleep", "time.After", "rand.IntN"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("lint missed %q; it found:\n%s", want, all.String())
		}
	}
}
