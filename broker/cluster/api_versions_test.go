package cluster

import (
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func kraftProps() map[string]string {
	return map[string]string{"inter.broker.protocol.version": "4.0"}
}

func apiKeysOf(r *kmsg.ApiVersionsResponse) []server.APIRange {
	var out []server.APIRange
	for _, k := range r.ApiKeys {
		out = append(out, server.APIRange{Key: k.ApiKey, Min: k.MinVersion, Max: k.MaxVersion})
	}
	return out
}

// ApiVersions at every version it is advertised at answers the broker's
// SupportedAPIs; above the max, KIP-511's v0 answer with
// UNSUPPORTED_VERSION and the list; v3+ checks the client software
// name; KRaft brokers list metadata.version.
func TestAPIVersionsEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{}
			if mode == "kraft" {
				props = kraftProps()
			}
			a := newAPICluster(t, props, nil)
			want := a.c.Broker(1).SupportedAPIs()
			if !slices.Equal(want, a.c.SupportedAPIs(1)) {
				t.Fatalf("the running broker and its configuration disagree: %v / %v", want, a.c.SupportedAPIs(1))
			}
			lo, hi := a.versions(18)
			for v := lo; v <= hi; v++ {
				req := kmsg.NewPtrApiVersionsRequest()
				req.Version = v
				req.ClientSoftwareName, req.ClientSoftwareVersion = "kgo", "1.18.0"
				resp := a.call(1, req).(*kmsg.ApiVersionsResponse)
				if resp.ErrorCode != 0 || !slices.Equal(apiKeysOf(resp), want) {
					t.Fatalf("v%d: error %s, keys %v; want %v", v, errName(resp.ErrorCode), apiKeysOf(resp), want)
				}
				if v >= 3 && mode == "kraft" {
					// metadata.version, and group.version (KIP-848: on by default from 4.0).
					if len(resp.SupportedFeatures) != 2 || resp.SupportedFeatures[0].Name != "metadata.version" || resp.SupportedFeatures[1].Name != "group.version" ||
						len(resp.FinalizedFeatures) != 2 || resp.FinalizedFeatures[0].MaxVersionLevel != 25 || resp.FinalizedFeatures[1].MaxVersionLevel != 1 || resp.FinalizedFeaturesEpoch < 0 {
						t.Fatalf("v%d: features %+v / %+v epoch %d", v, resp.SupportedFeatures, resp.FinalizedFeatures, resp.FinalizedFeaturesEpoch)
					}
				}
				if v >= 3 && mode == "zk" && (len(resp.SupportedFeatures) != 0 || len(resp.FinalizedFeatures) != 0) {
					t.Fatalf("v%d: a ZooKeeper broker lists features %+v", v, resp.SupportedFeatures)
				}
			}
			// Above the max: v0 answer (KIP-511).
			req := kmsg.NewPtrApiVersionsRequest()
			req.Version = hi + 1
			req.ClientSoftwareName, req.ClientSoftwareVersion = "kgo", "1.18.0"
			resp := a.call(1, req).(*kmsg.ApiVersionsResponse)
			if resp.ErrorCode != kerr.UnsupportedVersion.Code || !slices.Equal(apiKeysOf(resp), []server.APIRange{{Key: 18, Min: lo, Max: hi}}) {
				t.Fatalf("v%d: error %s keys %v; want UNSUPPORTED_VERSION and the ApiVersions range", hi+1, errName(resp.ErrorCode), apiKeysOf(resp))
			}
			// A bad client software name.
			req = kmsg.NewPtrApiVersionsRequest()
			req.Version = 3
			req.ClientSoftwareName, req.ClientSoftwareVersion = "-bad name", "1"
			if resp := a.call(1, req).(*kmsg.ApiVersionsResponse); resp.ErrorCode != kerr.InvalidRequest.Code {
				t.Fatalf("bad software name: %s, want INVALID_REQUEST", errName(resp.ErrorCode))
			}
		})
	}
}

// Metadata at every advertised version: brokers, the topic's leaders,
// v0's empty list meaning all topics (null from v1), authorized
// operations (v8+) only when asked, topic ids (v10+: zero in ZooKeeper
// mode, the controller's in KRaft), v12 topics named by id.
func TestMetadataEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{}
			if mode == "kraft" {
				props = kraftProps()
			}
			a := newAPICluster(t, props, nil)
			lo, hi := a.versions(3)
			var id [16]byte
			if img := a.c.Broker(0).Image(); img != nil {
				id, _ = img.TopicID("t")
			}
			for v := lo; v <= hi; v++ {
				for _, form := range []string{"named", "all", "none", "ops"} {
					req := kmsg.NewPtrMetadataRequest()
					req.Version = v
					switch form {
					case "named", "ops":
						n := "t"
						req.Topics = []kmsg.MetadataRequestTopic{{Topic: &n}}
						if form == "ops" {
							if v < 8 {
								continue
							}
							req.IncludeTopicAuthorizedOperations = true
							req.IncludeClusterAuthorizedOperations = v <= 10
						}
					case "all":
						if v == 0 {
							req.Topics = []kmsg.MetadataRequestTopic{}
						}
					case "none":
						if v == 0 {
							continue
						}
						req.Topics = []kmsg.MetadataRequestTopic{}
					}
					resp := a.call(2, req).(*kmsg.MetadataResponse)
					if len(resp.Brokers) != 3 {
						t.Fatalf("v%d %s: %d brokers", v, form, len(resp.Brokers))
					}
					if form == "none" {
						if len(resp.Topics) != 0 {
							t.Fatalf("v%d: an empty topic list answered %d topics", v, len(resp.Topics))
						}
						continue
					}
					if len(resp.Topics) != 1 || *resp.Topics[0].Topic != "t" || resp.Topics[0].ErrorCode != 0 || len(resp.Topics[0].Partitions) != 3 {
						t.Fatalf("v%d %s: topics %+v", v, form, resp.Topics)
					}
					for _, p := range resp.Topics[0].Partitions {
						if p.Leader < 0 || p.ErrorCode != 0 || len(p.Replicas) != 3 {
							t.Fatalf("v%d: partition %+v", v, p)
						}
					}
					ops := resp.Topics[0].AuthorizedOperations
					switch {
					case v >= 8 && form == "ops" && ops != 3576:
						t.Fatalf("v%d: topic authorized operations %d, want 3576", v, ops)
					case v >= 8 && form != "ops" && ops != -2147483648:
						t.Fatalf("v%d: topic authorized operations %d not asked for, want -2147483648", v, ops)
					case v >= 8 && v <= 10 && form == "ops" && resp.AuthorizedOperations != 8096:
						t.Fatalf("v%d: cluster authorized operations %d", v, resp.AuthorizedOperations)
					case v >= 10 && resp.Topics[0].TopicID != id:
						t.Fatalf("v%d: topic id %x, want %x", v, resp.Topics[0].TopicID, id)
					}
				}
				if v >= 12 {
					req := kmsg.NewPtrMetadataRequest()
					req.Version = v
					req.Topics = []kmsg.MetadataRequestTopic{{TopicID: id}, {TopicID: [16]byte{1, 2, 3}}}
					resp := a.call(0, req).(*kmsg.MetadataResponse)
					if mode == "kraft" && (len(resp.Topics) != 2 || *resp.Topics[0].Topic != "t" || resp.Topics[1].ErrorCode != kerr.UnknownTopicID.Code) {
						t.Fatalf("v%d by id: %+v", v, resp.Topics)
					}
				}
			}
		})
	}
}

// Produce v3+ and Fetch v4+ at every advertised version on the leader,
// ListOffsets at every version; fetch sessions (KIP-227) are never made:
// a full request gets session id 0, an incremental one
// FETCH_SESSION_ID_NOT_FOUND.
func TestProduceFetchListOffsetsEveryVersion(t *testing.T) {
	for _, ibp := range []string{"0.11.0", "2.0", "3.9", "4.0"} {
		t.Run(ibp, func(t *testing.T) { testProduceFetchListOffsetsEveryVersion(t, ibp) })
	}
}

func testProduceFetchListOffsetsEveryVersion(t *testing.T, ibp string) {
	a := newAPICluster(t, map[string]string{"inter.broker.protocol.version": ibp}, nil)
	plo, phi := a.versions(0)
	next := int64(0)
	for v := plo; v <= phi; v++ {
		p := a.produce("t", 0, v, "a", "b")
		if p.ErrorCode != 0 || p.BaseOffset != next || v >= 5 && p.LogStartOffset != 0 {
			t.Fatalf("Produce v%d: %s at %d (log start %d), want NONE at %d", v, errName(p.ErrorCode), p.BaseOffset, p.LogStartOffset, next)
		}
		next += 2
	}
	l := a.leader("t", 0)
	flo, fhi := a.versions(1)
	for v := flo; v <= fhi; v++ {
		req := kmsg.NewPtrFetchRequest()
		req.Version, req.MaxWaitMillis, req.MinBytes, req.MaxBytes = v, 100, 1, 1<<20
		fp := kmsg.NewFetchRequestTopicPartition()
		fp.Partition, fp.FetchOffset, fp.PartitionMaxBytes = 0, 0, 1<<20
		req.Topics = []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{fp}}}
		resp := a.call(l, req).(*kmsg.FetchResponse)
		if resp.ErrorCode != 0 || resp.SessionID != 0 || len(resp.Topics) != 1 {
			t.Fatalf("Fetch v%d: error %s session %d", v, errName(resp.ErrorCode), resp.SessionID)
		}
		rp := resp.Topics[0].Partitions[0]
		if rp.ErrorCode != 0 || rp.HighWatermark != next || len(rp.RecordBatches) == 0 {
			t.Fatalf("Fetch v%d: %s hw %d, %d bytes", v, errName(rp.ErrorCode), rp.HighWatermark, len(rp.RecordBatches))
		}
		if v >= 7 {
			for _, s := range []struct {
				id, epoch int32
				want      int16
			}{{0, 0, 0}, {77, 0, 0}, {77, -1, 0}, {77, 1, kerr.FetchSessionIDNotFound.Code}, {0, 1, kerr.FetchSessionIDNotFound.Code}, {77, 5, kerr.FetchSessionIDNotFound.Code}} {
				req.SessionID, req.SessionEpoch = s.id, s.epoch
				resp := a.call(l, req).(*kmsg.FetchResponse)
				if resp.ErrorCode != s.want || resp.SessionID != 0 || (s.want == 0) != (len(resp.Topics) == 1) {
					t.Fatalf("Fetch v%d session %d epoch %d: %s session %d, %d topics; want %s", v, s.id, s.epoch, errName(resp.ErrorCode), resp.SessionID, len(resp.Topics), errName(s.want))
				}
			}
		}
	}
	llo, lhi := a.versions(2)
	for v := llo; v <= lhi; v++ {
		for _, ts := range []int64{-1, -2} {
			req := kmsg.NewPtrListOffsetsRequest()
			req.Version = v
			rp := kmsg.NewListOffsetsRequestTopicPartition()
			rp.Partition, rp.Timestamp, rp.MaxNumOffsets = 0, ts, 1
			req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsRequestTopicPartition{rp}}}
			resp := a.call(l, req).(*kmsg.ListOffsetsResponse)
			p := resp.Topics[0].Partitions[0]
			want := next
			if ts == -2 {
				want = 0
			}
			got := p.Offset
			if v == 0 {
				if len(p.OldStyleOffsets) != 1 {
					t.Fatalf("ListOffsets v0: %v", p.OldStyleOffsets)
				}
				got = p.OldStyleOffsets[0]
			}
			if p.ErrorCode != 0 || got != want {
				t.Fatalf("ListOffsets v%d ts %d: %s %d, want %d", v, ts, errName(p.ErrorCode), got, want)
			}
		}
	}
	// Not the leader.
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version = 1
	req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: "t", Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: 0, Timestamp: -1}}}}
	if p := a.call((l+1)%3, req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]; p.ErrorCode != kerr.NotLeaderForPartition.Code {
		t.Fatalf("ListOffsets on a follower: %s", errName(p.ErrorCode))
	}
	a.run(sim.Second)
}

// kgoBatch encodes a v2 record batch the way franz-go's producer does:
// kmsg records, then the length and the CRC-32C over everything from the
// attributes on patched in.
func kgoBatch(pid int64, epoch int16, seq int32, values ...string) []byte {
	var recs []byte
	for i, v := range values {
		r := kmsg.Record{OffsetDelta: int32(i), Value: []byte(v)}
		body := r.AppendTo(nil)[1:] // without the zero length varint
		recs = binary.AppendVarint(recs, int64(len(body)))
		recs = append(recs, body...)
	}
	b := kmsg.RecordBatch{PartitionLeaderEpoch: -1, Magic: 2, LastOffsetDelta: int32(len(values) - 1),
		FirstTimestamp: 1700000000000, MaxTimestamp: 1700000000000, ProducerID: pid, ProducerEpoch: epoch, FirstSequence: seq,
		NumRecords: int32(len(values)), Records: recs}
	raw := b.AppendTo(nil)
	binary.BigEndian.PutUint32(raw[8:12], uint32(len(raw)-12))
	binary.BigEndian.PutUint32(raw[17:21], crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli)))
	return raw
}

// A batch encoded by a real client (franz-go's layout, idempotent) is
// accepted at every Produce version, a duplicate is acknowledged without a
// second append, and what Fetch returns decodes with kmsg with valid CRCs.
func TestProduceRealClientBatches(t *testing.T) {
	a := newAPICluster(t, nil, nil)
	ip := kmsg.NewPtrInitProducerIDRequest()
	ip.Version = 4
	r := a.call(0, ip).(*kmsg.InitProducerIDResponse)
	if r.ErrorCode != 0 {
		t.Fatalf("InitProducerId: %s", errName(r.ErrorCode))
	}
	l := a.leader("t", 1)
	lo, hi := a.versions(0)
	seq := int32(0)
	want := int64(0)
	for v := lo; v <= hi; v++ {
		req := kmsg.NewPtrProduceRequest()
		req.Version, req.Acks, req.TimeoutMillis = v, -1, 5000
		req.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 1, Records: kgoBatch(r.ProducerID, r.ProducerEpoch, seq, "x", "y")}}}}
		p := a.call(l, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]
		if p.ErrorCode != 0 || p.BaseOffset != want {
			t.Fatalf("Produce v%d, a franz-go batch: %s at %d, want %d", v, errName(p.ErrorCode), p.BaseOffset, want)
		}
		if d := a.call(l, req).(*kmsg.ProduceResponse).Topics[0].Partitions[0]; d.ErrorCode != 0 || d.BaseOffset != want {
			t.Fatalf("Produce v%d, the same batch again: %s at %d, want the first answer", v, errName(d.ErrorCode), d.BaseOffset)
		}
		seq += 2
		want += 2
	}
	req := kmsg.NewPtrFetchRequest()
	req.Version, req.MaxBytes = 12, 1<<20
	fp := kmsg.NewFetchRequestTopicPartition()
	fp.Partition, fp.PartitionMaxBytes = 1, 1<<20
	req.Topics = []kmsg.FetchRequestTopic{{Topic: "t", Partitions: []kmsg.FetchRequestTopicPartition{fp}}}
	raw := a.call(l, req).(*kmsg.FetchResponse).Topics[0].Partitions[0].RecordBatches
	n := int64(0)
	for len(raw) > 0 {
		var b kmsg.RecordBatch
		if err := b.ReadFrom(raw); err != nil {
			t.Fatal(err)
		}
		size := int(b.Length) + 12
		if uint32(b.CRC) != crc32.Checksum(raw[21:size], crc32.MakeTable(crc32.Castagnoli)) || b.FirstOffset != n {
			t.Fatalf("fetched batch at %d: bad CRC or offset %d", n, b.FirstOffset)
		}
		n += int64(b.NumRecords)
		raw = raw[size:]
	}
	if n != want {
		t.Fatalf("fetched %d records, want %d", n, want)
	}
}

// Every advertised (key, version) is served: a request with default
// (empty) fields at each one, to a broker of each mode, is answered
// without the broker panicking (Produce with acks 0 excepted: no answer).
func TestEveryAdvertisedVersionIsServed(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			props := map[string]string{"kafkasim.transactions": "true"}
			if mode == "kraft" {
				props["inter.broker.protocol.version"] = "4.0"
			}
			a := newAPICluster(t, props, func(s *Spec) { s.OffsetsTopic = true })
			for _, r := range a.c.SupportedAPIs(1) {
				for v := r.Min; v <= r.Max; v++ {
					req := kmsg.RequestForKey(r.Key)
					req.SetVersion(v)
					if p, ok := req.(*kmsg.ProduceRequest); ok {
						p.Acks = 1
					}
					a.call(1, req)
				}
			}
			a.run(5 * sim.Second)
			for i := range a.c.Brokers {
				if a.c.Broker(i) == nil {
					t.Fatalf("broker %d is down", i)
				}
			}
		})
	}
}
