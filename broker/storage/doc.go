// Package storage is Kafka's log storage on the simulated disk: record
// batches (v2, and the v0/v1 messages of log.message.format.version < 0.11)
// encoded byte for byte, partition logs of segments with sparse offset and
// time indexes, reads by offset and by timestamp, truncation, roll,
// retention, compaction, the flush policy, the checkpoint files, the leader
// epoch cache (LeaderEpochFileCache), recovery after a crash, and several
// log directories (LogManager), and the data plane of transactions
// (KIP-98): control batches (control.go), the aborted-transaction index
// (txnindex.go) and the producer state with its snapshots, which gives the
// first unstable offset behind the LSO (producer_state.go).
//
// The storage writes through the FS interface, which *sim.Disk satisfies:
// content is durable only after a sync, so a power loss loses exactly what
// Kafka would lose (with Kafka's default flush policy, the whole unsynced
// tail), and OpenLog recovers the way Kafka's LogLoader does. It never reads
// a clock: the caller passes the virtual time where it matters.
//
// A broker's replication layer uses a Log like this:
//
//	l, err := storage.OpenLog(disk, "/kafka-logs/orders-0", tp, cfg, recoveryPoint, logStartOffset, now)
//	info, err := l.AppendAsLeader(records, leaderEpoch, now) // leader: offsets from the LEO, epoch stamped
//	data, err := l.Read(fetchOffset, maxBytes, highWatermark)  // raw batch bytes, for a Fetch response
//	info, err = l.AppendAsFollower(data)                        // follower: fetched batches as they are
//	epoch, end := l.EndOffsetForEpoch(requestedEpoch)           // KIP-101 OffsetsForLeaderEpoch
//	err = l.TruncateTo(end)                                     // follower truncation
//	err = l.Flush()                                             // or let the flush policy decide
//
// The storage knows nothing of the high watermark: the caller passes it to
// Read (as maxOffset), DeleteOldSegments and Compact, and keeps it in
// replication-offset-checkpoint with Manager.WriteHighWatermarks. A log in
// a format below v2 has no epoch cache (EpochCache returns nil), and
// EndOffsetForEpoch answers (-1, -1), so KIP-101 falls back to truncating at
// the high watermark, as Kafka did.
//
// On disk, a partition directory "<topic>-<partition>" holds segments named
// by their 20-digit base offset (00000000000000000000.log, .index,
// .timeindex, and .txnindex once a transaction aborted in the segment),
// producer-state snapshots <offset>.snapshot (once the log held a
// transaction) and leader-epoch-checkpoint; each log directory holds
// recovery-point-offset-checkpoint, log-start-offset-checkpoint and
// replication-offset-checkpoint. Manager.Export writes them to a real
// directory for Kafka's kafka-dump-log.sh.
//
// Each file's header comment says what it simplifies relative to Kafka.
package storage
