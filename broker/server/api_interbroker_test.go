package server

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// wireCall sends req to broker `to` as a socket would (encoded and decoded
// at its version) and returns the response decoded at that version.
func (c *cluster) wireCall(to int, req kmsg.Request) kmsg.Response {
	c.t.Helper()
	fresh := kmsg.RequestForKey(req.Key())
	fresh.SetVersion(req.GetVersion())
	if err := fresh.ReadFrom(req.AppendTo(nil)); err != nil {
		c.t.Fatalf("%s v%d: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	var got kmsg.Response
	c.call(to, fresh, func(r kmsg.Response) { got = r })
	c.runUntil(kmsg.NameForKey(req.Key())+" answer", func() bool { return got != nil })
	out := req.ResponseKind()
	out.SetVersion(req.GetVersion())
	if got.GetVersion() != req.GetVersion() {
		c.t.Fatalf("%s v%d answered at v%d", kmsg.NameForKey(req.Key()), req.GetVersion(), got.GetVersion())
	}
	if err := out.ReadFrom(got.AppendTo(nil)); err != nil {
		c.t.Fatalf("%s v%d response: %v", kmsg.NameForKey(req.Key()), req.GetVersion(), err)
	}
	return out
}

// The ZooKeeper-mode inter-broker APIs at every advertised version, on a
// broker driven by hand (the test plays the controller): LeaderAndIsr
// makes it leader (Produce then succeeds), UpdateMetadata fills the cache
// Metadata answers from, StopReplica stops the replica; a stale
// controller epoch is refused at every version.
func TestInterBrokerAPIsEveryVersion(t *testing.T) {
	cfg := DefaultConfig(0)
	cfg.Release = config.V3_9
	lo, hi, _ := SupportedVersions(cfg, 4)
	for v := lo; v <= hi; v++ {
		c := newCluster(t, 1, nil)
		c.run(10 * sim.Millisecond)
		req := kmsg.NewPtrLeaderAndISRRequest()
		req.Version, req.ControllerEpoch = v, 2
		req.PartitionStates = []kmsg.LeaderAndISRRequestTopicPartition{{Topic: "t", Partition: 0, ControllerEpoch: 2, Leader: 0, LeaderEpoch: 1, ISR: []int32{0}, Replicas: []int32{0}}}
		if r := c.wireCall(0, req).(*kmsg.LeaderAndISRResponse); r.ErrorCode != 0 || len(r.Partitions) != 1 || r.Partitions[0].ErrorCode != 0 {
			t.Fatalf("LeaderAndIsr v%d: %+v", v, r)
		}
		c.expectAck("after LeaderAndIsr", c.produceAndWait(0, 1, "m", 10*sim.Millisecond), "ok@0")
		req.ControllerEpoch = 1
		if r := c.wireCall(0, req).(*kmsg.LeaderAndISRResponse); r.ErrorCode != kerr.StaleControllerEpoch.Code {
			t.Fatalf("LeaderAndIsr v%d, stale epoch: %d", v, r.ErrorCode)
		}
	}
	lo, hi, _ = SupportedVersions(cfg, 6)
	for v := lo; v <= hi; v++ {
		c := newCluster(t, 1, nil)
		c.run(10 * sim.Millisecond)
		req := kmsg.NewPtrUpdateMetadataRequest()
		req.Version, req.ControllerID, req.ControllerEpoch = v, 0, 2
		rack := "r1"
		req.LiveBrokers = []kmsg.UpdateMetadataRequestLiveBroker{{ID: 0, Host: "b0", Port: 9092, Rack: &rack,
			Endpoints: []kmsg.UpdateMetadataRequestLiveBrokerEndpoint{{Port: 9092, Host: "b0", SecurityProtocol: 0}}}}
		req.PartitionStates = []kmsg.UpdateMetadataRequestTopicPartition{{Topic: "t", Partition: 0, ControllerEpoch: 2, Leader: 0, LeaderEpoch: 1, ISR: []int32{0}, Replicas: []int32{0}}}
		if r := c.wireCall(0, req).(*kmsg.UpdateMetadataResponse); r.ErrorCode != 0 {
			t.Fatalf("UpdateMetadata v%d: %d", v, r.ErrorCode)
		}
		md := kmsg.NewPtrMetadataRequest()
		md.Version = 7
		r := c.wireCall(0, md).(*kmsg.MetadataResponse)
		if len(r.Brokers) != 1 || len(r.Topics) != 1 || r.Topics[0].Partitions[0].Leader != 0 || (v >= 2) != (r.Brokers[0].Rack != nil) {
			t.Fatalf("Metadata after UpdateMetadata v%d: %+v", v, r)
		}
		req.ControllerEpoch = 1
		if r := c.wireCall(0, req).(*kmsg.UpdateMetadataResponse); r.ErrorCode != kerr.StaleControllerEpoch.Code {
			t.Fatalf("UpdateMetadata v%d, stale epoch: %d", v, r.ErrorCode)
		}
	}
	lo, hi, _ = SupportedVersions(cfg, 5)
	for v := lo; v <= hi; v++ {
		c := newCluster(t, 1, nil)
		c.leaderAndISR(0, 0, 1, []int32{0}, []int32{0})
		c.run(10 * sim.Millisecond)
		req := kmsg.NewPtrStopReplicaRequest()
		req.Version, req.ControllerEpoch, req.DeletePartitions = v, 1, false
		req.Topics = []kmsg.StopReplicaRequestTopic{{Topic: "t", Partition: 0, Partitions: []int32{0}}}
		if r := c.wireCall(0, req).(*kmsg.StopReplicaResponse); r.ErrorCode != 0 || len(r.Partitions) != 1 {
			t.Fatalf("StopReplica v%d: %+v", v, r)
		}
		if got := *c.produceAndWait(0, 1, "m", 10*sim.Millisecond); got != "6" { // NOT_LEADER_OR_FOLLOWER
			t.Fatalf("Produce after StopReplica v%d: %s", v, got)
		}
	}
}
