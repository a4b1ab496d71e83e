package zk_test

import (
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

// BenchmarkIdleCluster is the ZooKeeper share of the benchmark: a
// server and three registered brokers pinging for 60 simulated seconds.
func BenchmarkIdleCluster(b *testing.B) {
	for b.Loop() {
		h := newHarness(b, 1, lan)
		for i := int32(1); i <= 3; i++ {
			h.addClient(fmt.Sprintf("b%d", i), sim.Ms(18000), at(10, func(n *client, ctx *sim.Context) {
				n.c.CreateRecursive(ctx, zk.BrokerIDPath(i), nil, nil)
			}))
		}
		if res := h.w.RunUntil(sim.Time(60 * sim.Second)); res.Reason == sim.Panicked {
			b.Fatal(res.Panic)
		}
	}
}
