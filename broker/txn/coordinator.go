package txn

// This file is the coordinator's frame: configuration, the host's
// environment, which __transaction_state partitions it leads (and whether
// it has loaded them), loading a partition after a fail-over (resending
// the markers of transactions caught between Prepare* and Complete*), the
// log writes of a transition, and the clock (Tick, NextDeadline) that
// aborts transactions past their timeout and expires transactional ids.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
)

// Config is the transaction coordinator's part of the broker configuration.
type Config struct {
	// Mutants are the planted bugs switched on (package mutant; none is Kafka).
	Mutants mutant.Set
	// NumPartitions is transaction.state.log.num.partitions (default 50).
	NumPartitions int
	// OffsetsPartitions is offsets.topic.num.partitions (default 50): where
	// AddOffsetsToTxn finds the group's partition.
	OffsetsPartitions int
	// MaxTimeout is transaction.max.timeout.ms (900000): a larger
	// transaction.timeout.ms gets INVALID_TRANSACTION_TIMEOUT.
	MaxTimeout sim.Duration
	// IDExpiration is transactional.id.expiration.ms (604800000): an id
	// without a transaction, untouched this long, is deleted.
	IDExpiration sim.Duration
	// AbortCheckInterval is
	// transaction.abort.timed.out.transaction.cleanup.interval.ms (10000).
	AbortCheckInterval sim.Duration
	// ExpireCheckInterval is
	// transaction.remove.expired.transaction.cleanup.interval.ms (3600000).
	ExpireCheckInterval sim.Duration
	// Version is transaction.version: 1 (the epoch is bumped only by
	// InitProducerId) or 2 (KIP-890 part 2: EndTxn v5+ bumps it on every
	// commit and abort). Kafka finalizes 2 from 4.0.
	Version int16
	// FenceBumpsEpochTwice is 4.0.0's KAFKA-19367: with Version 2 a
	// fence-and-abort bumps the producer epoch in the fence and again in
	// the abort. False (4.0.1 on): the fence's bump is the only one.
	FenceBumpsEpochTwice bool
}

// DefaultConfig returns Kafka's defaults (transaction version 2, as a 4.x
// cluster finalizes it).
func DefaultConfig() Config {
	return Config{NumPartitions: 50, OffsetsPartitions: 50, MaxTimeout: 900 * sim.Second,
		IDExpiration: 604800 * sim.Second, AbortCheckInterval: 10 * sim.Second,
		ExpireCheckInterval: 3600 * sim.Second, Version: 2}
}

// Validate reports the first setting outside its range.
func (c Config) Validate() error {
	switch {
	case c.NumPartitions < 1:
		return fmt.Errorf("transaction.state.log.num.partitions %d: must be >= 1", c.NumPartitions)
	case c.OffsetsPartitions < 1:
		return fmt.Errorf("offsets.topic.num.partitions %d: must be >= 1", c.OffsetsPartitions)
	case c.MaxTimeout < sim.Millisecond:
		return fmt.Errorf("transaction.max.timeout.ms %d: must be >= 1", c.MaxTimeout.Milliseconds())
	case c.IDExpiration < sim.Millisecond:
		return fmt.Errorf("transactional.id.expiration.ms %d: must be >= 1", c.IDExpiration.Milliseconds())
	case c.AbortCheckInterval < sim.Millisecond:
		return fmt.Errorf("transaction.abort.timed.out.transaction.cleanup.interval.ms %d: must be >= 1", c.AbortCheckInterval.Milliseconds())
	case c.ExpireCheckInterval < sim.Millisecond:
		return fmt.Errorf("transaction.remove.expired.transaction.cleanup.interval.ms %d: must be >= 1", c.ExpireCheckInterval.Milliseconds())
	case c.Version != 1 && c.Version != 2:
		return fmt.Errorf("transaction.version %d: must be 1 or 2", c.Version)
	}
	return nil
}

// Markers asks the host to write the markers of one transaction end.
type Markers struct {
	TransactionalID string
	ProducerID      int64
	ProducerEpoch   int16
	Commit          bool
	// Partitions are sorted.
	Partitions []storage.TopicPartition
	// TransactionVersion is the client's transaction version (WriteTxnMarkers
	// v2's TransactionVersion).
	TransactionVersion int16
}

// Env is what the coordinator asks of its host.
type Env struct {
	// Append appends records to __transaction_state-partition as its leader
	// with acks=all and calls done once they are committed (err nil) or
	// failed. done may run inside Append.
	Append func(partition int32, records []storage.Record, done func(now sim.Time, err *kerr.Error))
	// NewProducerID allocates a producer id. done may run inside.
	NewProducerID func(done func(id int64, err *kerr.Error))
	// WriteMarkers sends m's WriteTxnMarkers to the leaders of its
	// partitions, retrying until each partition's marker is written, and
	// then calls done. If the coordinator resigns partition meanwhile, the
	// host may drop the markers and never call done (the next coordinator
	// resends them from the log).
	WriteMarkers func(partition int32, m Markers, done func(now sim.Time))
	// Log writes a transition to the trace; nil logs nothing.
	Log func(kind string, fields ...sim.Field)
}

// owned is a __transaction_state partition this coordinator leads.
type owned struct {
	loaded bool
	// gen tells this leadership from a later one of the same partition: a
	// write or marker callback of an older one is ignored (Kafka's
	// coordinator epoch check).
	gen uint64
}

// entry is one transactional id's metadata with its pending transition.
type entry struct {
	m         *Metadata
	partition int32
	pending   *Metadata // being written; nil when none
	// completeRetry is when to retry writing Complete* after a failed
	// write (zero: none due).
	completeRetry sim.Time
}

// Coordinator is the transaction coordinator of one broker.
type Coordinator struct {
	cfg       Config
	env       Env
	owned     map[int32]*owned
	txns      map[string]*entry
	gen       uint64
	abortAt   sim.Time // next abort check; zero when nothing is led
	expireAt  sim.Time
	producing map[string]bool // ids waiting for a new producer id
}

// New returns a coordinator that leads no partition yet. It panics on an
// invalid configuration or a missing Env function.
func New(cfg Config, env Env) *Coordinator {
	if err := cfg.Validate(); err != nil {
		panic("txn.New: " + err.Error())
	}
	if env.Append == nil || env.NewProducerID == nil || env.WriteMarkers == nil {
		panic("txn.New: Env.Append, NewProducerID and WriteMarkers must be set")
	}
	if env.Log == nil {
		env.Log = func(string, ...sim.Field) {}
	}
	return &Coordinator{cfg: cfg, env: env, owned: map[int32]*owned{}, txns: map[string]*entry{}, producing: map[string]bool{}}
}

// Config returns the coordinator's configuration.
func (c *Coordinator) Config() Config { return c.cfg }

// PartitionFor returns the __transaction_state partition of id.
func (c *Coordinator) PartitionFor(id string) int32 { return PartitionFor(id, c.cfg.NumPartitions) }

// Leads reports whether the coordinator leads partition (loaded or not).
func (c *Coordinator) Leads(partition int32) bool { _, ok := c.owned[partition]; return ok }

// BecomeLeader starts loading partition: until Load, its ids get
// COORDINATOR_LOAD_IN_PROGRESS.
func (c *Coordinator) BecomeLeader(now sim.Time, partition int32) {
	c.unload(partition)
	c.gen++
	c.owned[partition] = &owned{gen: c.gen}
	if c.abortAt == 0 {
		c.abortAt, c.expireAt = now.Add(c.cfg.AbortCheckInterval), now.Add(c.cfg.ExpireCheckInterval)
	}
	c.env.Log("txn-coordinator-loading", sim.I("partition", int64(partition)))
}

// Loading reports whether partition is led and still loading.
func (c *Coordinator) Loading(partition int32) bool {
	o, ok := c.owned[partition]
	return ok && !o.loaded
}

// Load finishes loading partition from its records, in offset order (the
// latest record of an id wins; a tombstone deletes it). Transactions found
// in PrepareCommit or PrepareAbort have their markers sent again, as
// Kafka's TransactionStateManager does on loading. It does nothing unless
// the partition is loading.
func (c *Coordinator) Load(now sim.Time, partition int32, records []storage.Record) error {
	if !c.Loading(partition) {
		return nil
	}
	loaded := map[string]*Metadata{}
	for _, r := range records {
		id, m, err := Decode(r)
		if err != nil {
			return fmt.Errorf("%s-%d offset %d: %w", StateTopic, partition, r.Offset, err)
		}
		if m == nil {
			delete(loaded, id)
		} else {
			loaded[id] = m
		}
	}
	ids := make([]string, 0, len(loaded))
	for id := range loaded {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	c.owned[partition].loaded = true
	for _, id := range ids {
		c.txns[id] = &entry{m: loaded[id], partition: partition}
		c.env.Log("txn-loaded", sim.S("txn", loaded[id].String()))
	}
	c.env.Log("txn-coordinator-loaded", sim.I("partition", int64(partition)), sim.I("records", int64(len(records))))
	for _, id := range ids {
		if e := c.txns[id]; e.m.State.preparing() {
			c.sendMarkers(e)
		}
	}
	return nil
}

// Resign drops partition (this broker no longer leads it): its ids are
// forgotten; writes and markers in flight for them are ignored when they
// finish.
func (c *Coordinator) Resign(now sim.Time, partition int32) {
	if _, ok := c.owned[partition]; !ok {
		return
	}
	c.unload(partition)
	delete(c.owned, partition)
	if len(c.owned) == 0 {
		c.abortAt, c.expireAt = 0, 0
	}
	c.env.Log("txn-coordinator-resigned", sim.I("partition", int64(partition)))
}

func (c *Coordinator) unload(partition int32) {
	for _, id := range c.ids() {
		if c.txns[id].partition == partition {
			delete(c.txns, id)
		}
	}
}

func (c *Coordinator) ids() []string {
	ids := make([]string, 0, len(c.txns))
	for id := range c.txns {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Transaction returns a copy of id's metadata, if this coordinator has it.
func (c *Coordinator) Transaction(id string) (Metadata, bool) {
	e := c.txns[id]
	if e == nil {
		return Metadata{}, false
	}
	return *e.m.clone(), true
}

// TransactionalIDs returns the ids this coordinator holds, sorted.
func (c *Coordinator) TransactionalIDs() []string { return c.ids() }

// check returns the error for a request about id that this coordinator
// cannot serve now (Kafka's getTransactionState).
func (c *Coordinator) check(id string) *kerr.Error {
	o, ok := c.owned[c.PartitionFor(id)]
	switch {
	case !ok:
		return kerr.NotCoordinator
	case !o.loaded:
		return kerr.CoordinatorLoadInProgress
	}
	return nil
}

// write appends next, the prepared transition of e, and calls done with
// the outcome once it is committed or failed; on success next is applied
// first. The error is mapped as Kafka's appendTransactionToLog maps it.
func (c *Coordinator) write(now sim.Time, e *entry, next *Metadata, done func(now sim.Time, err *kerr.Error)) {
	if e.pending != nil {
		panic(fmt.Sprintf("txn: %s: a transition to %s while %s is pending", e.m.TransactionalID, next.State, e.pending.State))
	}
	e.pending = next
	gen := c.owned[e.partition].gen
	rec := Record(next, c.cfg.Version, nowMs(now))
	c.env.Log("txn-append", sim.S("txn", next.String()))
	c.env.Append(e.partition, []storage.Record{rec}, func(now sim.Time, err *kerr.Error) {
		if o := c.owned[e.partition]; o == nil || o.gen != gen || c.txns[e.m.TransactionalID] != e {
			done(now, kerr.NotCoordinator)
			return
		}
		e.pending = nil
		if err != nil {
			c.env.Log("txn-append-failed", sim.S("txn", next.String()), sim.S("error", err.Message))
			done(now, mapAppendError(err))
			return
		}
		e.m = next
		if next.State == Dead {
			delete(c.txns, next.TransactionalID)
		}
		c.env.Log("txn-state", sim.S("txn", next.String()))
		done(now, nil)
	})
}

func mapAppendError(err *kerr.Error) *kerr.Error {
	switch err {
	case kerr.UnknownTopicOrPartition, kerr.NotEnoughReplicas, kerr.NotEnoughReplicasAfterAppend, kerr.RequestTimedOut:
		return kerr.CoordinatorNotAvailable
	case kerr.NotLeaderForPartition, kerr.KafkaStorageError:
		return kerr.NotCoordinator
	case kerr.MessageTooLarge, kerr.RecordListTooLarge:
		return kerr.UnknownServerError
	}
	return err
}

// sendMarkers asks the host for e's markers, then writes Complete*.
func (c *Coordinator) sendMarkers(e *entry) {
	m := e.m
	gen := c.owned[e.partition].gen
	mk := Markers{TransactionalID: m.TransactionalID, ProducerID: m.ProducerID, ProducerEpoch: m.ProducerEpoch,
		Commit: m.State == PrepareCommit, Partitions: slices.Clone(m.TopicPartitions), TransactionVersion: m.ClientTransactionVersion}
	if c.cfg.Mutants.On(mutant.TxnMarkerSkipped) && len(mk.Partitions) > 0 {
		// NOT Kafka: an off-by-one over the partitions leaves the last
		// one without its marker, and Complete* is written all the same.
		mk.Partitions = mk.Partitions[:len(mk.Partitions)-1]
	}
	c.env.Log("txn-markers", sim.S("txn", m.String()))
	c.env.WriteMarkers(e.partition, mk, func(now sim.Time) {
		if o := c.owned[e.partition]; o == nil || o.gen != gen || c.txns[m.TransactionalID] != e || e.m != m {
			return
		}
		c.complete(now, e)
	})
}

// complete writes Complete* for e, whose markers are all written. A failed
// write is retried after completeRetryBackoff while this coordinator still
// leads the partition (the next leader would resend markers otherwise).
func (c *Coordinator) complete(now sim.Time, e *entry) {
	e.completeRetry = 0
	c.write(now, e, e.m.prepareComplete(nowMs(now)), func(now sim.Time, err *kerr.Error) {
		if err != nil && c.txns[e.m.TransactionalID] == e {
			e.completeRetry = now.Add(completeRetryBackoff)
		}
	})
}

const completeRetryBackoff = 100 * sim.Millisecond

// NextDeadline returns the earliest time Tick has something to do.
func (c *Coordinator) NextDeadline() (sim.Time, bool) {
	if len(c.owned) == 0 {
		return 0, false
	}
	at := min(c.abortAt, c.expireAt)
	// NB: only a minimum is taken, so map order does not matter.
	for _, e := range c.txns {
		if e.completeRetry != 0 {
			at = min(at, e.completeRetry)
		}
	}
	return at, true
}

// Tick does what is due at now: it retries failed Complete* writes, aborts
// the transactions open longer than their timeout (Kafka's
// abortTimedOutTransactions, every AbortCheckInterval) and deletes expired
// transactional ids (every ExpireCheckInterval).
func (c *Coordinator) Tick(now sim.Time) {
	if len(c.owned) == 0 {
		return
	}
	for _, id := range c.ids() {
		if e := c.txns[id]; e != nil && e.completeRetry != 0 && e.completeRetry <= now && e.pending == nil && e.m.State.preparing() {
			c.complete(now, e)
		}
	}
	if c.abortAt <= now {
		c.abortAt = now.Add(c.cfg.AbortCheckInterval)
		c.abortTimedOut(now)
	}
	if c.expireAt <= now {
		c.expireAt = now.Add(c.cfg.ExpireCheckInterval)
		c.expireIDs(now)
	}
}

func (c *Coordinator) abortTimedOut(now sim.Time) {
	for _, id := range c.ids() {
		e := c.txns[id]
		if e == nil || !c.owned[e.partition].loaded || e.pending != nil || e.m.State != Ongoing {
			continue
		}
		if e.m.TxnStartTimestamp+int64(e.m.TxnTimeoutMs) > nowMs(now) {
			continue
		}
		c.env.Log("txn-timed-out", sim.S("txn", e.m.String()), sim.I("timeout-ms", int64(e.m.TxnTimeoutMs)))
		if !c.fenceAndAbort(now, e, func(sim.Time, *kerr.Error) {}) {
			// Kafka's exception ends abortTimedOutTransactions' loop: the
			// ids after this one wait for the next check.
			return
		}
	}
}

func (c *Coordinator) expireIDs(now sim.Time) {
	for _, id := range c.ids() {
		e := c.txns[id]
		if e == nil || !c.owned[e.partition].loaded || e.pending != nil || !e.m.State.complete() {
			continue
		}
		if e.m.TxnLastUpdateTimestamp+c.cfg.IDExpiration.Milliseconds() > nowMs(now) {
			continue
		}
		c.env.Log("txn-id-expired", sim.S("txn", e.m.String()))
		c.write(now, e, e.m.prepareDead(), func(sim.Time, *kerr.Error) {})
	}
}

func nowMs(t sim.Time) int64 { return int64(t) / int64(sim.Millisecond) }
