package server

// This file serves ApiVersions (api key 18, KIP-35; v3 KIP-511) and says,
// for a broker configuration, which API versions the broker supports: for
// each API key, the range the configured release supports (franz-go's
// kversion tables, which follow Kafka's ApiKeys per release) intersected
// with handlerVersions, the range at which the simulated handler honours
// every field the version carries. A socket in front of the broker
// (kafkasim serve) asks SupportedAPIs and refuses any other (key, version)
// before it reaches the broker.
//
// ApiVersions v0-v4 is answered as Kafka's KafkaApis.handleApiVersionsRequest
// does: a request above the broker's max is answered at version 0 with
// UNSUPPORTED_VERSION and (KIP-511, 2.4+) the ApiVersions range, so the
// client can retry at a version both sides have; a v3+ request whose
// client_software_name or client_software_version does not match Kafka's
// pattern gets INVALID_REQUEST. (Its response header is always v0, even
// for v3: the socket's concern.) In KRaft mode v3+ carries SupportedFeatures (the
// metadata.version range the broker registers with) and FinalizedFeatures
// (the levels in its metadata image, epoch = the image's offset), and
// group.version 1 when the consumer group protocol is on (4.0+).
//
// Caps below the release's maximum, and why (handlerVersions):
//   - Produce 3-9: v0-v2 carry magic 0/1 message sets (the broker reads v2
//     batches only); v10+ add KIP-951 leader hints and v12 KIP-890 part 2's
//     implicit AddPartitionsToTxn, not modelled; v13 topic ids.
//   - Fetch 4-12: v0-v3 need down-conversion to magic 0/1; v13+ use topic
//     ids. Fetch sessions (v7+, KIP-227) are never created (fetch.go).
//   - ListOffsets 0-6: v7 MAX_TIMESTAMP (-3), v8+ tiered-storage timestamps.
//   - JoinGroup 0-9 with group.instance.id from v5 (KIP-345 static
//     membership, coordinator/static.go; v8's reason is not kept, v9's
//     SkipAssignment is honoured). Heartbeat, SyncGroup, LeaveGroup,
//     OffsetCommit and TxnOffsetCommit check the instance id
//     (FENCED_INSTANCE_ID).
//   - OffsetCommit 0-9 (v9 carries KIP-848's member epoch, checked for
//     consumer groups), OffsetFetch 0-8 (v9's member id and epoch are not
//     checked, so it is not offered);
//     v0 is ZooKeeper-stored (offsets_zk.go), so KRaft mode starts at v1 as
//     Kafka 3.x's KRaft broker refuses v0.
//   - DescribeGroups 0-5: v6 adds error messages (KIP-1043). ListGroups
//     0-5: v5's types filter (KIP-848) knows classic groups and share
//     groups (share.go); consumer groups of the KIP-848 protocol are not
//     listed at any version.
//   - AddOffsetsToTxn 0-3, EndTxn 0-4: the next versions select
//     transaction version 2 in the coordinator (KIP-890 part 2), whose
//     client also needs Produce v12; TxnOffsetCommit 0-3: v4 brings
//     KIP-890's TRANSACTION_ABORTABLE, v5 transaction version 2. So no
//     finalized transaction.version is advertised either.
//   - LeaderAndIsr 0-1, StopReplica 0-2, UpdateMetadata 0-4: the forms the
//     handlers read (the flat partition lists); ZooKeeper mode only.
//   - ConsumerGroupHeartbeat 0-1 (v1: broker-side regular expressions),
//     ConsumerGroupDescribe 0-1: only from 4.0, in KRaft mode, with the
//     consumer protocol enabled (KIP-848).
//   - FindCoordinator 0-5, and v6 (key type 2, share-partitions,
//     KIP-932) where share groups are served.
//   - ShareGroupHeartbeat 1, ShareGroupDescribe 1, ShareFetch 1-2,
//     ShareAcknowledge 1-2: only with share.version 1 (4.2+, KRaft).
//   - ListTransactions 0-1: v2 (4.1, KIP-1152) filters by a Java regular
//     expression over transactional ids, which Go's regexp does not match
//     the same way.
//
// The admin APIs (DeleteTopics, CreatePartitions, AlterConfigs,
// IncrementalAlterConfigs, ElectLeaders, DeleteRecords, DeleteGroups,
// OffsetDelete, DescribeCluster, DescribeProducers, DescribeTransactions,
// ListTransactions, DescribeLogDirs) are served at every version their
// release has; each file says what it simplifies. So are the ACL, SCRAM
// credential and client quota APIs and ListPartitionReassignments
// (security.go; stored, never enforced). AlterPartitionReassignments
// (KIP-455) is left out: replicas are never moved (no reassignment in the
// controllers), so a client sees a broker without it and serve answers a
// request for it UNSUPPORTED_VERSION.
//
// Simplifications: KRaft mode below 4.0 uses the ZooKeeper broker's
// table of that release minus the ZooKeeper-only APIs (kversion has no
// public 3.x KRaft-broker table); minimum versions are 0 except where the
// handler needs more and 4.0's KIP-896 removals; a dedicated controller
// advertises ApiVersions only (clients do not talk to it).

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// APIRange is the version range of one API key a broker serves.
type APIRange struct {
	Key, Min, Max int16
}

// handlerRange is a handler's honoured range, and the modes it runs in.
type handlerRange struct {
	min, max int16
	zkOnly   bool  // ZooKeeper-mode inter-broker APIs
	kraftMin int16 // the minimum in KRaft mode, when above min
	// kraftOnly marks the consumer group protocol's APIs, served from
	// 4.0 when group.coordinator.rebalance.protocols has consumer.
	kraftOnly bool
	// shareOnly marks share groups' APIs (KIP-932), served in KRaft mode
	// when share.version is 1 (api_versions_share.go).
	shareOnly bool
}

// handlerVersions is, per API key, the versions at which the simulated
// handler honours every field (see the file comment for each cap).
var handlerVersions = map[int16]handlerRange{
	0:  {min: 3, max: 9},  // Produce
	1:  {min: 4, max: 12}, // Fetch
	2:  {min: 0, max: 6},  // ListOffsets
	3:  {min: 0, max: 13}, // Metadata
	4:  {min: 0, max: 1, zkOnly: true},
	5:  {min: 0, max: 2, zkOnly: true},
	6:  {min: 0, max: 4, zkOnly: true},
	8:  {min: 0, max: 9, kraftMin: 1}, // OffsetCommit
	9:  {min: 0, max: 8, kraftMin: 1}, // OffsetFetch
	10: {min: 0, max: 6},              // FindCoordinator
	11: {min: 0, max: 9},              // JoinGroup
	12: {min: 0, max: 4},              // Heartbeat
	13: {min: 0, max: 5},              // LeaveGroup
	14: {min: 0, max: 5},              // SyncGroup
	15: {min: 0, max: 5},              // DescribeGroups
	16: {min: 0, max: 5},              // ListGroups
	18: {min: 0, max: 4},              // ApiVersions
	19: {min: 0, max: 7},              // CreateTopics
	20: {min: 0, max: 6},              // DeleteTopics
	21: {min: 0, max: 2},              // DeleteRecords
	22: {min: 0, max: 5},              // InitProducerId
	23: {min: 0, max: 4},              // OffsetForLeaderEpoch
	24: {min: 0, max: 4},              // AddPartitionsToTxn
	25: {min: 0, max: 3},              // AddOffsetsToTxn
	26: {min: 0, max: 4},              // EndTxn
	27: {min: 0, max: 2},              // WriteTxnMarkers
	28: {min: 0, max: 3},              // TxnOffsetCommit
	29: {min: 0, max: 3},              // DescribeAcls
	30: {min: 0, max: 3},              // CreateAcls
	31: {min: 0, max: 3},              // DeleteAcls
	32: {min: 0, max: 4},              // DescribeConfigs
	33: {min: 0, max: 2},              // AlterConfigs
	35: {min: 0, max: 4},              // DescribeLogDirs
	37: {min: 0, max: 3},              // CreatePartitions
	42: {min: 0, max: 2},              // DeleteGroups
	43: {min: 0, max: 2},              // ElectLeaders
	44: {min: 0, max: 1},              // IncrementalAlterConfigs
	46: {min: 0, max: 0},              // ListPartitionReassignments
	47: {min: 0, max: 0},              // OffsetDelete
	48: {min: 0, max: 1},              // DescribeClientQuotas
	49: {min: 0, max: 1},              // AlterClientQuotas
	50: {min: 0, max: 0},              // DescribeUserScramCredentials
	51: {min: 0, max: 0},              // AlterUserScramCredentials
	60: {min: 0, max: 2},              // DescribeCluster
	61: {min: 0, max: 0},              // DescribeProducers
	65: {min: 0, max: 0},              // DescribeTransactions
	66: {min: 0, max: 1},              // ListTransactions
}

// kip896Min is Kafka 4.0's raised minimum versions (KIP-896), for the
// keys of handlerVersions; 4.1 put JoinGroup v0-v1 back (KAFKA-19444).
var kip896Min = map[int16]int16{1: 4, 2: 1, 8: 2, 9: 1, 11: 2, 19: 2, 20: 1, 23: 2, 27: 1, 29: 1, 30: 1, 31: 1, 32: 1, 35: 1}

// releaseMax holds, per release, kversion's max version of each key the
// release has. It is filled once at package init and only read
// afterwards, so worlds running in parallel can share it.
var releaseMax = func() map[config.Version]map[int16]int16 {
	fns := map[config.Version]func() *kversion.Versions{
		config.V0_8_0: kversion.V0_8_0, config.V0_8_1: kversion.V0_8_1, config.V0_8_2: kversion.V0_8_2,
		config.V0_9_0: kversion.V0_9_0, config.V0_10_0: kversion.V0_10_0, config.V0_10_1: kversion.V0_10_1,
		config.V0_10_2: kversion.V0_10_2, config.V0_11_0: kversion.V0_11_0, config.V1_0: kversion.V1_0_0,
		config.V1_1: kversion.V1_1_0, config.V2_0: kversion.V2_0_0, config.V2_1: kversion.V2_1_0,
		config.V2_2: kversion.V2_2_0, config.V2_3: kversion.V2_3_0, config.V2_4: kversion.V2_4_0,
		config.V2_5: kversion.V2_5_0, config.V2_6: kversion.V2_6_0, config.V2_7: kversion.V2_7_0,
		config.V2_8: kversion.V2_8_0, config.V3_0: kversion.V3_0_0, config.V3_1: kversion.V3_1_0,
		config.V3_2: kversion.V3_2_0, config.V3_3: kversion.V3_3_0, config.V3_4: kversion.V3_4_0,
		config.V3_5: kversion.V3_5_0, config.V3_6: kversion.V3_6_0, config.V3_7: kversion.V3_7_0,
		config.V3_8: kversion.V3_8_0, config.V3_9: kversion.V3_9_0, config.V4_0: kversion.V4_0_0,
		config.V4_1: kversion.V4_1_0, config.V4_2: kversion.V4_2_0, config.V4_3: kversion.V4_3_0,
	}
	out := map[config.Version]map[int16]int16{}
	for v, f := range fns {
		m := map[int16]int16{}
		f().EachMaxKeyVersion(func(k, max int16) { m[k] = max })
		out[v] = m
	}
	return out
}()

// SupportedAPIs returns the APIs a broker with configuration cfg
// advertises in ApiVersions, sorted by key (a new slice each call; a
// socket layer keeps it per broker): the release's versions
// (cfg.Release) intersected with what the simulated handlers honour. A
// key not listed is not supported; a request outside its range must be
// refused (UNSUPPORTED_VERSION) before it reaches the broker, except
// ApiVersions itself, which the broker answers at any version (KIP-511).
func SupportedAPIs(cfg Config) []APIRange {
	rel := cfg.release()
	vs := releaseMax[rel]
	kraftMode := cfg.KRaft != nil
	controllerOnly := kraftMode && !cfg.KRaft.Broker
	keys := make([]int16, 0, len(handlerVersions))
	for k := range handlerVersions {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var out []APIRange
	for _, k := range keys {
		h := handlerVersions[k]
		relMax, ok := vs[k]
		if !ok || (h.zkOnly && kraftMode) || (controllerOnly && k != 18) || (h.kraftOnly && (!kraftMode || rel < config.V4_0 || !cfg.Coordinator.Consumer.Enabled)) ||
			(h.shareOnly && !cfg.sharesEnabled()) {
			continue
		}
		lo, hi := h.min, min(h.max, relMax)
		if k == 10 && !cfg.sharesEnabled() {
			hi = min(hi, 5) // v6 is for share-partition keys (KIP-932)
		}
		if kraftMode && h.kraftMin > lo {
			lo = h.kraftMin
		}
		if m, ok := kip896Min[k]; ok && rel >= config.V4_0 && !(k == 11 && rel >= config.V4_1) {
			lo = max(lo, m)
		}
		if lo > hi {
			continue
		}
		out = append(out, APIRange{Key: k, Min: lo, Max: hi})
	}
	return out
}

// SupportedVersions returns the range of key a broker with configuration
// cfg supports, and false when it does not support the key at all.
func SupportedVersions(cfg Config, key int16) (lo, hi int16, ok bool) {
	for _, r := range SupportedAPIs(cfg) {
		if r.Key == key {
			return r.Min, r.Max, true
		}
	}
	return -1, -1, false
}

// Supports reports whether the broker with configuration cfg serves key at
// version v.
func Supports(cfg Config, key, v int16) bool {
	lo, hi, ok := SupportedVersions(cfg, key)
	return ok && v >= lo && v <= hi
}

// SupportedAPIs returns the broker's SupportedAPIs.
func (b *Broker) SupportedAPIs() []APIRange { return SupportedAPIs(b.cfg) }

// UnsupportedAPIVersionsResponse is the answer to an ApiVersions request
// at a version above the broker's: version 0, UNSUPPORTED_VERSION, and,
// from 2.4 (KIP-511), the broker's ApiVersions range alone
// (ApiVersionsRequest.getErrorResponse), so the client retries at a
// version both have; before 2.4 no keys. A socket layer that cannot even
// decode such a request answers it with this.
func UnsupportedAPIVersionsResponse(cfg Config) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = 0
	resp.ErrorCode = kerr.UnsupportedVersion.Code
	if lo, hi, ok := SupportedVersions(cfg, 18); ok && cfg.release() >= config.V2_4 {
		resp.ApiKeys = []kmsg.ApiVersionsResponseApiKey{{ApiKey: 18, MinVersion: lo, MaxVersion: hi}}
	}
	return resp
}

func apiKeys(cfg Config) []kmsg.ApiVersionsResponseApiKey {
	var out []kmsg.ApiVersionsResponseApiKey
	for _, r := range SupportedAPIs(cfg) {
		out = append(out, kmsg.ApiVersionsResponseApiKey{ApiKey: r.Key, MinVersion: r.Min, MaxVersion: r.Max})
	}
	return out
}

// validSoftware matches Kafka's client software name and version pattern
// [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? (ApiVersionsRequest.isValid).
func validSoftware(s string) bool {
	if s == "" {
		return false
	}
	alnum := func(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' }
	if !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !alnum(s[i]) && s[i] != '-' && s[i] != '.' {
			return false
		}
	}
	return true
}

// handleAPIVersions serves ApiVersions (api key 18).
func (b *Broker) handleAPIVersions(from sim.NodeID, req *wire.Request, body *kmsg.ApiVersionsRequest) {
	_, hi, _ := SupportedVersions(b.cfg, 18)
	if body.Version > hi {
		resp := UnsupportedAPIVersionsResponse(b.cfg)
		b.ctx.Send(from, b.enc.Reply(req, resp))
		return
	}
	resp := kmsg.NewPtrApiVersionsResponse()
	if body.Version >= 3 && (!validSoftware(body.ClientSoftwareName) || !validSoftware(body.ClientSoftwareVersion)) {
		resp.ErrorCode = kerr.InvalidRequest.Code
		b.respond(from, req, resp)
		return
	}
	resp.ApiKeys = apiKeys(b.cfg)
	if body.Version >= 3 && b.kraft != nil && b.kraft.meta != nil {
		_, metadataVersionLevel := b.cfg.KRaft.metadataVersion()
		resp.SupportedFeatures = []kmsg.ApiVersionsResponseSupportedFeature{{Name: metadata.MetadataVersionFeature, MinVersion: 1, MaxVersion: metadataVersionLevel}}
		if l := b.kraft.meta.img.Feature(metadata.MetadataVersionFeature); l > 0 {
			resp.FinalizedFeaturesEpoch = b.kraft.meta.offset
			resp.FinalizedFeatures = []kmsg.ApiVersionsResponseFinalizedFeature{{Name: metadata.MetadataVersionFeature, MinVersionLevel: l, MaxVersionLevel: l}}
		}
		if b.cfg.Coordinator.Consumer.Enabled && b.cfg.release() >= config.V4_0 {
			// group.version (KIP-848) stands in the broker's configuration
			// (config.ConsumerGroups), not in the metadata image: supported
			// 0-1, finalized at 1 whenever the protocol is on.
			resp.SupportedFeatures = append(resp.SupportedFeatures, kmsg.ApiVersionsResponseSupportedFeature{Name: "group.version", MinVersion: 0, MaxVersion: 1})
			if len(resp.FinalizedFeatures) > 0 {
				resp.FinalizedFeatures = append(resp.FinalizedFeatures, kmsg.ApiVersionsResponseFinalizedFeature{Name: "group.version", MinVersionLevel: 1, MaxVersionLevel: 1})
			}
		}
		if b.cfg.sharesEnabled() {
			// share.version (KIP-932) stands in the broker's configuration
			// (config.ShareGroups), as group.version does.
			resp.SupportedFeatures = append(resp.SupportedFeatures, kmsg.ApiVersionsResponseSupportedFeature{Name: "share.version", MinVersion: 0, MaxVersion: 1})
			if len(resp.FinalizedFeatures) > 0 {
				resp.FinalizedFeatures = append(resp.FinalizedFeatures, kmsg.ApiVersionsResponseFinalizedFeature{Name: "share.version", MinVersionLevel: 1, MaxVersionLevel: 1})
			}
		}
	}
	b.respond(from, req, resp)
}
