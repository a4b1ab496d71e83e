package matrix

// This file maps the matrix's version labels to the properties a run sets
// to run "under" that Kafka release, and lists the version-selecting
// properties a scenario's own variant may pin (they are replaced by the
// release's own).
// The labels themselves are broker/config's (MatrixLabels,
// ParseMatrixVersion): one release table.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
)

// DefaultVersions is the default -versions list, oldest first.
var DefaultVersions = []string{"0.10.2", "0.11.0", "1.1", "2.0", "2.1", "2.4", "2.7", "3.9-zk", "3.9-kraft", "4.0", "4.1", "4.2", "4.3"}

// Mode names of a release's metadata mode.
const (
	ModeZooKeeper = "zk"
	ModeKRaft     = "kraft"
)

// Release is one version label of the matrix and the run properties it
// selects.
type Release struct {
	Label   string
	Version config.Version
	// Mode is ModeZooKeeper or ModeKRaft.
	Mode string
	// Props are the properties the release sets on every run, in order:
	// inter.broker.protocol.version, then process.roles for 3.9-kraft.
	Props [][2]string
}

// ParseRelease maps a label to its release, by broker/config's one release
// table (config.ParseMatrixVersion; config.MatrixLabels lists them):
//
//	X.Y        inter.broker.protocol.version=X.Y, a release with one mode
//	           (ZooKeeper below 3.3; KRaft only from 4.0, Kafka's default
//	           process.roles=broker with dedicated controllers: the
//	           script's 'controllers N', or cluster.DefaultControllers = 3)
//	X.Y-zk     from 3.3 to 3.9, ZooKeeper mode
//	X.Y-kraft  from 3.3 to 3.9, KRaft mode: process.roles=broker
//	X.Y.Z...   a patch release of any of these (4.0.0, 4.0.1,
//	           3.9.0-kraft): inter.broker.protocol.version=X.Y.Z; X.Y alone
//	           is the release's newest patch the table models (4.0 = 4.0.1)
//
// An unknown label is an error listing the known ones.
func ParseRelease(label string) (Release, error) {
	props, err := config.ParseMatrixVersion(label)
	if err != nil {
		return Release{}, fmt.Errorf("-versions: unknown version label %q (allowed: %s, the defaults; every label: %s)",
			label, strings.Join(DefaultVersions, ", "), strings.Join(config.MatrixLabels(), ", "))
	}
	ibp := props[config.PropInterBrokerProtocolVersion]
	v, err := config.ParseVersion(ibp)
	if err != nil {
		return Release{}, err
	}
	// ibp keeps a patch label's patch ("4.0.0"): the releases table models
	// bugs fixed in patch releases.
	r := Release{Label: label, Version: v, Mode: ModeZooKeeper,
		Props: [][2]string{{config.PropInterBrokerProtocolVersion, ibp}}}
	if v >= config.FirstKRaftOnly {
		r.Mode = ModeKRaft
	}
	if roles, ok := props[config.PropProcessRoles]; ok {
		r.Mode = ModeKRaft
		r.Props = append(r.Props, [2]string{config.PropProcessRoles, roles})
	}
	return r, nil
}

// ParseVersions parses a comma-separated -versions list.
func ParseVersions(text string) ([]Release, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("-versions %q: empty; give a comma-separated list of version labels (default %s)", text, strings.Join(DefaultVersions, ","))
	}
	var out []Release
	seen := map[string]bool{}
	for _, l := range strings.Split(text, ",") {
		l = strings.TrimSpace(l)
		r, err := ParseRelease(l)
		if err != nil {
			return nil, err
		}
		if seen[l] {
			return nil, fmt.Errorf("-versions: %q given twice", l)
		}
		seen[l] = true
		out = append(out, r)
	}
	return out, nil
}

// VersionKeys are the version-selecting properties: a scenario's script or
// first variant may set them to pin a protocol, and under a release they
// are replaced by the release's own value (its Props, or the release's
// default for the others).
var VersionKeys = []string{
	config.PropInterBrokerProtocolVersion,    // the release itself
	config.PropTruncation,                    // kafkasim's alias of it (hw, kip101, kip279)
	config.PropProcessRoles,                  // ZooKeeper or KRaft mode
	config.PropLeaderEpochFencing,            // KIP-320, from 2.1
	"consumer.kafkasim.truncation.detection", // KIP-320's consumer side, follows the fencing
	config.PropLogMessageFormatVersion,       // follows the release below 3.0
	config.PropRaftPreVote,                   // KIP-996, from 4.0
	config.PropMetadataVersion,               // KRaft's level, follows the release
}

// own returns the release's value of a version-selecting key: Props first,
// then the release's default.
func (r Release) own(key string) string {
	for _, p := range r.Props {
		if p[0] == key {
			return p[1]
		}
	}
	b := config.DefaultBrokerFor(r.Version)
	switch key {
	case config.PropProcessRoles:
		return b.KRaft.ProcessRoles.String()
	case config.PropLeaderEpochFencing, "consumer.kafkasim.truncation.detection":
		return strconv.FormatBool(b.LeaderEpochFencing)
	case config.PropLogMessageFormatVersion:
		return b.LogMessageFormatVersion
	case config.PropRaftPreVote:
		return strconv.FormatBool(b.KRaft.PreVote)
	}
	return "" // truncation: replaced by inter.broker.protocol.version (scenarios/labels.go)
}

// Set returns the -set overrides that run a scenario's variant under
// r: the release's Props, and for each other version-selecting key the
// script or variant sets (configured), the release's own value. The
// truncation alias needs nothing: a layer that sets
// inter.broker.protocol.version replaces it.
func (r Release) Set(configured map[string]string) map[string]string {
	set := map[string]string{}
	for _, p := range r.Props {
		set[p[0]] = p[1]
	}
	for _, k := range VersionKeys {
		if _, ok := configured[k]; ok && k != config.PropTruncation {
			if _, done := set[k]; !done {
				set[k] = r.own(k)
			}
		}
	}
	return set
}
