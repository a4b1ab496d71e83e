package config

// This file holds metadata.version, KRaft's feature level (Kafka's
// MetadataVersion enum, server-common): the KRaft levels from 3.3-IV0 (the
// MINIMUM_BOOTSTRAP_VERSION: a new cluster cannot start below it) to
// 4.3-IV0, each with the feature level Kafka writes in its
// FeatureLevelRecord. A release bootstraps with its latest production level
// (the releases table's MetadataVersion); metadata.version may name any
// level from 3.3-IV0 up to that one (a cluster formatted with
// --release-version, or not yet finalized after an upgrade), never a newer
// one.
//
// What kafkasim reads from the level: below 3.6-IV0 the controller bumps
// the leader epoch on an ISR shrink (KAFKA-15021,
// MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink); KIP-966's ELR needs
// 4.0-IV1 (eligible.leader.replicas.version 1 depends on it). Other
// level-gated features (record versions, KIP-919 directories, ...) are not
// modelled and do not change with the level.
//
// Simplified: the level is static (no UpdateFeatures, no upgrade or
// downgrade while running).

import (
	"strconv"
	"strings"
)

// MetadataVersion is one KRaft metadata.version level. The zero value is
// unset.
type MetadataVersion struct {
	// Release is the release the level belongs to ("3.6" of 3.6-IV2).
	Release Version
	// IV is the internal version within the release (2 of 3.6-IV2).
	IV int
	// Level is the feature level Kafka writes (14 for 3.6-IV2).
	Level int16
}

// metadataVersions are Kafka's KRaft levels from the minimum bootstrap
// version on, oldest first (MetadataVersion.java; 4.1's from its 4.1.0
// release; 4.2-IV0 (28), 4.2-IV1 (29, no metadata changes) and 4.3-IV0
// (30, metadata changes) as MetadataVersion.java on apache/kafka trunk
// lists them and the 4.2 and 4.3 upgrade notes name their latest:
// docs/getting-started/upgrade.md). A release's latest level is the one a
// new cluster of it bootstraps with.
var metadataVersions = []MetadataVersion{
	{V3_3, 0, 4}, {V3_3, 1, 5}, {V3_3, 2, 6}, {V3_3, 3, 7},
	{V3_4, 0, 8},
	{V3_5, 0, 9}, {V3_5, 1, 10}, {V3_5, 2, 11},
	{V3_6, 0, 12}, {V3_6, 1, 13}, {V3_6, 2, 14},
	{V3_7, 0, 15}, {V3_7, 1, 16}, {V3_7, 2, 17}, {V3_7, 3, 18}, {V3_7, 4, 19},
	{V3_8, 0, 20},
	{V3_9, 0, 21},
	{V4_0, 0, 22}, {V4_0, 1, 23}, {V4_0, 2, 24}, {V4_0, 3, 25},
	{V4_1, 0, 26}, {V4_1, 1, 27},
	{V4_2, 0, 28}, {V4_2, 1, 29},
	{V4_3, 0, 30},
}

// Named levels other code compares with.
var (
	// MetadataVersion36IV0 is the first level that keeps the leader epoch
	// on an ISR shrink (KAFKA-15021).
	MetadataVersion36IV0 = MetadataVersion{V3_6, 0, 12}
	// MetadataVersion40IV1 is the first level with ELR (KIP-966).
	MetadataVersion40IV1 = MetadataVersion{V4_0, 1, 23}
)

// String renders the level as Kafka names it: "3.6-IV2".
func (m MetadataVersion) String() string {
	if m.Level == 0 {
		return "metadata.version(unset)"
	}
	return m.Release.String() + "-IV" + strconv.Itoa(m.IV)
}

// AtLeast reports whether m is level o or later.
func (m MetadataVersion) AtLeast(o MetadataVersion) bool { return m.Level >= o.Level }

// LeaderEpochBumpOnISRShrink is
// MetadataVersion.isLeaderEpochBumpRequiredOnIsrShrink: true below 3.6-IV0
// (KAFKA-15021).
func (m MetadataVersion) LeaderEpochBumpOnISRShrink() bool { return !m.AtLeast(MetadataVersion36IV0) }

// LatestMetadataVersion is the latest production level of release v (the
// level a new cluster of v bootstraps with); the zero value below 3.3.
func LatestMetadataVersion(v Version) MetadataVersion {
	var out MetadataVersion
	for _, m := range metadataVersions {
		if m.Release == v {
			out = m
		}
	}
	return out
}

// MetadataVersions returns every level kafkasim knows, oldest first.
func MetadataVersions() []MetadataVersion { return append([]MetadataVersion(nil), metadataVersions...) }

// ParseMetadataVersion parses a metadata.version value: "3.6-IV2", or a
// release alone ("3.6"), which is its latest level (as Kafka's
// MetadataVersion.fromVersionString).
func ParseMetadataVersion(s string) (MetadataVersion, error) {
	t := strings.TrimSpace(s)
	bad := func(why string) error {
		return &Error{Kind: BadValue, Property: PropMetadataVersion, Value: s, Reason: why, Allowed: metadataAllowed}
	}
	rel, iv, hasIV := strings.Cut(t, "-IV")
	v, ok := parseRelease(rel, false)
	if !ok || strings.Count(rel, ".") != 1 {
		return MetadataVersion{}, bad("not a KRaft release (X.Y, optionally -IVn)")
	}
	if !hasIV {
		if m := LatestMetadataVersion(v); m.Level != 0 {
			return m, nil
		}
		return MetadataVersion{}, bad("Kafka " + v.String() + " has no KRaft metadata.version a cluster can start with")
	}
	n, err := strconv.Atoi(iv)
	if err != nil || n < 0 || strconv.Itoa(n) != iv {
		return MetadataVersion{}, bad("-IV" + iv + " is not an internal version (IV0, IV1, ...)")
	}
	for _, m := range metadataVersions {
		if m.Release == v && m.IV == n {
			return m, nil
		}
	}
	return MetadataVersion{}, bad("Kafka has no metadata.version " + t)
}

var metadataAllowed = func() string {
	names := make([]string, len(metadataVersions))
	for i, m := range metadataVersions {
		names[i] = m.String()
	}
	return strings.Join(names, ", ") + " (or a release alone, e.g. 3.6, for its latest level)"
}()
