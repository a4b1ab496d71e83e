package storage_test

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
)

// Example shows a leader and a follower log: the leader appends records
// stamped with its epoch, the follower appends the fetched bytes as they
// are, a crash loses the follower's unsynced tail, and KIP-101's
// OffsetsForLeaderEpoch answers from the epoch cache.
func Example() {
	disk, _ := sim.NewDisk(sim.DiskConfig{}, nil) // a power loss keeps no unsynced write
	cfg := storage.DefaultConfig()
	cfg.LogDirs = []string{"/b0", "/b1"}
	leader, _ := storage.OpenLog(disk, "/b0/orders-0", storage.TopicPartition{Topic: "orders", Partition: 0}, cfg, 0, 0, 0)
	follower, _ := storage.OpenLog(disk, "/b1/orders-0", storage.TopicPartition{Topic: "orders", Partition: 0}, cfg, 0, 0, 0)

	now := sim.Time(0)
	leader.AppendAsLeader([]storage.Record{{Key: []byte("a"), Value: []byte("1")}, {Key: []byte("b"), Value: []byte("2")}}, 1, now)
	leader.AppendAsLeader([]storage.Record{{Key: []byte("c"), Value: []byte("3")}}, 2, now)

	// The follower fetches from its LEO up to the leader's LEO.
	data, _ := leader.Read(follower.LogEndOffset(), 1<<20, leader.LogEndOffset())
	follower.AppendAsFollower(data)
	fmt.Println("follower LEO:", follower.LogEndOffset(), "epochs:", follower.EpochCache().Entries())
	epoch, end := leader.EndOffsetForEpoch(1)
	fmt.Println("end offset for epoch 1:", epoch, end)

	// Nothing was flushed (Kafka's default): a power loss loses it all.
	disk.PowerLoss()
	follower, _ = storage.OpenLog(disk, "/b1/orders-0", storage.TopicPartition{Topic: "orders", Partition: 0}, cfg, 0, 0, 0)
	fmt.Println("after power loss, follower LEO:", follower.LogEndOffset())
	// Output:
	// follower LEO: 3 epochs: [{1 0} {2 2}]
	// end offset for epoch 1: 1 2
	// after power loss, follower LEO: 0
}
