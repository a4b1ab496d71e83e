package storage

// This file is the broker's log manager (LogManager.scala): the log
// directories of log.dirs, the partitions on them, the per-directory
// checkpoint files (recovery-point-offset-checkpoint,
// log-start-offset-checkpoint, and ReplicaManager's
// replication-offset-checkpoint of high watermarks), the clean shutdown
// marker, and the periodic work (flush, retention, compaction, checkpoints)
// driven by Tick. A new partition goes to the directory holding the fewest
// partitions, ties to the earliest in log.dirs.
// Simplifications vs Kafka: no offline log directories, no future
// (reassignment) logs, no asynchronous deletion of deleted partitions; the
// scheduler's tasks run when the caller's Tick finds them due.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/internal/cleanpath"
	"github.com/kafkasim/kafkasim/sim"
)

// Manager holds a broker's logs.
// Invariant: every log lives in exactly one of cfg.LogDirs, recorded in dirOf.
type Manager struct {
	fs    FS
	cfg   Config
	logs  map[TopicPartition]*Log
	dirOf map[TopicPartition]string
	// sorted caches the keys of logs, sorted (partitions); nil: stale.
	sorted []TopicPartition
	// paths caches the checkpoint files' names per (directory, file),
	// with their temporary files' (ckptPaths); ckpt is the buffer a
	// checkpoint is formatted into, reused (FS.Append keeps no reference).
	paths map[[2]string][2]string
	ckpt  []byte

	lastRetention, lastClean, lastRecoveryCkpt, lastStartCkpt sim.Time
	cleaned                                                   []Cleaned // TakeCleaned

	// previousBrokerEpoch is the broker epoch the clean-shutdown markers
	// held at open (KIP-966, Kafka's CleanShutdownFileHandler), -1 when a
	// directory had none or none held one; brokerEpoch is what Close
	// writes into them, -1 for nothing (the empty marker of ZooKeeper mode).
	previousBrokerEpoch, brokerEpoch int64
}

// PreviousBrokerEpoch is the broker epoch the clean-shutdown markers held
// when the Manager opened: the PreviousBrokerEpoch a KRaft broker registers
// with (BrokerLifecycleManager), -1 after an unclean shutdown.
func (m *Manager) PreviousBrokerEpoch() int64 { return m.previousBrokerEpoch }

// SetBrokerEpoch sets the broker epoch Close writes into the clean-shutdown
// markers (a KRaft broker's current registration).
func (m *Manager) SetBrokerEpoch(epoch int64) { m.brokerEpoch = epoch }

// markerEpoch reads the broker epoch of a clean-shutdown marker
// ({"version":0,"broker_epoch":N}), -1 for an empty or unreadable one.
func markerEpoch(data []byte) int64 {
	var v struct {
		Version     int   `json:"version"`
		BrokerEpoch int64 `json:"broker_epoch"`
	}
	if len(data) == 0 || json.Unmarshal(data, &v) != nil || v.Version != 0 {
		return -1
	}
	return v.BrokerEpoch
}

// ClusterMetadataTopic is KRaft's metadata log topic, __cluster_metadata:
// the raft client owns its directory, the Manager leaves it alone.
const ClusterMetadataTopic = "__cluster_metadata"

// OpenManager loads every partition of every log directory, recovering
// each from its checkpointed recovery point unless the directory was shut
// down cleanly.
func OpenManager(fs FS, cfg Config, now sim.Time) (*Manager, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	fs = withMutants(fs, cfg.Mutants)
	m := &Manager{fs: fs, cfg: cfg, logs: map[TopicPartition]*Log{}, dirOf: map[TopicPartition]string{},
		lastRetention: now, lastClean: now, lastRecoveryCkpt: now, lastStartCkpt: now,
		previousBrokerEpoch: -1, brokerEpoch: -1}
	for i, dir := range cfg.LogDirs {
		marker := cleanpath.Join(dir, CleanShutdownFile)
		clean := fs.Exists(marker)
		epoch := int64(-1)
		if clean {
			data, err := fs.ReadFile(marker)
			if err != nil {
				return nil, err
			}
			epoch = markerEpoch(data)
		}
		if i == 0 {
			m.previousBrokerEpoch = epoch
		} else if epoch != m.previousBrokerEpoch {
			m.previousBrokerEpoch = -1
		}
		rps, err := readOffsets(fs, cleanpath.Join(dir, RecoveryPointFile))
		if err != nil {
			return nil, err
		}
		lsos, err := readOffsets(fs, cleanpath.Join(dir, LogStartOffsetFile))
		if err != nil {
			return nil, err
		}
		names, err := listDir(fs, dir)
		if err != nil {
			return nil, err
		}
		for _, n := range names {
			tp, ok := ParseTopicPartition(n)
			if !ok {
				continue
			}
			full := cleanpath.Join(dir, n)
			if !fs.IsDir(full) || tp.Topic == ClusterMetadataTopic {
				// NB: KRaft's metadata log may share a log directory; it
				// belongs to the raft client, not to the LogManager (Kafka's
				// LogManager skips it the same way).
				continue
			}
			if other, dup := m.dirOf[tp]; dup {
				return nil, fmt.Errorf("storage: partition %s is in two log directories, %s and %s", tp, other, dir)
			}
			rp := rps[tp]
			if clean {
				rp = noRecovery
			}
			l, err := openLog(fs, full, tp, cfg, rp, lsos[tp], now) // cfg validated above
			if err != nil {
				return nil, err
			}
			m.logs[tp], m.dirOf[tp] = l, dir
			m.sorted = nil
		}
		if clean {
			if err := fs.Remove(marker); err != nil {
				return nil, err
			}
			if err := fs.SyncDir(dir); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

func readOffsets(fs FS, file string) (map[TopicPartition]int64, error) {
	data, err := readCheckpointFile(fs, file)
	if err != nil {
		return nil, err
	}
	entries, err := ParseOffsetCheckpoint(file, data)
	if err != nil {
		return nil, err
	}
	if len(entries) == 0 {
		return nil, nil // read only: a nil map answers 0, as an empty one
	}
	out := make(map[TopicPartition]int64, len(entries))
	for _, e := range entries {
		out[e.TopicPartition] = e.Offset
	}
	return out, nil
}

// Log returns the log of tp, if the broker holds it.
func (m *Manager) Log(tp TopicPartition) (*Log, bool) {
	l, ok := m.logs[tp]
	return l, ok
}

// LogDir returns the log directory holding tp ("" if none).
func (m *Manager) LogDir(tp TopicPartition) string { return m.dirOf[tp] }

// Partitions returns the partitions held, sorted by topic and partition.
func (m *Manager) Partitions() []TopicPartition { return slices.Clone(m.partitions()) }

// partitions returns the partitions held, sorted, from a cache that a log
// created or deleted resets. The caller must not modify the slice.
// Invariant: a rebuild makes a new slice, so one a caller is iterating
// over stays as it was.
func (m *Manager) partitions() []TopicPartition {
	if m.sorted == nil {
		out := make([]TopicPartition, 0, len(m.logs))
		for tp := range m.logs {
			out = append(out, tp)
		}
		slices.SortFunc(out, CompareTP)
		m.sorted = out
	}
	return m.sorted
}

// CompareTP orders partitions by topic, then partition.
func CompareTP(a, b TopicPartition) int {
	if c := strings.Compare(a.Topic, b.Topic); c != 0 {
		return c
	}
	return cmp.Compare(a.Partition, b.Partition)
}

// nextLogDir returns the log directory with the fewest partitions.
func (m *Manager) nextLogDir() string {
	if len(m.cfg.LogDirs) == 1 {
		return m.cfg.LogDirs[0]
	}
	count := make([]int, len(m.cfg.LogDirs))
	for tp := range m.logs { // a count: the order does not matter (and sorting per new log cost P² log P)
		for i, d := range m.cfg.LogDirs {
			if m.dirOf[tp] == d {
				count[i]++
			}
		}
	}
	best := 0
	for i := range count {
		if count[i] < count[best] {
			best = i
		}
	}
	return m.cfg.LogDirs[best]
}

// GetOrCreateLog returns the log of tp, creating it empty in the log
// directory with the fewest partitions if the broker does not hold it.
// cfg overrides the broker's configuration for a new log (topic configs,
// e.g. cleanup.policy=compact for __consumer_offsets); nil keeps it. The
// log directories stay the broker's.
func (m *Manager) GetOrCreateLog(tp TopicPartition, cfg *Config, now sim.Time) (*Log, error) {
	if l, ok := m.logs[tp]; ok {
		return l, nil
	}
	if tp.Topic == "" || tp.Partition < 0 {
		return nil, fmt.Errorf("storage: partition %q: the topic must be non-empty and the partition >= 0", tp)
	}
	c := m.cfg // validated by OpenManager
	if cfg != nil {
		c = *cfg
		c.LogDirs = m.cfg.LogDirs
		if err := c.Validate(); err != nil {
			return nil, err
		}
	}
	dir := m.nextLogDir()
	l, err := openLog(m.fs, cleanpath.Join(dir, tp.String()), tp, c, 0, 0, now)
	if err != nil {
		return nil, err
	}
	if err := m.fs.SyncDir(dir); err != nil {
		return nil, err
	}
	m.logs[tp], m.dirOf[tp] = l, dir
	m.sorted = nil
	return l, nil
}

// DeleteLog removes tp's log and its files.
func (m *Manager) DeleteLog(tp TopicPartition) error {
	l, ok := m.logs[tp]
	if !ok {
		return nil
	}
	if err := l.Delete(); err != nil {
		return err
	}
	delete(m.logs, tp)
	delete(m.dirOf, tp)
	m.sorted = nil
	return nil
}

// checkpoint writes one offset checkpoint file per log directory.
func (m *Manager) checkpoint(file string, value func(*Log) int64) error {
	for _, dir := range m.cfg.LogDirs {
		var entries []PartitionOffset
		for _, tp := range m.partitions() {
			if m.dirOf[tp] == dir {
				entries = append(entries, PartitionOffset{tp, value(m.logs[tp])})
			}
		}
		if err := m.writeCheckpoint(dir, file, entries); err != nil {
			return err
		}
	}
	return nil
}

// CheckpointRecoveryPoints writes recovery-point-offset-checkpoint.
func (m *Manager) CheckpointRecoveryPoints() error {
	return m.checkpoint(RecoveryPointFile, (*Log).RecoveryPoint)
}

// CheckpointLogStartOffsets writes log-start-offset-checkpoint.
func (m *Manager) CheckpointLogStartOffsets() error {
	return m.checkpoint(LogStartOffsetFile, (*Log).LogStartOffset)
}

// WriteHighWatermarks writes replication-offset-checkpoint in every log
// directory, each with the high watermarks of its partitions. Partitions the
// broker does not hold are an error.
func (m *Manager) WriteHighWatermarks(hws []PartitionOffset) error {
	for _, hw := range hws {
		if _, ok := m.dirOf[hw.TopicPartition]; !ok {
			return fmt.Errorf("storage: high watermark for %s: the broker holds no such partition", hw.TopicPartition)
		}
	}
	if len(m.cfg.LogDirs) == 1 {
		// NB: the common case: every partition is in the one directory.
		return m.writeCheckpoint(m.cfg.LogDirs[0], HighWatermarkFile, hws)
	}
	byDir := map[string][]PartitionOffset{}
	for _, hw := range hws {
		dir := m.dirOf[hw.TopicPartition]
		byDir[dir] = append(byDir[dir], hw)
	}
	for _, dir := range m.cfg.LogDirs {
		if err := m.writeCheckpoint(dir, HighWatermarkFile, byDir[dir]); err != nil {
			return err
		}
	}
	return nil
}

// writeCheckpoint writes entries to the offset checkpoint file in dir.
func (m *Manager) writeCheckpoint(dir, file string, entries []PartitionOffset) error {
	names := m.ckptPaths(dir, file)
	m.ckpt = appendOffsetCheckpoint(m.ckpt[:0], entries)
	return writeFileAtomicVia(m.fs, names[0], names[1], m.ckpt)
}

// ckptPaths returns cleanpath.Join(dir, file) and its temporary file's name.
func (m *Manager) ckptPaths(dir, file string) [2]string {
	k := [2]string{dir, file}
	if p, ok := m.paths[k]; ok {
		return p
	}
	if m.paths == nil {
		m.paths = map[[2]string][2]string{}
	}
	name := cleanpath.Join(dir, file)
	p := [2]string{name, name + TmpFileSuffix}
	m.paths[k] = p
	return p
}

// ReadHighWatermarks reads replication-offset-checkpoint from every log
// directory, sorted by topic and partition.
func (m *Manager) ReadHighWatermarks() ([]PartitionOffset, error) {
	var out []PartitionOffset
	for _, dir := range m.cfg.LogDirs {
		file := cleanpath.Join(dir, HighWatermarkFile)
		data, err := readCheckpointFile(m.fs, file)
		if err != nil {
			return nil, err
		}
		entries, err := ParseOffsetCheckpoint(file, data)
		if err != nil {
			return nil, err
		}
		out = append(out, entries...)
	}
	sort.Slice(out, func(i, j int) bool { return lessTP(out[i].TopicPartition, out[j].TopicPartition) })
	return out, nil
}

// Tick runs the periodic work that is due at now: time-based flushes
// (log.flush.interval.ms), retention (log.retention.check.interval.ms),
// compaction (log.cleaner.backoff.ms) and the checkpoints. highWatermark
// gives each partition's high watermark; nil means the LEO.
func (m *Manager) Tick(now sim.Time, highWatermark func(TopicPartition) int64) error {
	hw := func(l *Log) int64 {
		if highWatermark == nil {
			return l.LogEndOffset()
		}
		return highWatermark(l.tp)
	}
	tps := m.partitions()
	for _, tp := range tps {
		if err := m.logs[tp].MaybeFlush(now); err != nil {
			return err
		}
	}
	if now.Sub(m.lastRetention) >= m.cfg.RetentionCheckInterval {
		m.lastRetention = now
		for _, tp := range tps {
			if _, err := m.logs[tp].DeleteOldSegments(now, hw(m.logs[tp])); err != nil {
				return err
			}
		}
	}
	if now.Sub(m.lastClean) >= m.cfg.CleanerBackoff {
		m.lastClean = now
		for _, tp := range tps {
			st, err := m.logs[tp].Compact(now, hw(m.logs[tp]))
			if err != nil {
				return err
			}
			if st.RecordsRemoved > 0 {
				m.cleaned = append(m.cleaned, Cleaned{TopicPartition: tp, CleanStats: st})
			}
		}
	}
	if now.Sub(m.lastRecoveryCkpt) >= m.cfg.FlushOffsetCheckpointInterval {
		m.lastRecoveryCkpt = now
		if err := m.CheckpointRecoveryPoints(); err != nil {
			return err
		}
	}
	if now.Sub(m.lastStartCkpt) >= m.cfg.FlushStartOffsetCheckpointInterval {
		m.lastStartCkpt = now
		if err := m.CheckpointLogStartOffsets(); err != nil {
			return err
		}
	}
	return nil
}

// Close shuts down cleanly: flushes every log, writes the checkpoints and
// the clean shutdown marker, so the next start skips recovery.
func (m *Manager) Close() error {
	for _, tp := range m.partitions() {
		if err := m.logs[tp].Flush(); err != nil {
			return err
		}
		if err := m.logs[tp].takeSnapshot(); err != nil {
			return err
		}
	}
	if err := m.CheckpointRecoveryPoints(); err != nil {
		return err
	}
	if err := m.CheckpointLogStartOffsets(); err != nil {
		return err
	}
	var marker []byte
	if m.brokerEpoch >= 0 {
		marker = []byte(fmt.Sprintf(`{"version":0,"broker_epoch":%d}`, m.brokerEpoch))
	}
	for _, dir := range m.cfg.LogDirs {
		if err := rewriteFile(m.fs, cleanpath.Join(dir, CleanShutdownFile), marker); err != nil {
			return err
		}
		if err := m.fs.SyncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// Export writes the broker's files to realDir on the real file system, so
// that Kafka's own tools (kafka-dump-log.sh --files ...) can read them; with
// durable set it writes what would survive a power loss now.
func (m *Manager) Export(realDir string, durable bool) error {
	return m.fs.Export(realDir, durable)
}
