package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// tinySwarm is the swarm scenario cut to a few seconds, for tests.
const tinySwarm = `
brokers 3
topic t partitions=1 rf=3
set zookeeper.session.timeout.ms=6000 replica.lag.time.max.ms=10000
variant safe truncation=kip279 min.insync.replicas=2 $acks=all
run 3s
swarm 4s clients=1 interval=50ms acks=$acks fault-every=500ms crash=0.3 power-loss=0 pause=0 partition=0 heal=0.3
heal
restart-all
run 5s
`

// TestSwarmRatesFollowScriptVariables: a sweep's $crash reaches the swarm
// step: no crash at rate 0, crashes at rate 1.
func TestSwarmRatesFollowScriptVariables(t *testing.T) {
	s, err := scenarios.Parse("tiny.txt", "tiny", strings.NewReader(tinySwarm))
	if err != nil {
		t.Fatal(err)
	}
	crashes := func(rate string) int {
		res, err := Run(s, "safe", Options{Seed: 3, Set: map[string]string{"$crash": rate, "$heal": "0"}, KeepTrace: true})
		if err != nil || res.Failed != "" {
			t.Fatal(err, res.Failed)
		}
		n := 0
		for _, r := range res.World.Trace().Records() {
			if r.Kind == "crash" {
				n++
			}
		}
		return n
	}
	if a, b := crashes("0"), crashes("1"); a != 0 || b == 0 {
		t.Fatalf("crashes at $crash=0: %d, at $crash=1: %d", a, b)
	}
	if got := ReplayCommand("tiny", "safe", 3, map[string]string{"$crash": "1"}); !strings.HasSuffix(got, "-set '$crash=1'") {
		t.Fatalf("replay command %q: the $ must be quoted for the shell", got)
	}
}
