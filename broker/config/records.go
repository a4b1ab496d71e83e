package config

// This file holds the properties that bound and shape what a partition
// stores, at the broker, topic and producer levels, with Kafka's names and
// defaults (KafkaConfig / LogConfig / ProducerConfig at each tag):
//
//	message.max.bytes (broker)   1000012 (1000000 + LOG_OVERHEAD) below 2.5,
//	                             1048588 (1024*1024 + LOG_OVERHEAD) from 2.5
//	max.message.bytes (topic)    the broker's message.max.bytes
//	compression.type (broker)    producer; one of uncompressed, gzip, snappy,
//	                             lz4, producer, and zstd from 2.1 (KIP-110)
//	compression.type (topic)     the broker's compression.type
//	compression.type (producer)  none; one of none, gzip, snappy, lz4, zstd
//
// message.max.bytes bounds the size of one record batch as Kafka measures it
// (its sizeInBytes: the v2 batch with its 12-byte log overhead); a larger
// produce is answered MESSAGE_TOO_LARGE (UnifiedLog.analyzeAndValidateRecords).
// Simplified vs Kafka: the 3.8+ codec levels (compression.gzip.level,
// compression.lz4.level, compression.zstd.level, KIP-390) are not modelled;
// message.max.bytes is at least 0 here as in Kafka's ConfigDef.

// The records properties.
const (
	PropMessageMaxBytes = "message.max.bytes"
	PropMaxMessageBytes = "max.message.bytes"
	PropCompressionType = "compression.type"
	// LogOverhead is Kafka's Records.LOG_OVERHEAD: a batch's base offset
	// and length fields, counted in its size.
	LogOverhead = 12
)

// Compression is a compression.type value: a codec, or (broker and topic)
// "producer" (keep the producer's codec) or "uncompressed"; the producer
// spells no codec "none".
type Compression string

// The compression.type values.
const (
	CompressionProducer     Compression = "producer"
	CompressionUncompressed Compression = "uncompressed"
	CompressionNone         Compression = "none"
	CompressionGzip         Compression = "gzip"
	CompressionSnappy       Compression = "snappy"
	CompressionLZ4          Compression = "lz4"
	CompressionZstd         Compression = "zstd"
)

const (
	brokerCompressionAllowed   = "uncompressed, zstd (2.1+), lz4, snappy, gzip, producer"
	producerCompressionAllowed = "none, gzip, snappy, lz4, zstd"
)

// String returns the property value.
func (c Compression) String() string { return string(c) }

// Codec returns the codec a batch of this compression carries in its
// attributes: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd; -1 for producer.
func (c Compression) Codec() int16 {
	switch c {
	case CompressionGzip:
		return 1
	case CompressionSnappy:
		return 2
	case CompressionLZ4:
		return 3
	case CompressionZstd:
		return 4
	case CompressionProducer:
		return -1
	}
	return 0
}

func parseBrokerCompression(s string) (Compression, bool) {
	switch c := Compression(s); c {
	case CompressionProducer, CompressionUncompressed, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd:
		return c, true
	}
	return "", false
}

func parseProducerCompression(s string) (Compression, bool) {
	switch c := Compression(s); c {
	case CompressionNone, CompressionGzip, CompressionSnappy, CompressionLZ4, CompressionZstd:
		return c, true
	}
	return "", false
}

// Records is the records part of the broker configuration.
type Records struct {
	// MessageMaxBytes is message.max.bytes: the largest record batch a
	// topic accepts unless its max.message.bytes says otherwise. Default
	// 1048588 from 2.5, 1000012 before; at least 0.
	MessageMaxBytes int
	// CompressionType is compression.type: the codec the broker stores
	// batches with, or producer (as the producer sent them). Default
	// producer; zstd needs 2.1.
	CompressionType Compression
}

func defaultRecords(v Version) Records {
	r := Records{MessageMaxBytes: 1024*1024 + LogOverhead, CompressionType: CompressionProducer}
	if v < V2_5 {
		r.MessageMaxBytes = 1000000 + LogOverhead
	}
	return r
}

func recordsProps() []property[Broker] {
	return []property[Broker]{
		intProp(PropMessageMaxBytes, func(b *Broker) *int { return &b.Records.MessageMaxBytes }, 0, maxInt32),
		choiceProp(PropCompressionType, func(b *Broker) *Compression { return &b.Records.CompressionType }, parseBrokerCompression, brokerCompressionAllowed),
	}
}

// validateRecords refuses zstd before 2.1 (KIP-110).
func (b Broker) validateRecords() error {
	return zstdBefore21(PropCompressionType, b.Records.CompressionType, b.InterBrokerProtocolVersion)
}

func zstdBefore21(prop string, c Compression, v Version) error {
	if c == CompressionZstd && v < V2_1 {
		return conflict(prop, c.String(), PropInterBrokerProtocolVersion, v.String(),
			"zstd compression arrived in 2.1 (KIP-110)", brokerCompressionAllowed+" at 2.1 or later")
	}
	return nil
}

// topicRecordsProps are the topic's records properties.
func topicRecordsProps() []property[Topic] {
	return []property[Topic]{
		intProp(PropMaxMessageBytes, func(t *Topic) *int { return &t.MaxMessageBytes }, 0, maxInt32),
		choiceProp(PropCompressionType, func(t *Topic) *Compression { return &t.CompressionType }, parseBrokerCompression, brokerCompressionAllowed),
	}
}

// producerRecordsProps are the producer's records properties.
func producerRecordsProps() []property[Producer] {
	return []property[Producer]{
		choiceProp(PropCompressionType, func(p *Producer) *Compression { return &p.CompressionType }, parseProducerCompression, producerCompressionAllowed),
	}
}

// With applies props (topic properties, keys in sorted order) over t, a
// topic configuration already in effect (the run's topic defaults), and
// validates the result against b: the configuration of one topic that a
// script's topic line or an alter-config step gives its own values.
func (t Topic) With(b Broker, props map[string]string) (Topic, error) {
	if err := topicProps.apply(&t, props); err != nil {
		return Topic{}, err
	}
	if err := t.Validate(); err != nil {
		return Topic{}, err
	}
	if err := t.validateWith(b); err != nil {
		return Topic{}, err
	}
	return t, nil
}
