package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
)

// TestShareConsumerStepBadInput: a share-consumer step is checked before
// the run, its error naming file:line and what is allowed.
func TestShareConsumerStepBadInput(t *testing.T) {
	const head = "describe bad\nbrokers 3\ntopic t partitions=1 rf=3\nset process.roles=broker,controller inter.broker.protocol.version=4.2\nvariant v $x=1\n"
	for _, c := range []struct{ step, want string }{
		{"share-consumer c1 group.id=g topic=nosuch", `bad.txt:6: share-consumer: topic="nosuch": want a topic of this scenario`},
		{"share-consumer c1 group.id=g topic=t share.acknowledgement.mode=sometimes", "allowed implicit, explicit"},
		{"share-consumer c1 group.id=g topic=t share.acknowledgement.mode=implicit reject=x", "need share.acknowledgement.mode=explicit"},
		{"share-consumer c1 topic=t", "a group.id is required"},
		{"share-consumer c1 group.id=g topic=t poll=0s", "poll must be > 0"},
	} {
		s, err := scenarios.Parse("bad.txt", "bad", strings.NewReader(head+c.step+"\n"))
		if err == nil {
			_, _, err = Prepare(s, "v", nil)
		}
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want one containing %q", c.step, err, c.want)
		}
	}
	// A ZooKeeper release, and 4.1 (share groups early access, off), have
	// none.
	for _, set := range []string{"", "set process.roles=broker,controller inter.broker.protocol.version=4.1\n"} {
		s, err := scenarios.Parse("old.txt", "old", strings.NewReader("describe old\nbrokers 3\ntopic t partitions=1 rf=3\n"+set+"variant v $x=1\nshare-consumer c1 group.id=g topic=t\n"))
		if err == nil {
			_, _, err = Prepare(s, "v", nil)
		}
		if err == nil || !strings.Contains(err.Error(), "4.2 or later") {
			t.Errorf("%q: error %v, want one naming 4.2", set, err)
		}
	}
}
