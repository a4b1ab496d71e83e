package serve

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
)

// TestKcatThroughALeaderCrash: librdkafka, through Debian's kcat,
// produces through a crash of t/0's leader and reads everything back.
// The README's set-up installs kcat where apt-get is available; without
// it the test says so and skips.
func TestKcatThroughALeaderCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	kcat, err := exec.LookPath("kcat")
	if err != nil {
		t.Skip("kcat is not installed (Debian: apt-get install kcat; .ci/run installs it where apt-get is available): skipping the librdkafka test")
	}
	s := startServer(t, 5, nil, nil)
	brokers := strings.Join(s.Addrs(), ",")
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	produce := func(from, to int) {
		var in bytes.Buffer
		for i := from; i < to; i++ {
			fmt.Fprintf(&in, "k%d\n", i)
		}
		cmd := exec.CommandContext(ctx, kcat, "-b", brokers, "-t", "t", "-P", "-X", "acks=all", "-X", "enable.idempotence=true")
		cmd.Stdin = &in
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("kcat -P: %v\n%s", err, out)
		}
	}
	produce(0, 30)
	if a := s.Command("crash-leader t/0"); !strings.HasPrefix(a, "ok") {
		t.Fatalf("crash-leader: %s", a)
	}
	produce(30, 60)
	// NB: standard output only: librdkafka logs on standard error that the
	// crashed broker, still in the bootstrap list, refuses connections.
	var stderr bytes.Buffer
	cons := exec.CommandContext(ctx, kcat, "-b", brokers, "-t", "t", "-C", "-o", "beginning", "-e", "-q", "-f", "%s\n")
	cons.Stderr = &stderr
	out, err := cons.Output()
	if err != nil {
		t.Fatalf("kcat -C: %v\n%s%s", err, out, stderr.Bytes())
	}
	readBackAll(t, "kcat", strings.Fields(string(out)), "k", 60)
	res := stopAndWait(t, s)
	for _, v := range res.Verdicts {
		if v.Checker == "acked-loss" && v.Result != checkers.ResultOK {
			t.Fatalf("acked-loss: %v", v)
		}
	}
}
