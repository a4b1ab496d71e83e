package client

// This file is the consumer's view of its connections (Kafka's
// ClusterConnectionStates): a broker whose connection was reset
// (HandleDisconnect) is not sent to again until reconnect.backoff.ms has
// passed, doubling with each reset in a row up to reconnect.backoff.max.ms;
// a request for it meanwhile fails with ErrDisconnected when the back-off
// ends, and a reset asks for fresh metadata, as NetworkClient does when a
// node disconnects. An answer from the broker clears its back-off.
// Simplification: no jitter (Kafka adds ±20%).

import "github.com/kafkasim/kafkasim/sim"

// connBackoff is a reset broker's back-off.
type connBackoff struct {
	until    sim.Time
	failures int
}

// backingOff returns when the back-off from node ends, if it has not yet.
func (c *Consumer) backingOff(now sim.Time, node sim.NodeID) (sim.Time, bool) {
	b, ok := c.backoff[node]
	return b.until, ok && now < b.until
}

// connectionReset starts or lengthens node's back-off.
func (c *Consumer) connectionReset(now sim.Time, node sim.NodeID) {
	if c.backoff == nil {
		c.backoff = map[sim.NodeID]connBackoff{}
	}
	b := c.backoff[node]
	d, most := c.cfg.ReconnectBackoff, max(c.cfg.ReconnectBackoffMax, c.cfg.ReconnectBackoff)
	for i := 0; i < b.failures && d < most; i++ {
		d *= 2
	}
	b.failures++
	b.until = now.Add(min(d, most))
	c.backoff[node] = b
	c.meta.needUpdate = true
}
