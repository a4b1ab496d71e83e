package metadata

import (
	"reflect"
	"testing"
)

func replayAll(t *testing.T, img *Image, rs ...Record) {
	t.Helper()
	for _, r := range rs {
		if err := img.Replay(r); err != nil {
			t.Fatalf("replay %T: %v", r, err)
		}
	}
}

func TestImageReplay(t *testing.T) {
	img := NewImage()
	v := "2"
	replayAll(t, img,
		&FeatureLevelRecord{Name: MetadataVersionFeature, FeatureLevel: MetadataVersion40IV3},
		&RegisterBrokerRecord{BrokerID: 1, BrokerEpoch: 1, Fenced: true, Rack: "r1"},
		&RegisterBrokerRecord{BrokerID: 2, BrokerEpoch: 2, Fenced: true},
		&BrokerRegistrationChangeRecord{BrokerID: 1, BrokerEpoch: 1, Fenced: Unfence},
		&UnfenceBrokerRecord{ID: 2, Epoch: 2},
		&TopicRecord{Name: "t", TopicID: tid},
		&PartitionRecord{PartitionID: 0, TopicID: tid, Replicas: []int32{1, 2}, ISR: []int32{1, 2}, Leader: 1},
		&ConfigRecord{ResourceType: ResourceTopic, ResourceName: "t", Name: "min.insync.replicas", Value: &v},
		&ProducerIdsRecord{BrokerID: 1, BrokerEpoch: 1, NextProducerID: 1000},
	)
	ch := NewPartitionChangeRecord(tid, 0)
	ch.ISR = []int32{1}
	replayAll(t, img, ch)
	p, ok := img.Partition("t", 0)
	if !ok || !reflect.DeepEqual(p.ISR, []int32{1}) || p.LeaderEpoch != 0 || p.PartitionEpoch != 1 {
		t.Fatalf("after ISR shrink: %+v", p)
	}
	ch = NewPartitionChangeRecord(tid, 0)
	ch.Leader = NoLeader
	replayAll(t, img, ch)
	p, _ = img.Partition("t", 0)
	if p.Leader != -1 || p.LeaderEpoch != 1 || p.PartitionEpoch != 2 {
		t.Fatalf("after leader change: %+v", p)
	}
	if b, _ := img.Broker(1); b.Fenced || b.Rack != "r1" {
		t.Fatalf("broker 1: %+v", b)
	}
	if got, _ := img.Config(ResourceTopic, "t", "min.insync.replicas"); got != "2" {
		t.Fatalf("config %q", got)
	}
	if img.NextProducerID() != 1000 {
		t.Fatal(img.NextProducerID())
	}
	if topic, part, ok := PartitionOf(ch, img); !ok || topic != "t" || part != 0 {
		t.Fatal(topic, part, ok)
	}

	// Records() rebuilds an equal image, and survives encoding.
	again := NewImage()
	for _, r := range img.Records() {
		d, err := Decode(Encode(r))
		if err != nil {
			t.Fatal(err)
		}
		replayAll(t, again, d)
	}
	if !again.Equal(img) {
		t.Fatalf("snapshot image differs:\n%+v\n%+v", again.Partitions(), img.Partitions())
	}
	c := img.Clone()
	replayAll(t, c, &FenceBrokerRecord{ID: 1, Epoch: 1})
	if b, _ := img.Broker(1); b.Fenced {
		t.Fatal("Clone shares state")
	}
}

func TestImageReplayRejects(t *testing.T) {
	img := NewImage()
	replayAll(t, img, &RegisterBrokerRecord{BrokerID: 1, BrokerEpoch: 4}, &TopicRecord{Name: "t", TopicID: tid})
	bad := []Record{
		&PartitionRecord{TopicID: [16]byte{9}},
		NewPartitionChangeRecord(tid, 7),
		&TopicRecord{Name: "t", TopicID: [16]byte{9}},
		&FenceBrokerRecord{ID: 1, Epoch: 3},
		&BrokerRegistrationChangeRecord{BrokerID: 2, BrokerEpoch: 4},
		&RemoveTopicRecord{TopicID: [16]byte{9}},
	}
	for _, r := range bad {
		if err := img.Replay(r); err == nil {
			t.Errorf("%T %+v: no error", r, r)
		}
	}
}
