package cluster

import (
	"strconv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// TestControllerSeesABouncedBroker (KIP-380, KAFKA-1120): a broker dies
// and registers again while the controller is paused, so the controller
// reads /brokers/ids once and finds the same ids as before. Only the broker
// epoch (the registration's czxid) shows that the broker bounced; the
// controller must then treat it as failed and started, and tell it its
// partitions, or it stays a broker with no replicas.
func TestControllerSeesABouncedBroker(t *testing.T) {
	c := build(t, 3, map[string]string{"zookeeper.session.timeout.ms": "20000"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	c.World.RunFor(5 * sim.Second)
	ctl := c.ActiveController()
	if ctl < 0 {
		t.Fatal("no controller")
	}
	bounced := (ctl + 1) % 3
	must(c.World.Inject(sim.Crash{Node: c.Brokers[bounced]}))
	must(c.World.Inject(sim.Restart{Node: c.Brokers[bounced]}))
	// The old registration lasts until its session expires (20s); the
	// controller sleeps through the expiry and the new registration.
	c.World.RunFor(16 * sim.Second)
	must(c.World.Inject(sim.Pause{Node: c.Brokers[ctl], For: 6 * sim.Second}))
	c.World.RunFor(30 * sim.Second)
	b := c.Broker(bounced)
	for p := int32(0); p < 3; p++ {
		part, ok := b.Partition(storage.TopicPartition{Topic: "t", Partition: p})
		if !ok || part.Role().String() == "none" {
			t.Errorf("t-%d: the bounced broker b%d has no replica role: the controller missed its restart", p, bounced)
		}
	}
	found := false
	for _, r := range c.World.Trace().Records() {
		if r.Kind == "controller-broker-change" && strings.Contains(r.String(), "bounced=["+strconv.Itoa(bounced)+"]") {
			found = true
		}
	}
	if !found {
		t.Error("the controller logged no bounced broker")
	}
}
