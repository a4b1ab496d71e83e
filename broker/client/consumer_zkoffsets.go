package client

// This file holds what offsets.storage=zookeeper changes in the consumer:
// its commits and offset lookups use OffsetCommit v0 and OffsetFetch v0,
// which brokers serve from ZooKeeper (/consumers/<group>/offsets/...)
// instead of the group coordinator's __consumer_offsets — the storage of
// Kafka's pre-0.9 consumer, which the seeds describe. Group membership still
// runs through the coordinator, as the Java consumer's does; v0 carries no
// generation or member id, so the broker cannot refuse a commit from a
// member that was fenced, and a zombie's commit can move an offset back.
// Simplification vs the old Scala consumer: it wrote the znodes with its
// own ZooKeeper client and coordinated rebalances through ZooKeeper
// watches; here the requests go to the group's coordinator broker (any
// broker answers v0) and rebalances are the classic group protocol's.

import (
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/twmb/franz-go/pkg/kerr"
)

// offsetsInZK reports whether committed offsets live in ZooKeeper.
func (c *Consumer) offsetsInZK() bool { return c.cfg.OffsetsStorage == config.OffsetsZookeeper }

// offsetCommitVersion is the OffsetCommit version the consumer sends.
func (c *Consumer) offsetCommitVersion() int16 {
	if c.offsetsInZK() {
		return 0
	}
	if c.consumerProtocol() {
		return 9 // KIP-848: the member epoch is checked
	}
	return 7
}

// offsetFetchVersion is the OffsetFetch version the consumer sends.
func (c *Consumer) offsetFetchVersion() int16 {
	if c.offsetsInZK() {
		return 0
	}
	return 5
}

// noCommittedOffset reports whether a partition's OffsetFetch answer says
// "nothing committed": offset -1, with no error from the coordinator, or
// with UNKNOWN_TOPIC_OR_PARTITION from v0 (Kafka's broker answers a missing
// znode so, OffsetFetchResponse.UNKNOWN_PARTITION).
func (c *Consumer) noCommittedOffset(code int16, offset int64) bool {
	return offset < 0 && (code == 0 || c.offsetsInZK() && code == kerr.UnknownTopicOrPartition.Code)
}
