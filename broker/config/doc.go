// Package config is Kafka's configuration for kafkasim: the broker's
// (KafkaConfig), a topic's overrides (TopicConfig), the producer's
// (ProducerConfig) and the consumer's (ConsumerConfig), by Kafka's property
// names and with Kafka's defaults, parsed from string key/value maps as a
// user types them (-set acks=all -set min.insync.replicas=2) and validated
// with errors that name the property, the value and what is allowed.
//
// Each kind is a documented struct (Broker, Topic, Producer, Consumer) with a
// Default constructor, a Parse function and Validate; Config bundles them for
// a run, parses one flat map (keys may carry the prefixes topic., producer.
// and consumer.), checks the combinations that depend on the cluster's size
// (Config.Validate) and renders itself as sorted key=value lines (Pairs,
// NonDefaultPairs) that Parse reads back into the same Config. Kafka's *.ms
// properties are integers of milliseconds, converted once, here, to
// sim.Duration.
//
// Errors are *Error values of four kinds: UnknownProperty (with the nearest
// known name), BadValue (wrong type or not an allowed value), OutOfRange and
// Conflict (two settings, or a setting and the cluster, that cannot hold
// together). Keys are processed in sorted order, so the first error reported
// for a map is always the same.
//
// What each release has is one table, releases (release.go), read through
// Version.Mechanisms; every version-dependent default below follows it.
// ParseMatrixVersion turns a version-matrix label ("3.9-zk", "3.9-kraft",
// "4.0") into the properties of a run; metadata.version (KRaft only) names
// the release too and must agree with inter.broker.protocol.version.
//
// The truncation protocol follows inter.broker.protocol.version (below 0.11:
// HW; 0.11 to 1.1: KIP101; 2.0 and later: KIP279). The alias truncation=hw|
// kip101|kip279 sets it directly by selecting the newest release that uses
// it (0.10.2, 1.1, 3.9), so every other version-dependent default follows;
// giving both with different protocols is a Conflict naming both.
// Simulation-only switches live under the kafkasim. prefix:
// kafkasim.leader.epoch.fencing (KIP-320, on from 2.1),
// kafkasim.truncate.on.leader.change.only (the KAFKA-7164 bug, off),
// kafkasim.truncation.in.fetch (DivergingEpoch in Fetch v12, KAFKA-10554, on
// from 2.7) and, for
// the consumer, kafkasim.truncation.detection (KIP-320 position validation;
// Parse defaults it to kafkasim.leader.epoch.fencing).
//
// Example:
//
//	cfg, err := config.Parse(map[string]string{
//		"acks":                "all",
//		"min.insync.replicas": "2",
//		"truncation":          "hw",
//	})
//	if err != nil {
//		return err // config: acks = "maybe": not one of the allowed values; allowed: 0, 1, -1, all
//	}
//	if err := cfg.Validate(3, 3); err != nil { // 3 brokers, replication factor 3
//		return err
//	}
//	_ = cfg.Broker.Truncation          // config.HW
//	_ = cfg.Broker.ReplicaLagTimeMax   // 10s: the 0.10.2 default
//	fmt.Println(cfg.NonDefaultPairs()) // for the replay command
//
// The package is a leaf: it imports only sim. Code that needs a
// storage.Config builds it from Broker and Topic.
package config
