package server

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func releaseConfig(v config.Version, kraftMode bool) Config {
	cfg := DefaultConfig(0)
	cfg.Release = v
	if kraftMode {
		cfg.KRaft = &KRaftConfig{Broker: true}
	}
	return cfg
}

// Every advertised range lies inside the release's (kversion) and the
// handler's, for every release and mode; keys the release lacks are absent.
func TestSupportedAPIsWithinReleaseAndHandler(t *testing.T) {
	for _, v := range config.Versions() {
		for _, kraftMode := range []bool{false, true} {
			if kraftMode && v < config.V2_8 || !kraftMode && v >= config.FirstKRaftOnly {
				continue
			}
			cfg := releaseConfig(v, kraftMode)
			vs := releaseMax[v]
			prev := int16(-1)
			for _, r := range SupportedAPIs(cfg) {
				if r.Key <= prev {
					t.Fatalf("%v: keys not sorted: %d after %d", v, r.Key, prev)
				}
				prev = r.Key
				relMax, ok := vs[r.Key]
				h := handlerVersions[r.Key]
				switch {
				case !ok:
					t.Errorf("%v kraft=%v: key %d advertised, but the release has no such API", v, kraftMode, r.Key)
				case r.Max > relMax || r.Max > h.max || r.Min < h.min || r.Min > r.Max:
					t.Errorf("%v kraft=%v: key %d advertised %d-%d; release max %d, handler %d-%d", v, kraftMode, r.Key, r.Min, r.Max, relMax, h.min, h.max)
				case kraftMode && h.zkOnly:
					t.Errorf("%v: KRaft broker advertises ZooKeeper-only key %d", v, r.Key)
				}
			}
		}
	}
}

// Spot checks against Kafka's own ApiVersions answers.
func TestSupportedAPIsPerRelease(t *testing.T) {
	type want struct {
		key      int16
		min, max int16 // -1, -1: not supported
	}
	cases := []struct {
		v     config.Version
		kraft bool
		want  []want
	}{
		// 0.9 has no ApiVersions (KIP-35 came in 0.10.0), but serves
		// Metadata v0 to a client that assumes the release.
		{config.V0_9_0, false, []want{{18, -1, -1}, {3, 0, 0}}},
		// 0.10.2: no InitProducerId (KIP-98 is 0.11); Produce v0-v2 carry
		// magic 0/1 sets and Fetch v0-v3 need down-conversion: not served.
		{config.V0_10_2, false, []want{{22, -1, -1}, {0, -1, -1}, {1, -1, -1}, {3, 0, 2}, {18, 0, 0}, {4, 0, 0}}},
		// 2.0: Fetch up to v8 (no v11, KIP-392 is 2.4), Metadata v6.
		{config.V2_0, false, []want{{1, 4, 8}, {3, 0, 6}, {0, 3, 6}, {18, 0, 2}, {22, 0, 1}, {19, 0, 3}, {32, 0, 2}}},
		// 2.2 JoinGroup v4 (KIP-394): no static membership yet; 2.3 has
		// JoinGroup v5 with group.instance.id (KIP-345).
		{config.V2_2, false, []want{{11, 0, 4}, {36, -1, -1}}},
		{config.V2_3, false, []want{{11, 0, 5}}},
		// 3.9 ZooKeeper: the caps, and the inter-broker APIs.
		{config.V3_9, false, []want{{0, 3, 9}, {1, 4, 12}, {2, 0, 6}, {3, 0, 12}, {4, 0, 1}, {5, 0, 2}, {6, 0, 4},
			{8, 0, 9}, {9, 0, 8}, {10, 0, 5}, {11, 0, 9}, {12, 0, 4}, {13, 0, 5}, {14, 0, 5}, {18, 0, 4}, {19, 0, 7},
			{22, 0, 5}, {23, 0, 4}, {24, 0, 4}, {25, 0, 3}, {26, 0, 4}, {27, 0, 1}, {28, 0, 3}, {32, 0, 4}, {15, 0, 5}, {16, 0, 5}}},
		// 3.9 KRaft: no LeaderAndIsr/StopReplica/UpdateMetadata, no v0
		// offsets (they lived in ZooKeeper).
		{config.V3_9, true, []want{{4, -1, -1}, {5, -1, -1}, {6, -1, -1}, {8, 1, 9}, {9, 1, 8}, {68, -1, -1}, {69, -1, -1}}},
		// 4.0: KIP-896 minimums, Metadata v13.
		{config.V4_0, true, []want{{1, 4, 12}, {2, 1, 6}, {3, 0, 13}, {8, 2, 9}, {9, 1, 8}, {11, 2, 9}, {19, 2, 7}, {23, 2, 4}, {32, 1, 4}, {26, 0, 4}}},
		// 4.1 put JoinGroup v0-v1 back (KAFKA-19444); ListTransactions v2
		// (KIP-1152's Java regex filter) is capped at v1.
		{config.V4_1, true, []want{{11, 0, 9}, {66, 0, 1}}},
		// Share groups (KIP-932): 4.1's preview is not modelled (no share
		// API at 4.1); served from 4.2 (share.version=1 by default).
		{config.V4_1, true, []want{{76, -1, -1}, {77, -1, -1}, {78, -1, -1}, {79, -1, -1}, {83, -1, -1}, {90, -1, -1}}},
		{config.V4_2, true, []want{{76, 1, 1}, {77, 1, 1}, {78, 1, 2}, {79, 1, 2}, {83, 0, 0}, {84, 0, 0}, {85, 0, 1}, {86, 0, 0},
			{87, 0, 1}, {90, 0, 1}, {91, 0, 0}, {92, 0, 0}}},
		// 4.2 and 4.3 (kversion's tables): the same caps.
		{config.V4_2, true, []want{{11, 0, 9}, {12, 0, 4}, {3, 0, 13}, {8, 2, 9}}},
		{config.V4_3, true, []want{{11, 0, 9}, {14, 0, 5}, {1, 4, 12}}},
		// The admin APIs, as each release brought them.
		{config.V0_10_2, false, []want{{20, 0, 0}, {21, -1, -1}, {33, -1, -1}}},
		{config.V1_0, false, []want{{20, 0, 1}, {21, 0, 0}, {33, 0, 0}, {35, 0, 0}, {37, 0, 0}, {42, -1, -1}}},
		{config.V2_2, false, []want{{43, 0, 0}, {44, -1, -1}, {42, 0, 1}}},
		{config.V2_4, false, []want{{42, 0, 2}, {43, 0, 2}, {44, 0, 1}, {47, 0, 0}, {60, -1, -1}}},
		{config.V2_8, false, []want{{20, 0, 6}, {60, 0, 0}, {61, 0, 0}, {65, -1, -1}}},
		{config.V3_9, false, []want{{20, 0, 6}, {21, 0, 2}, {33, 0, 2}, {35, 0, 4}, {37, 0, 3}, {43, 0, 2}, {44, 0, 1}, {60, 0, 1}, {65, 0, 0}, {66, 0, 1}}},
		// 4.0: KIP-896 raised DeleteTopics and DescribeLogDirs to v1;
		// DescribeCluster v2 (KIP-1073).
		{config.V4_0, true, []want{{20, 1, 6}, {35, 1, 4}, {60, 0, 2}, {61, 0, 0}, {65, 0, 0}, {66, 0, 1}}},
	}
	for _, c := range cases {
		cfg := releaseConfig(c.v, c.kraft)
		for _, w := range c.want {
			lo, hi, ok := SupportedVersions(cfg, w.key)
			if !ok {
				lo, hi = -1, -1
			}
			if lo != w.min || hi != w.max {
				t.Errorf("%v kraft=%v key %d: %d-%d, want %d-%d", c.v, c.kraft, w.key, lo, hi, w.min, w.max)
			}
			if ok && (!Supports(cfg, w.key, hi) || Supports(cfg, w.key, hi+1)) {
				t.Errorf("%v key %d: Supports disagrees with the range", c.v, w.key)
			}
		}
	}
	// A dedicated controller advertises ApiVersions only.
	cfg := releaseConfig(config.V4_0, true)
	cfg.KRaft.Broker, cfg.KRaft.Controller = false, true
	if got := SupportedAPIs(cfg); len(got) != 1 || got[0].Key != 18 {
		t.Errorf("dedicated controller: %v, want ApiVersions only", got)
	}
}

func TestValidSoftware(t *testing.T) {
	for s, want := range map[string]bool{"kgo": true, "librdkafka": true, "apache-kafka-java": true, "3.9.0": true, "a": true,
		"": false, "-kgo": false, "kgo.": false, "k go": false, "k_go": false} {
		if validSoftware(s) != want {
			t.Errorf("validSoftware(%q) = %v, want %v", s, !want, want)
		}
	}
}

// KIP-511: from 2.4 the UNSUPPORTED_VERSION answer carries the ApiVersions
// range; before, no keys.
func TestUnsupportedAPIVersionsResponse(t *testing.T) {
	r := UnsupportedAPIVersionsResponse(releaseConfig(config.V2_4, false))
	if r.Version != 0 || r.ErrorCode != 35 || len(r.ApiKeys) != 1 || r.ApiKeys[0].ApiKey != 18 || r.ApiKeys[0].MaxVersion != 3 {
		t.Errorf("2.4: %+v", r)
	}
	if r := UnsupportedAPIVersionsResponse(releaseConfig(config.V2_3, false)); r.ErrorCode != 35 || len(r.ApiKeys) != 0 {
		t.Errorf("2.3: %+v", r)
	}
}

// Exactly the keys served are advertised: a 3.9 ZooKeeper broker and a
// 4.0 KRaft broker list these and no others.
func TestSupportedAPIsExactKeys(t *testing.T) {
	for _, c := range []struct {
		v     config.Version
		kraft bool
		keys  []int16
	}{
		{config.V3_9, false, []int16{0, 1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 35, 37, 42, 43, 44, 46, 47, 48, 49, 50, 51, 60, 61, 65, 66}},
		{config.V4_0, true, []int16{0, 1, 2, 3, 8, 9, 10, 11, 12, 13, 14, 15, 16, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 35, 37, 42, 43, 44, 46, 47, 48, 49, 50, 51, 60, 61, 65, 66}},
	} {
		var got []int16
		for _, r := range SupportedAPIs(releaseConfig(c.v, c.kraft)) {
			got = append(got, r.Key)
		}
		if !slices.Equal(got, c.keys) {
			t.Errorf("%v kraft=%v: keys %v, want %v", c.v, c.kraft, got, c.keys)
		}
	}
	// KIP-896 (4.0) removed the ACL APIs' v0.
	for _, r := range SupportedAPIs(releaseConfig(config.V4_0, true)) {
		if (r.Key == 29 || r.Key == 30 || r.Key == 31) && (r.Min != 1 || r.Max != 3) {
			t.Errorf("4.0: %s v%d-v%d, want v1-v3", kmsg.NameForKey(r.Key), r.Min, r.Max)
		}
	}
}
