package cluster

import (
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func deleteRecordsReq(v int16, topic string, p int32, offset int64) *kmsg.DeleteRecordsRequest {
	req := kmsg.NewPtrDeleteRecordsRequest()
	req.Version, req.TimeoutMillis = v, 10000
	req.Topics = []kmsg.DeleteRecordsRequestTopic{{Topic: topic, Partitions: []kmsg.DeleteRecordsRequestTopicPartition{{Partition: p, Offset: offset}}}}
	return req
}

// earliest answers ListOffsets' earliest offset of topic-p on its leader.
func (a *apiCluster) earliest(topic string, p int32) int64 {
	a.t.Helper()
	req := kmsg.NewPtrListOffsetsRequest()
	req.Version, req.ReplicaID = 1, -1
	req.Topics = []kmsg.ListOffsetsRequestTopic{{Topic: topic, Partitions: []kmsg.ListOffsetsRequestTopicPartition{{Partition: p, Timestamp: -2, CurrentLeaderEpoch: -1}}}}
	rp := a.call(a.leader(topic, p), req).(*kmsg.ListOffsetsResponse).Topics[0].Partitions[0]
	if rp.ErrorCode != 0 {
		a.t.Fatalf("ListOffsets %s-%d: %s", topic, p, errName(rp.ErrorCode))
	}
	return rp.Offset
}

// DeleteRecords at every advertised version moves the log start offset
// of the leader and, before the answer, of every follower (the low
// watermark); -1 means the HW; the errors as Kafka's.
func TestDeleteRecordsEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, nil), func(s *Spec) {
				s.Topics = append(s.Topics, Topic{Name: "c", Partitions: 1, ReplicationFactor: 3, Config: map[string]string{"cleanup.policy": "compact"}})
			})
			a.waitLeaders("c", 1)
			lo, hi := a.versions(21)
			if lo != 0 || hi != 2 {
				t.Fatalf("DeleteRecords advertised v%d-v%d", lo, hi)
			}
			a.produce("t", 0, 7, "a", "b", "c", "d", "e", "f", "g", "h")
			l := a.leader("t", 0)
			offset := int64(0)
			for v := lo; v <= hi; v++ {
				offset += 2
				rp := a.call(l, deleteRecordsReq(v, "t", 0, offset)).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]
				if rp.ErrorCode != 0 || rp.LowWatermark != offset {
					t.Fatalf("v%d: %s low watermark %d, want %d", v, errName(rp.ErrorCode), rp.LowWatermark, offset)
				}
				if got := a.earliest("t", 0); got != offset {
					t.Fatalf("v%d: earliest offset %d", v, got)
				}
				for i := range a.c.Brokers {
					p, _ := a.c.Broker(i).Partition(storage.TopicPartition{Topic: "t", Partition: 0})
					if p.Log().LogStartOffset() != offset {
						t.Fatalf("v%d: b%d's log starts at %d", v, i, p.Log().LogStartOffset())
					}
				}
			}
			// -1: the HW.
			if rp := a.call(l, deleteRecordsReq(1, "t", 0, -1)).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]; rp.ErrorCode != 0 || rp.LowWatermark != 8 {
				t.Fatalf("-1: %s %d", errName(rp.ErrorCode), rp.LowWatermark)
			}
			for _, c := range []struct {
				name string
				to   int
				req  *kmsg.DeleteRecordsRequest
				want *kerr.Error
			}{
				{"past the HW", l, deleteRecordsReq(1, "t", 0, 100), kerr.OffsetOutOfRange},
				{"negative", l, deleteRecordsReq(1, "t", 0, -5), kerr.OffsetOutOfRange},
				{"not the leader", (l + 1) % 3, deleteRecordsReq(1, "t", 0, 8), kerr.NotLeaderForPartition},
				{"unknown partition", l, deleteRecordsReq(1, "t", 9, 0), kerr.UnknownTopicOrPartition},
				{"compacted topic", a.leader("c", 0), deleteRecordsReq(1, "c", 0, 0), kerr.PolicyViolation},
			} {
				if rp := a.call(c.to, c.req).(*kmsg.DeleteRecordsResponse).Topics[0].Partitions[0]; rp.ErrorCode != c.want.Code {
					t.Errorf("%s: %s, want %s", c.name, errName(rp.ErrorCode), c.want.Message)
				}
			}
		})
	}
}

// ElectLeaders: a preferred election puts leadership back on the first
// replica after it moved; a partition led by it needs none; an unclean
// election elects a replica outside the ISR of a leaderless partition
// (and counts as an unclean election in the trace).
func TestElectLeaders(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, map[string]string{"auto.leader.rebalance.enable": "false", "replica.lag.time.max.ms": "2000"}), nil)
			lo, hi := a.versions(43)
			if lo != 0 || hi != 2 {
				t.Fatalf("ElectLeaders advertised v%d-v%d", lo, hi)
			}
			to := a.adminTarget(mode)
			elect := func(v int16, typ int8, topic string, parts ...int32) kmsg.ElectLeadersResponse {
				req := kmsg.NewPtrElectLeadersRequest()
				req.Version, req.ElectionType, req.TimeoutMillis = v, typ, 10000
				if topic != "" {
					req.Topics = []kmsg.ElectLeadersRequestTopic{{Topic: topic, Partitions: parts}}
				}
				return *a.call(to, req).(*kmsg.ElectLeadersResponse)
			}
			md := a.metadata(0, "t")
			pref := md.Topics[0].Partitions[0].Replicas[0]
			for v := lo; v <= hi; v++ {
				r := elect(v, 0, "t", 0)
				if len(r.Topics) != 1 || r.Topics[0].Partitions[0].ErrorCode != kerr.ElectionNotNeeded.Code {
					t.Fatalf("v%d, led by the preferred replica: %+v", v, r.Topics)
				}
			}
			// Move t-0's leadership away: bounce its preferred leader.
			if err := a.c.World.Inject(sim.Crash{Node: a.c.Brokers[pref]}); err != nil {
				t.Fatal(err)
			}
			a.run(15 * sim.Second)
			if err := a.c.World.Inject(sim.Restart{Node: a.c.Brokers[pref]}); err != nil {
				t.Fatal(err)
			}
			a.run(20 * sim.Second)
			if l := a.leader("t", 0); l == int(pref) || l < 0 {
				t.Fatalf("t-0 led by %d after bouncing %d", l, pref)
			}
			to = a.adminTarget(mode)
			r := elect(2, 0, "t", 0, 7)
			if r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 || r.Topics[0].Partitions[1].ErrorCode != kerr.UnknownTopicOrPartition.Code {
				t.Fatalf("preferred election: %+v", r)
			}
			a.run(2 * sim.Second)
			if l := a.leader("t", 0); l != int(pref) {
				t.Fatalf("after the preferred election t-0 is led by %d, want %d", l, pref)
			}
			// Null partitions: every partition; those needing no election left out.
			if r := elect(2, 0, ""); r.ErrorCode != 0 || len(r.Topics) != 0 {
				t.Errorf("all partitions, none needing an election: %+v", r.Topics)
			}
			// Unclean: u-0 on b1 (leader) and b2; b2 falls out of the ISR,
			// then b1 dies: leaderless; b2 comes back, unclean election off.
			req := createTopic(4, "u", -1, -1)
			req.Topics[0].ReplicaAssignment = []kmsg.CreateTopicsRequestTopicReplicaAssignment{{Partition: 0, Replicas: []int32{1, 2}}}
			if ts := a.createTopics(to, req); ts[0].ErrorCode != 0 {
				t.Fatalf("CreateTopics u: %s", errName(ts[0].ErrorCode))
			}
			a.waitLeaders("u", 1)
			if err := a.c.World.Inject(sim.Crash{Node: a.c.Brokers[2]}); err != nil {
				t.Fatal(err)
			}
			a.run(15 * sim.Second)
			if err := a.c.World.Inject(sim.Crash{Node: a.c.Brokers[1]}); err != nil {
				t.Fatal(err)
			}
			a.run(15 * sim.Second)
			if err := a.c.World.Inject(sim.Restart{Node: a.c.Brokers[2]}); err != nil {
				t.Fatal(err)
			}
			a.run(20 * sim.Second)
			if l := a.leader("u", 0); l >= 0 {
				t.Fatalf("u-0 led by %d before the unclean election", l)
			}
			to = a.adminTarget(mode)
			if to == 1 {
				to = 0
			}
			if r := elect(1, 0, "u", 0); r.Topics[0].Partitions[0].ErrorCode != kerr.PreferredLeaderNotAvailable.Code {
				t.Errorf("preferred election of u-0 with b1 down: %s", errName(r.Topics[0].Partitions[0].ErrorCode))
			}
			r = elect(1, 1, "u", 0)
			if r.ErrorCode != 0 || r.Topics[0].Partitions[0].ErrorCode != 0 {
				t.Fatalf("unclean election: %+v", r)
			}
			a.run(3 * sim.Second)
			if l := a.leader("u", 0); l != 2 {
				t.Fatalf("after the unclean election u-0 is led by %d, want 2", l)
			}
			if r := elect(1, 1, "u", 0); r.Topics[0].Partitions[0].ErrorCode != kerr.ElectionNotNeeded.Code {
				t.Errorf("unclean election of a led partition: %s", errName(r.Topics[0].Partitions[0].ErrorCode))
			}
			unclean := false
			for _, rec := range a.c.World.Trace().Records() {
				if rec.Kind == "controller-unclean-election" {
					unclean = true
				}
				if e, ok := rec.Get("election"); ok && e == "unclean" {
					unclean = true
				}
			}
			if !unclean {
				t.Errorf("no unclean election in the trace")
			}
		})
	}
}

// DescribeCluster at every advertised version names the brokers and the
// controller the Metadata names; v1 refuses a request for controllers.
func TestDescribeClusterEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, nil), nil)
			lo, hi := a.versions(60)
			if lo != 0 || hi != map[string]int16{"zk": 1, "kraft": 2}[mode] {
				t.Fatalf("DescribeCluster advertised v%d-v%d", lo, hi)
			}
			md := a.metadata(1)
			for v := lo; v <= hi; v++ {
				req := kmsg.NewPtrDescribeClusterRequest()
				req.Version, req.EndpointType, req.IncludeClusterAuthorizedOperations = v, 1, true
				r := a.call(1, req).(*kmsg.DescribeClusterResponse)
				var ids []int32
				for _, b := range r.Brokers {
					ids = append(ids, b.NodeID)
				}
				if r.ErrorCode != 0 || !slices.Equal(ids, []int32{0, 1, 2}) || r.ControllerID != md.ControllerID || r.ClusterAuthorizedOperations <= 0 {
					t.Fatalf("v%d: %s brokers %v controller %d (metadata %d) ops %d", v, errName(r.ErrorCode), ids, r.ControllerID, md.ControllerID, r.ClusterAuthorizedOperations)
				}
				if mode == "kraft" && r.ClusterID == "" {
					t.Fatalf("v%d: no cluster id", v)
				}
				if v >= 1 {
					req.EndpointType = 2
					if r := a.call(1, req).(*kmsg.DescribeClusterResponse); r.ErrorCode != kerr.MismatchedEndpointType.Code {
						t.Fatalf("v%d for controllers: %s", v, errName(r.ErrorCode))
					}
				}
			}
		})
	}
}

// DescribeLogDirs at every advertised version lists the broker's replicas
// in its log directory with their sizes.
func TestDescribeLogDirsEveryVersion(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, nil), nil)
			a.produce("t", 1, 7, "x", "y")
			a.run(2 * sim.Second)
			lo, hi := a.versions(35)
			for v := lo; v <= hi; v++ {
				req := kmsg.NewPtrDescribeLogDirsRequest()
				req.Version = v
				r := a.call(0, req).(*kmsg.DescribeLogDirsResponse)
				if len(r.Dirs) != 1 || r.Dirs[0].Dir != "/tmp/kafka-logs" || len(r.Dirs[0].Topics) != 1 || r.Dirs[0].Topics[0].Topic != "t" || len(r.Dirs[0].Topics[0].Partitions) != 3 {
					t.Fatalf("v%d all: %+v", v, r.Dirs)
				}
				if p1 := r.Dirs[0].Topics[0].Partitions[1]; p1.Partition != 1 || p1.Size <= 0 {
					t.Fatalf("v%d: t-1 %+v", v, p1)
				}
				req.Topics = []kmsg.DescribeLogDirsRequestTopic{{Topic: "t", Partitions: []int32{2}}}
				r = a.call(0, req).(*kmsg.DescribeLogDirsResponse)
				if len(r.Dirs[0].Topics) != 1 || len(r.Dirs[0].Topics[0].Partitions) != 1 || r.Dirs[0].Topics[0].Partitions[0].Partition != 2 {
					t.Fatalf("v%d filtered: %+v", v, r.Dirs)
				}
			}
		})
	}
}

// DescribeTransactions, ListTransactions and DescribeProducers of an
// ongoing transaction, in both modes.
func TestDescribeTransactionsAndProducers(t *testing.T) {
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			a := newAPICluster(t, modeProps(mode, map[string]string{"kafkasim.transactions": "true", "transaction.state.log.num.partitions": "1"}), nil)
			a.waitLeaders("__transaction_state", 1)
			id := "tx"
			coord := a.findCoordinator(id, 1, 3)
			ip := kmsg.NewPtrInitProducerIDRequest()
			ip.Version, ip.TransactionalID, ip.TransactionTimeoutMillis = 3, &id, 60000
			ir := a.retryTxn(coord, ip, func(r kmsg.Response) int16 { return r.(*kmsg.InitProducerIDResponse).ErrorCode }).(*kmsg.InitProducerIDResponse)
			pid, epoch := ir.ProducerID, ir.ProducerEpoch
			ap := kmsg.NewPtrAddPartitionsToTxnRequest()
			ap.Version, ap.TransactionalID, ap.ProducerID, ap.ProducerEpoch = 3, id, pid, epoch
			ap.Topics = []kmsg.AddPartitionsToTxnRequestTopic{{Topic: "t", Partitions: []int32{0}}}
			a.retryTxn(coord, ap, func(r kmsg.Response) int16 {
				return r.(*kmsg.AddPartitionsToTxnResponse).Topics[0].Partitions[0].ErrorCode
			})
			b := storage.NewBatch(0, []storage.Record{{Value: []byte("v")}})
			b.ProducerID, b.ProducerEpoch, b.BaseSequence = pid, epoch, 0
			b.Attributes |= storage.TransactionalFlagMask
			pr := kmsg.NewPtrProduceRequest()
			pr.Version, pr.Acks, pr.TimeoutMillis, pr.TransactionID = 7, -1, 10000, &id
			pr.Topics = []kmsg.ProduceRequestTopic{{Topic: "t", Partitions: []kmsg.ProduceRequestTopicPartition{{Partition: 0, Records: b.AppendTo(nil)}}}}
			if p := a.call(a.leader("t", 0), pr).(*kmsg.ProduceResponse).Topics[0].Partitions[0]; p.ErrorCode != 0 {
				t.Fatalf("Produce: %s", errName(p.ErrorCode))
			}

			dt := kmsg.NewPtrDescribeTransactionsRequest()
			dt.TransactionalIDs = []string{id, "unknown"}
			r := a.call(coord, dt).(*kmsg.DescribeTransactionsResponse)
			s := r.TransactionStates[0]
			if s.ErrorCode != 0 || s.State != "Ongoing" || s.ProducerID != pid || s.ProducerEpoch != epoch || s.TimeoutMillis != 60000 ||
				len(s.Topics) != 1 || s.Topics[0].Topic != "t" || !slices.Equal(s.Topics[0].Partitions, []int32{0}) {
				t.Fatalf("DescribeTransactions: %+v", s)
			}
			if r.TransactionStates[1].ErrorCode != kerr.TransactionalIDNotFound.Code {
				t.Errorf("unknown id: %s", errName(r.TransactionStates[1].ErrorCode))
			}
			if r := a.call((coord+1)%3, dt).(*kmsg.DescribeTransactionsResponse); r.TransactionStates[0].ErrorCode != kerr.NotCoordinator.Code {
				t.Errorf("not the coordinator: %s", errName(r.TransactionStates[0].ErrorCode))
			}

			lo, hi := a.versions(66)
			for v := lo; v <= hi; v++ {
				lt := kmsg.NewPtrListTransactionsRequest()
				lt.Version, lt.DurationFilterMillis = v, -1
				lt.StateFilters = []string{"Ongoing", "Nope"}
				r := a.call(coord, lt).(*kmsg.ListTransactionsResponse)
				if r.ErrorCode != 0 || len(r.TransactionStates) != 1 || r.TransactionStates[0].TransactionalID != id || r.TransactionStates[0].ProducerID != pid ||
					!slices.Equal(r.UnknownStateFilters, []string{"Nope"}) {
					t.Fatalf("ListTransactions v%d: %+v", v, r)
				}
				lt.StateFilters = []string{"CompleteCommit"}
				if r := a.call(coord, lt).(*kmsg.ListTransactionsResponse); len(r.TransactionStates) != 0 {
					t.Fatalf("v%d: filtered by state: %+v", v, r.TransactionStates)
				}
				lt.StateFilters, lt.ProducerIDFilters = nil, []int64{pid + 1}
				if r := a.call(coord, lt).(*kmsg.ListTransactionsResponse); len(r.TransactionStates) != 0 {
					t.Fatalf("v%d: filtered by producer id: %+v", v, r.TransactionStates)
				}
				if v >= 1 {
					lt.ProducerIDFilters, lt.DurationFilterMillis = nil, 3600000
					if r := a.call(coord, lt).(*kmsg.ListTransactionsResponse); len(r.TransactionStates) != 0 {
						t.Fatalf("v1: running less than an hour: %+v", r.TransactionStates)
					}
				}
			}

			dp := kmsg.NewPtrDescribeProducersRequest()
			dp.Topics = []kmsg.DescribeProducersRequestTopic{{Topic: "t", Partitions: []int32{0}}}
			l := a.leader("t", 0)
			rp := a.call(l, dp).(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0]
			if rp.ErrorCode != 0 || len(rp.ActiveProducers) != 1 || rp.ActiveProducers[0].ProducerID != pid || rp.ActiveProducers[0].ProducerEpoch != int32(epoch) ||
				rp.ActiveProducers[0].LastSequence != 0 || rp.ActiveProducers[0].CurrentTxnStartOffset != 0 {
				t.Fatalf("DescribeProducers: %s %+v", errName(rp.ErrorCode), rp.ActiveProducers)
			}
			if rp := a.call((l+1)%3, dp).(*kmsg.DescribeProducersResponse).Topics[0].Partitions[0]; rp.ErrorCode != kerr.NotLeaderForPartition.Code {
				t.Errorf("DescribeProducers on a follower: %s", errName(rp.ErrorCode))
			}
		})
	}
}
