package config

// This file holds the KIP-966 part 1 property: eligible.leader.replicas.version,
// the feature level that turns on Eligible Leader Replicas (ELR) and the
// strict min ISR rule (a leader's high watermark advances only while its ISR
// has at least min.insync.replicas members).
//
// Kafka 4.0 ships the feature off (level 0); 4.1 finalizes level 1 for new
// clusters. ELR is a KRaft feature: on a ZooKeeper-mode configuration, or on
// a release below 4.0, level 1 is a Conflict.
//
// min.insync.replicas: with ELR on, Kafka's controller keeps a cluster-level
// min.insync.replicas (it writes one from the static broker value when the
// feature is enabled, refuses broker-level overrides and the removal of the
// cluster-level value) and reads the effective min ISR of a partition from
// the topic's config, else that cluster-level value. kafkasim's
// min.insync.replicas is one value for the whole cluster already (one Broker
// value for every node) and topics may override it, which is that rule.
//
// Simplified: the feature level is static (no UpdateFeatures, no downgrade,
// no ClearElrRecord on a min ISR change).

import "strconv"

// PropEligibleLeaderReplicasVersion is eligible.leader.replicas.version.
const PropEligibleLeaderReplicasVersion = "eligible.leader.replicas.version"

// ELR is the KIP-966 part of the broker configuration.
type ELR struct {
	// Version is eligible.leader.replicas.version: 0 (off) or 1 (on).
	// Default 1 from release 4.1, else 0.
	Version int
}

// Enabled reports whether ELR and the strict min ISR rule are on.
func (e ELR) Enabled() bool { return e.Version >= 1 }

// NB: the release table's owner takes this default over; until then it
// reads inter.broker.protocol.version.
func defaultELR(v Version) ELR {
	if v.Mechanisms().ELRDefault {
		return ELR{Version: 1}
	}
	return ELR{}
}

func elrProps() []property[Broker] {
	return []property[Broker]{
		intProp(PropEligibleLeaderReplicasVersion, func(b *Broker) *int { return &b.ELR.Version }, 0, 1),
	}
}

// validateELR checks that ELR is on only where Kafka has it: KRaft, 4.0+.
func (b Broker) validateELR() error {
	if !b.ELR.Enabled() {
		return nil
	}
	v := strconv.Itoa(b.ELR.Version)
	if !b.KRaftMode() {
		return conflict(PropEligibleLeaderReplicasVersion, v, PropProcessRoles, "",
			"Eligible Leader Replicas (KIP-966) are a KRaft controller feature, and process.roles is unset (ZooKeeper mode)",
			"eligible.leader.replicas.version=0 in ZooKeeper mode, or process.roles=broker or broker,controller")
	}
	if !b.InterBrokerProtocolVersion.Mechanisms().ELRAvailable {
		return conflict(PropEligibleLeaderReplicasVersion, v, PropInterBrokerProtocolVersion, b.InterBrokerProtocolVersion.String(),
			"Eligible Leader Replicas (KIP-966 part 1) arrived in Kafka 4.0", "inter.broker.protocol.version 4.0 or later, or eligible.leader.replicas.version=0")
	}
	if mv := b.MetadataVersionInEffect(); !mv.AtLeast(MetadataVersion40IV1) {
		return conflict(PropEligibleLeaderReplicasVersion, v, PropMetadataVersion, mv.String(),
			"eligible.leader.replicas.version 1 depends on metadata.version "+MetadataVersion40IV1.String(),
			"metadata.version "+MetadataVersion40IV1.String()+" or later, or eligible.leader.replicas.version=0")
	}
	return nil
}
