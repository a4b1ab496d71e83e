package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// TestRestartFencedOnAStaticConsumer: restart-fenced=DUR is taken by a
// static member (its supervisor restarts it after FENCED_INSTANCE_ID) as
// by a consume-transform-produce one, and refused when it is no positive
// duration.
func TestRestartFencedOnAStaticConsumer(t *testing.T) {
	script := func(v string) *scenarios.Script {
		src := "describe restart-fenced\nbrokers 3\ntopic t partitions=2 rf=3\nrun 1s\n" +
			"consumer c1 group.id=g group.instance.id=i1 topic=t restart-fenced=" + v + "\nrun 1s\n"
		s, err := scenarios.Parse("f.txt", "f", strings.NewReader(src))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	if _, _, err := Prepare(script("2s"), "", nil); err != nil {
		t.Errorf("restart-fenced=2s on a static consumer: %v", err)
	}
	for _, bad := range []string{"0s", "soon"} {
		if _, _, err := Prepare(script(bad), "", nil); err == nil || !strings.Contains(err.Error(), "restart-fenced=\""+bad+"\": want a positive duration") {
			t.Errorf("restart-fenced=%s: err = %v, want it refused", bad, err)
		}
	}
}
