package config

// This file holds the producer's configuration (Kafka's ProducerConfig).
// Defaults are those of the 3.x Java producer (KIP-679: acks=all and
// enable.idempotence=true; linger.ms=0, before KIP-1030 raised it to 5 in
// 4.0). Simplified vs Kafka: no serializers, buffer.memory,
// max.block.ms or transaction.* beyond transactional.id and
// transaction.timeout.ms; partitioner.class names one of the built-in
// partitioners, by Kafka's class name or a short name.
//
// Idempotence follows the release's producer (the releases table,
// release.go; KafkaProducer and ProducerConfig at each tag):
//   - 0.11 to 2.8, 3.0.0 and 3.1.0: idempotent only when enable.idempotence
//     is set to true (or transactional.id is set). Then acks left unset
//     becomes all, and acks other than all, retries=0 or
//     max.in.flight.requests.per.connection above 5 (above 1 in 0.11, where
//     it is lowered to 1 when unset) are a ConfigException. 3.0.0 and 3.1.0
//     document enable.idempotence=true as the default but never apply it
//     (KAFKA-13598): IdempotenceNote says so.
//   - 3.0.1, 3.1.1, 3.2 and later (KAFKA-13598, KAFKA-13673): idempotent by
//     default; acks other than all, retries=0 or max.in.flight above 5 set
//     without enable.idempotence turn idempotence off (Kafka logs it; here
//     IdempotenceNote says which), and with enable.idempotence=true set they
//     are errors.
//   - 4.0 and later (KAFKA-17927): as 3.2, except that max.in.flight above 5
//     is an error whenever idempotence is on before the conflicts are
//     weighed, by default too (even with acks=1 set).
//
// Likewise delivery.timeout.ms below linger.ms + request.timeout.ms is an
// error when set explicitly and is raised to that sum when left at its
// default.
//
// Simplified vs Kafka: before 0.11 Kafka's producer has no
// enable.idempotence and would ignore it with a warning; kafkasim runs the
// idempotent producer as asked and says so in IdempotenceNote. retries
// defaults to 2147483647 in every release (Kafka: 0 before 2.1, KIP-91).

import (
	"math"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"github.com/kafkasim/kafkasim/sim"
)

// Names of the producer properties other code refers to.
const (
	PropAcks                 = "acks"
	PropRetries              = "retries"
	PropEnableIdempotence    = "enable.idempotence"
	PropMaxInFlight          = "max.in.flight.requests.per.connection"
	PropDeliveryTimeoutMs    = "delivery.timeout.ms"
	PropLingerMs             = "linger.ms"
	PropRequestTimeoutMs     = "request.timeout.ms"
	PropTransactionalID      = "transactional.id"
	PropTransactionTimeoutMs = "transaction.timeout.ms"
	maxInFlightIdempotent    = 5
	acksAllowed              = "0, 1, -1, all"
	partitionerAllowedShort  = "default, roundrobin, uniformsticky, or Kafka's class names (org.apache.kafka.clients.producer.RoundRobinPartitioner, ...)"
)

// Acks is the acks property: how many replicas must have a record before
// the produce request is answered.
type Acks int8

// The acks values.
const (
	// AcksNone is acks=0: no response; the client sees offset -1.
	AcksNone Acks = 0
	// AcksLeader is acks=1: answered after the leader's own append.
	AcksLeader Acks = 1
	// AcksAll is acks=all (or -1): answered once the HW passes the batch,
	// with min.insync.replicas enforced.
	AcksAll Acks = -1
)

// String returns the property value: "0", "1" or "all".
func (a Acks) String() string {
	if a == AcksAll {
		return "all"
	}
	return strconv.Itoa(int(a))
}

// ParseAcks parses an acks value: 0, 1, -1 or all (any case).
func ParseAcks(s string) (Acks, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "0":
		return AcksNone, true
	case "1":
		return AcksLeader, true
	case "-1", "all":
		return AcksAll, true
	}
	return 0, false
}

// Partitioner is partitioner.class: how the producer picks a partition.
type Partitioner string

// The built-in partitioners.
const (
	// PartitionerDefault is Kafka's built-in partitioner (partitioner.class
	// unset, or DefaultPartitioner): murmur2 of the key when there is one,
	// sticky (KIP-480/KIP-794) otherwise.
	PartitionerDefault Partitioner = "default"
	// PartitionerRoundRobin is RoundRobinPartitioner: every record to the
	// next partition, keys ignored.
	PartitionerRoundRobin Partitioner = "roundrobin"
	// PartitionerUniformSticky is UniformStickyPartitioner: sticky for every
	// record, keys ignored.
	PartitionerUniformSticky Partitioner = "uniformsticky"
)

// String returns the short name.
func (p Partitioner) String() string { return string(p) }

var partitionerNames = map[string]Partitioner{
	"": PartitionerDefault, "default": PartitionerDefault,
	"DefaultPartitioner": PartitionerDefault,
	"org.apache.kafka.clients.producer.internals.DefaultPartitioner": PartitionerDefault,
	"roundrobin": PartitionerRoundRobin, "round-robin": PartitionerRoundRobin,
	"RoundRobinPartitioner":                                   PartitionerRoundRobin,
	"org.apache.kafka.clients.producer.RoundRobinPartitioner": PartitionerRoundRobin,
	"uniformsticky":                                           PartitionerUniformSticky, "uniform-sticky": PartitionerUniformSticky,
	"UniformStickyPartitioner":                                   PartitionerUniformSticky,
	"org.apache.kafka.clients.producer.UniformStickyPartitioner": PartitionerUniformSticky,
}

// ParsePartitioner parses a partitioner.class value: a short name or
// Kafka's (simple or fully qualified) class name.
func ParsePartitioner(s string) (Partitioner, bool) {
	p, ok := partitionerNames[strings.TrimSpace(s)]
	return p, ok
}

// Producer is the producer configuration. Each field names its Kafka
// property, unit, default and limits; DefaultProducer returns the defaults.
type Producer struct {
	// Mutants are the planted client bugs switched on (package mutant; none
	// is Kafka): the harness copies the brokers' kafkasim.mutant.* here for
	// the workload's clients, never for the checkers' own readers.
	Mutants mutant.Set
	// ClientID is client.id, recorded in histories. Default "".
	ClientID string
	// Acks is acks. Default AcksAll; one of 0, 1, -1/all.
	Acks Acks
	// Retries is retries: resends of a failed batch. Default 2147483647; in
	// [0, 2147483647]; delivery.timeout.ms bounds retrying in practice.
	Retries int
	// RetryBackoff is retry.backoff.ms: the pause before a retry. Default
	// 100ms; at least 0.
	RetryBackoff sim.Duration
	// DeliveryTimeout is delivery.timeout.ms: the limit from send to the
	// outcome, retries included. Default 120000ms; at least linger.ms +
	// request.timeout.ms.
	DeliveryTimeout sim.Duration
	// RequestTimeout is request.timeout.ms: how long one produce request
	// may stay unanswered. Default 30000ms; at least 0.
	RequestTimeout sim.Duration
	// Linger is linger.ms: how long a batch waits for more records. Default
	// 0ms; at least 0.
	Linger sim.Duration
	// BatchSize is batch.size: bytes per partition batch. Default 16384; at
	// least 0.
	BatchSize int
	// MaxInFlightRequestsPerConnection is
	// max.in.flight.requests.per.connection: unanswered produce requests per
	// broker. Default 5; at least 1; at most 5 with idempotence.
	MaxInFlightRequestsPerConnection int
	// EnableIdempotence is enable.idempotence: producer id, epoch and
	// sequence numbers, so retries never duplicate. Default true from
	// 3.0.1 (turned off implicitly by conflicting settings), false before
	// and in 3.0.0 and 3.1.0: see the file comment.
	EnableIdempotence bool
	// Partitioner is partitioner.class. Default PartitionerDefault.
	Partitioner Partitioner
	// TransactionalID is transactional.id: set, the producer is
	// transactional (KIP-98) and needs enable.idempotence, which it turns
	// on when left unset. Default "" (none).
	TransactionalID string
	// IdempotenceNote is not a property: when the release's rule decided
	// idempotence otherwise than the properties read, it says how and why
	// ("enable.idempotence defaulted to true but acks=1 was set explicitly:
	// idempotence is off ..."), for the run's header; "" otherwise.
	IdempotenceNote string
	// TransactionTimeout is transaction.timeout.ms: how long the
	// coordinator lets a transaction stay open before aborting it. Default
	// 60000ms; in [1, 2147483647]; at most the brokers'
	// transaction.max.timeout.ms (InitTransactions fails otherwise).
	TransactionTimeout sim.Duration
	// CompressionType is compression.type: the codec of the batches the
	// producer sends (records.go). Default none.
	CompressionType Compression
}

// DefaultProducer returns Kafka's defaults (those of Latest).
func DefaultProducer() Producer { return DefaultProducerFor(Latest) }

// DefaultProducerFor returns the defaults of the producer of release v
// (the releases table, at v's default patch): acks=all from 3.0 (KIP-679),
// acks=1 before; idempotent from 3.0.1 (KIP-679, KAFKA-13598).
func DefaultProducerFor(v Version) Producer { return DefaultProducerWith(v.Mechanisms()) }

// DefaultProducerWith returns the defaults of the producer of the release
// that has mechanisms m (Broker.Mechanisms names a patch release too).
func DefaultProducerWith(m Mechanisms) Producer {
	p := Producer{
		Acks:                             AcksAll,
		Retries:                          math.MaxInt32,
		RetryBackoff:                     sim.Ms(100),
		DeliveryTimeout:                  sim.Ms(120000),
		RequestTimeout:                   sim.Ms(30000),
		Linger:                           0,
		BatchSize:                        16384,
		MaxInFlightRequestsPerConnection: 5,
		EnableIdempotence:                m.IdempotenceDefault,
		Partitioner:                      PartitionerDefault,
		TransactionTimeout:               sim.Ms(60000),
		CompressionType:                  CompressionNone,
	}
	if !m.AcksAllDefault {
		p.Acks = AcksLeader
	}
	return p
}

var producerProps = newTable(append(producerRecordsProps(),
	stringProp("client.id", func(p *Producer) *string { return &p.ClientID }),
	choiceProp(PropAcks, func(p *Producer) *Acks { return &p.Acks }, ParseAcks, acksAllowed),
	intProp(PropRetries, func(p *Producer) *int { return &p.Retries }, 0, maxInt32),
	msProp("retry.backoff.ms", func(p *Producer) *sim.Duration { return &p.RetryBackoff }, 0, math.MaxInt64),
	msProp(PropDeliveryTimeoutMs, func(p *Producer) *sim.Duration { return &p.DeliveryTimeout }, 0, maxInt32),
	msProp(PropRequestTimeoutMs, func(p *Producer) *sim.Duration { return &p.RequestTimeout }, 0, maxInt32),
	msProp(PropLingerMs, func(p *Producer) *sim.Duration { return &p.Linger }, 0, math.MaxInt64),
	intProp("batch.size", func(p *Producer) *int { return &p.BatchSize }, 0, maxInt32),
	intProp(PropMaxInFlight, func(p *Producer) *int { return &p.MaxInFlightRequestsPerConnection }, 1, maxInt32),
	boolProp(PropEnableIdempotence, func(p *Producer) *bool { return &p.EnableIdempotence }),
	choiceProp("partitioner.class", func(p *Producer) *Partitioner { return &p.Partitioner }, ParsePartitioner, partitionerAllowedShort),
	stringProp(PropTransactionalID, func(p *Producer) *string { return &p.TransactionalID }),
	msProp(PropTransactionTimeoutMs, func(p *Producer) *sim.Duration { return &p.TransactionTimeout }, 1, maxInt32),
)...)

// ProducerProperties returns every key ParseProducer accepts, sorted.
func ProducerProperties() []string { return producerProps.names() }

// ParseProducer parses producer properties over the defaults of Latest,
// keys in sorted order, and validates the result.
func ParseProducer(props map[string]string) (Producer, error) {
	return ParseProducerFor(Latest, props)
}

// ParseProducerFor is ParseProducer over the defaults of the producer of
// release v at its default patch (ParseProducerWith).
func ParseProducerFor(v Version, props map[string]string) (Producer, error) {
	return ParseProducerWith(v.Mechanisms(), props)
}

// ParseProducerWith parses producer properties as the producer of the
// release with mechanisms m does: over that release's defaults, with its
// idempotence rule (the file comment) deciding from which of
// enable.idempotence, acks, retries and
// max.in.flight.requests.per.connection props sets. The scenarios' Kafka
// producers take the mechanisms of the cluster's release, as that
// release's client would.
func ParseProducerWith(m Mechanisms, props map[string]string) (Producer, error) {
	p := DefaultProducerWith(m)
	if err := producerProps.apply(&p, props); err != nil {
		return Producer{}, err
	}
	_, idemSet := props[PropEnableIdempotence]
	switch {
	case !idemSet && p.TransactionalID != "":
		p.EnableIdempotence = true // a transactional producer is idempotent: conflicts are errors
	case !idemSet && m.IdempotenceDefault:
		if m.InFlightAboveFiveRefused && p.MaxInFlightRequestsPerConnection > maxInFlightIdempotent {
			return Producer{}, conflict(PropEnableIdempotence, "true (the default)", PropMaxInFlight, itoa(p.MaxInFlightRequestsPerConnection),
				"from 4.0 Kafka's producer refuses more than 5 requests in flight while idempotence is on, by default too (KAFKA-17927)",
				"max.in.flight.requests.per.connection in [1, 5], or enable.idempotence=false")
		}
		if c := p.idempotenceConflicts(); len(c) > 0 {
			p.EnableIdempotence = false
			verb := "was"
			if len(c) > 1 {
				verb = "were"
			}
			p.IdempotenceNote = "enable.idempotence defaulted to true but " + strings.Join(c, " and ") + " " + verb +
				" set explicitly: idempotence is off, as Kafka's producer turns it off from 3.0.1 (KAFKA-13598, KAFKA-13673)"
		}
	case !idemSet && m.Idempotence && m.AcksAllDefault:
		p.IdempotenceNote = "enable.idempotence is documented to default to true in 3.0.0 and 3.1.0 but is applied only when set " +
			"explicitly (KAFKA-13598, fixed in 3.0.1, 3.1.1 and 3.2.0): idempotence is off"
	}
	if p.EnableIdempotence && !m.Idempotence && m != (Mechanisms{}) {
		p.IdempotenceNote = "enable.idempotence: Kafka's producer has it from 0.11.0 (KIP-98) and this release's would ignore it; " +
			"kafkasim runs the idempotent producer as asked"
	}
	if _, set := props[PropAcks]; !set && p.EnableIdempotence {
		p.Acks = AcksAll // Kafka before 3.0 overrides its default acks=1 ("since idempotence is enabled")
	}
	if p.EnableIdempotence && m.IdempotenceMaxInFlight == 1 {
		if _, set := props[PropMaxInFlight]; !set {
			p.MaxInFlightRequestsPerConnection = 1 // 0.11 lowers the default 5 to 1
		} else if p.MaxInFlightRequestsPerConnection != 1 {
			return Producer{}, conflict(PropEnableIdempotence, "true", PropMaxInFlight, itoa(p.MaxInFlightRequestsPerConnection),
				"Kafka 0.11's idempotent producer needs exactly 1 request in flight (1.0 raised the limit to 5: KAFKA-5494)",
				"max.in.flight.requests.per.connection=1 (or unset), or enable.idempotence=false")
		}
	}
	if _, set := props[PropDeliveryTimeoutMs]; !set && p.DeliveryTimeout < addSat(p.Linger, p.RequestTimeout) {
		p.DeliveryTimeout = addSat(p.Linger, p.RequestTimeout)
	}
	if err := p.Validate(); err != nil {
		return Producer{}, err
	}
	return p, nil
}

// Validate reports the first property outside its limits (in name order),
// then the first combination Kafka's producer refuses.
func (p Producer) Validate() error {
	if err := producerProps.validate(&p); err != nil {
		return err
	}
	if p.TransactionalID != "" && !p.EnableIdempotence {
		return conflict(PropTransactionalID, p.TransactionalID, PropEnableIdempotence, "false",
			"Cannot set a transactional.id without also enabling idempotence (a transactional producer is idempotent)",
			"enable.idempotence=true (or unset), or no transactional.id")
	}
	if p.EnableIdempotence {
		if err := p.idempotenceConflict(); err != nil {
			return err
		}
	}
	if p.DeliveryTimeout < addSat(p.Linger, p.RequestTimeout) {
		return conflict(PropDeliveryTimeoutMs, ms(p.DeliveryTimeout), PropLingerMs+" + "+PropRequestTimeoutMs, ms(p.Linger)+" + "+ms(p.RequestTimeout),
			"a record could expire before its first request is answered",
			"delivery.timeout.ms >= linger.ms + request.timeout.ms")
	}
	return nil
}

// idempotenceConflict returns the first setting the idempotent producer
// cannot work with, as ProducerConfig refuses them (retries, acks, then
// max.in.flight.requests.per.connection, Kafka 3.x's order).
func (p Producer) idempotenceConflict() error {
	switch {
	case p.Retries == 0:
		return conflict(PropEnableIdempotence, "true", PropRetries, "0",
			"the idempotent producer needs retries",
			"retries >= 1, or enable.idempotence=false")
	case p.Acks != AcksAll:
		return conflict(PropEnableIdempotence, "true", PropAcks, p.Acks.String(),
			"the idempotent producer needs acks=all, otherwise idempotence cannot be guaranteed",
			"acks=all, or enable.idempotence=false")
	case p.MaxInFlightRequestsPerConnection > maxInFlightIdempotent:
		return conflict(PropEnableIdempotence, "true", PropMaxInFlight, itoa(p.MaxInFlightRequestsPerConnection),
			"the broker keeps the last 5 batches per producer, so at most 5 may be in flight",
			"max.in.flight.requests.per.connection in [1, 5], or enable.idempotence=false")
	}
	return nil
}

// idempotenceConflicts names every setting that conflicts with
// idempotence, as key=value, in idempotenceConflict's order.
func (p Producer) idempotenceConflicts() []string {
	var out []string
	if p.Retries == 0 {
		out = append(out, PropRetries+"=0")
	}
	if p.Acks != AcksAll {
		out = append(out, PropAcks+"="+p.Acks.String())
	}
	if p.MaxInFlightRequestsPerConnection > maxInFlightIdempotent {
		out = append(out, PropMaxInFlight+"="+itoa(p.MaxInFlightRequestsPerConnection))
	}
	return out
}

// Pairs renders every producer property as sorted key=value lines.
func (p Producer) Pairs() []string { return producerProps.pairs(&p) }

// NonDefaultPairs renders the producer properties whose value differs from
// DefaultProducer()'s.
func (p Producer) NonDefaultPairs() []string {
	d := DefaultProducer()
	return producerProps.diff(&p, &d)
}

// String renders Pairs one per line.
func (p Producer) String() string { return strings.Join(p.Pairs(), "\n") }

// addSat returns a+b for non-negative durations, saturating at Never.
func addSat(a, b sim.Duration) sim.Duration {
	if a > Never-b {
		return Never
	}
	return a + b
}
