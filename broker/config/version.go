package config

// This file holds inter.broker.protocol.version and what it selects: the
// truncation protocol (HW, KIP-101, KIP-279; which release has which is the
// releases table, release.go), and metadata.version, KRaft's name for the
// release. Simplified vs Kafka: versions are releases ("0.10.2", "2.0",
// "3.9"); Kafka's internal sub-versions ("2.0-IV1") are not distinguished for
// the inter-broker protocol (they are accepted, and ignored, only in
// log.message.format.version, as the storage package does). The newest
// ZooKeeper version is 3.9, the default. 4.0 to 4.3 run KRaft only: Kafka
// 4.0 removed ZooKeeper and inter.broker.protocol.version (metadata.version
// took its place); kafkasim still accepts the release here to select them.

import (
	"strconv"
	"strings"
)

// Version is an inter-broker protocol version (a Kafka release). Versions
// are ordered: a later release compares greater. The zero Version is unset
// and fails validation.
type Version int8

// The Kafka releases the testbed knows, oldest first.
const (
	V0_8_0 Version = iota + 1
	V0_8_1
	V0_8_2
	V0_9_0
	V0_10_0
	V0_10_1
	V0_10_2
	V0_11_0
	V1_0
	V1_1
	V2_0
	V2_1
	V2_2
	V2_3
	V2_4
	V2_5
	V2_6
	V2_7
	V2_8
	V3_0
	V3_1
	V3_2
	V3_3
	V3_4
	V3_5
	V3_6
	V3_7
	V3_8
	V3_9
	V4_0
	V4_1
	V4_2
	V4_3
	// Latest is the newest release with ZooKeeper, the default of
	// inter.broker.protocol.version.
	Latest = V3_9
	// Newest is the newest release the testbed knows.
	Newest = V4_3
	// FirstKRaftOnly is the first release without ZooKeeper (KIP-500).
	FirstKRaftOnly = V4_0
)

var versionNames = [...]string{"", "0.8.0", "0.8.1", "0.8.2", "0.9.0", "0.10.0", "0.10.1", "0.10.2", "0.11.0",
	"1.0", "1.1", "2.0", "2.1", "2.2", "2.3", "2.4", "2.5", "2.6", "2.7", "2.8",
	"3.0", "3.1", "3.2", "3.3", "3.4", "3.5", "3.6", "3.7", "3.8", "3.9", "4.0", "4.1", "4.2", "4.3"}

// String returns the release as Kafka writes it: "0.10.2", "2.0", "3.9".
func (v Version) String() string {
	if v.Valid() {
		return versionNames[v]
	}
	return "version(" + strconv.Itoa(int(v)) + ")"
}

// Valid reports whether v is one of the known releases.
func (v Version) Valid() bool { return v >= V0_8_0 && v <= Newest }

// AtLeast reports whether v is release u or later.
func (v Version) AtLeast(u Version) bool { return v >= u }

// Versions returns every known release, oldest first.
func Versions() []Version {
	out := make([]Version, 0, Newest)
	for v := V0_8_0; v <= Newest; v++ {
		out = append(out, v)
	}
	return out
}

// allowedVersions is the list printed when a version is not known.
func allowedVersions() string {
	return strings.Join(versionNames[1:], ", ")
}

// ParseVersion parses an inter.broker.protocol.version value. It accepts a
// release ("0.10.2", "2.0", "3.9") and, as Kafka does, a patch release of it
// ("0.10.2.1", "2.8.1"), which selects the same protocol.
func ParseVersion(s string) (Version, error) {
	v, ok := parseRelease(strings.TrimSpace(s), false)
	if !ok {
		return 0, &Error{Kind: BadValue, Property: PropInterBrokerProtocolVersion, Value: s,
			Reason: "not a known Kafka release", Allowed: allowedVersions() + " (a patch release such as 2.8.1 selects its release)"}
	}
	return v, nil
}

// ParseVersionPatch is ParseVersion that also returns the patch release
// given ("4.0.1": 1), or -1 for a release alone ("4.0"). The releases table
// models the patches where Kafka's behaviour changed (release.go).
func ParseVersionPatch(s string) (Version, int, error) {
	v, patch, ok := parseReleasePatch(strings.TrimSpace(s))
	if !ok {
		_, err := ParseVersion(s)
		return 0, -1, err
	}
	return v, patch, nil
}

// parseReleasePatch is parseRelease (without -IVn) that also returns the
// patch number, -1 when s names no patch.
func parseReleasePatch(s string) (Version, int, bool) {
	v, ok := parseRelease(s, false)
	if !ok {
		return 0, -1, false
	}
	parts := strings.Split(s, ".")
	width := 2
	if parts[0] == "0" {
		width = 3
	}
	if len(parts) == width {
		return v, -1, true
	}
	n, err := strconv.Atoi(parts[width])
	if err != nil || n > 99 {
		return 0, -1, false
	}
	return v, n, true
}

// parseRelease maps "0.10.2", "0.10.2.1", "2.8", "2.8.1" (and, when iv is
// set, "2.8-IV1") to its release.
func parseRelease(s string, iv bool) (Version, bool) {
	if iv {
		if i := strings.Index(s, "-IV"); i >= 0 {
			if n, err := strconv.Atoi(s[i+3:]); err != nil || n < 0 {
				return 0, false
			}
			s = s[:i]
		}
	}
	parts := strings.Split(s, ".")
	width := 2
	if len(parts) > 0 && parts[0] == "0" {
		width = 3
	}
	if len(parts) != width && len(parts) != width+1 {
		return 0, false
	}
	for _, p := range parts {
		if p == "" || strings.TrimLeft(p, "0123456789") != "" || (len(p) > 1 && p[0] == '0') {
			return 0, false
		}
	}
	key := strings.Join(parts[:width], ".")
	for v := V0_8_0; v <= Newest; v++ {
		if versionNames[v] == key {
			return v, true
		}
	}
	return 0, false
}

// Truncation is the protocol a follower uses to find where its log diverges
// from the leader's and truncate it. The zero Truncation is unset and fails
// validation.
type Truncation int8

// The truncation protocols.
const (
	// HW is the pre-0.11 rule: on start and on becoming follower, truncate
	// to the local (checkpointed) high watermark. It loses acknowledged
	// records and lets replicas diverge (KIP-101 scenarios 1 and 2).
	HW Truncation = iota + 1
	// KIP101 is 0.11's leader-epoch truncation: OffsetsForLeaderEpoch with
	// the follower's latest epoch, truncate to the end offset returned. It
	// still diverges in the fast fail-over case (KAFKA-6361).
	KIP101
	// KIP279 is 2.0's fix: the leader answers with (epoch, end offset) and
	// the follower walks back epochs until both agree.
	KIP279
)

var truncationNames = [...]string{"", "hw", "kip101", "kip279"}

// String returns the value of the truncation property: "hw", "kip101" or
// "kip279".
func (t Truncation) String() string {
	if t >= HW && t <= KIP279 {
		return truncationNames[t]
	}
	return "truncation(" + strconv.Itoa(int(t)) + ")"
}

// ParseTruncation parses a truncation property value, case-insensitively.
func ParseTruncation(s string) (Truncation, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "hw":
		return HW, nil
	case "kip101", "kip-101":
		return KIP101, nil
	case "kip279", "kip-279":
		return KIP279, nil
	}
	return 0, &Error{Kind: BadValue, Property: PropTruncation, Value: s,
		Reason: "not a truncation protocol", Allowed: "hw, kip101, kip279"}
}

// TruncationFor returns the truncation protocol release v uses (the
// releases table): HW below 0.11, KIP101 from 0.11 to 1.1, KIP279 from 2.0
// on.
func TruncationFor(v Version) Truncation {
	if !v.Valid() {
		return KIP279
	}
	return v.Mechanisms().Truncation
}

// Version returns the newest release that uses t (the releases table's
// alias rows): 0.10.2 for HW, 1.1 for KIP101, Latest for KIP279. The
// truncation property alone selects it as inter.broker.protocol.version.
func (t Truncation) Version() Version { return aliasVersion(t) }

// truncationRanges says which releases select which protocol, for errors.
const truncationRanges = "hw needs a version below 0.11, kip101 0.11 to 1.1, kip279 2.0 or later"

// parseMetadataVersion parses metadata.version (metadata_version.go).
func parseMetadataVersion(s string) (MetadataVersion, error) { return ParseMetadataVersion(s) }

func metadataVersionProp() property[Broker] {
	p := stringProp(PropMetadataVersion, func(b *Broker) *string { return &b.MetadataVersion })
	set := p.set
	p.set = func(b *Broker, s string) error {
		if strings.TrimSpace(s) != "" {
			if _, err := parseMetadataVersion(s); err != nil {
				return err
			}
		}
		return set(b, strings.TrimSpace(s))
	}
	return p
}

// metadataConflict is metadata.version naming a level newer than the
// release of inter.broker.protocol.version (or older than it supports).
func metadataConflict(mv string, v Version) error {
	return conflict(PropMetadataVersion, mv, PropInterBrokerProtocolVersion, v.String(),
		"Kafka "+v.String()+" supports metadata.version "+minMetadataVersion(v).String()+" to "+LatestMetadataVersion(v).String(),
		"metadata.version "+minMetadataVersion(v).String()+" to "+LatestMetadataVersion(v).String()+", or set only one of the two")
}

// minMetadataVersion is the oldest level release v runs: 3.3-IV0
// (MINIMUM_BOOTSTRAP_VERSION) in 3.x, 3.3-IV3 from 4.0 (which dropped the
// older levels).
func minMetadataVersion(v Version) MetadataVersion {
	if v >= V4_0 {
		return metadataVersions[3]
	}
	return metadataVersions[0]
}

// MetadataVersionInEffect is the metadata.version the cluster bootstraps
// with: metadata.version when set, else the latest production level of
// inter.broker.protocol.version (the zero value in ZooKeeper mode or below
// 3.3).
func (b Broker) MetadataVersionInEffect() MetadataVersion {
	if b.MetadataVersion != "" {
		if mv, err := parseMetadataVersion(b.MetadataVersion); err == nil {
			return mv
		}
	}
	if !b.KRaftMode() {
		return MetadataVersion{}
	}
	return LatestMetadataVersion(b.InterBrokerProtocolVersion)
}

// validateRelease checks metadata.version: KRaft only, and a level the
// release of inter.broker.protocol.version runs.
func (b Broker) validateRelease() error {
	v := b.InterBrokerProtocolVersion
	if b.MetadataVersion != "" {
		mv, err := parseMetadataVersion(b.MetadataVersion)
		if err != nil {
			return err
		}
		if !b.KRaftMode() {
			return conflict(PropMetadataVersion, b.MetadataVersion, PropProcessRoles, "",
				"metadata.version is a KRaft feature level, and process.roles is unset (ZooKeeper mode)",
				"process.roles=broker or broker,controller, or metadata.version unset (inter.broker.protocol.version names the release)")
		}
		if mv.Level > LatestMetadataVersion(v).Level || mv.Level < minMetadataVersion(v).Level {
			return metadataConflict(b.MetadataVersion, v)
		}
	}
	return nil
}
