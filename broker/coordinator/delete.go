package coordinator

// This file serves DeleteGroups (api key 42) and OffsetDelete (47), as
// Kafka 2.4+'s GroupCoordinator.handleDeleteGroups / handleDeleteOffsets
// (KIP-229, KIP-496): a group id the coordinator cannot serve gets
// INVALID_GROUP_ID, NOT_COORDINATOR or COORDINATOR_LOAD_IN_PROGRESS; an
// unknown group GROUP_ID_NOT_FOUND. DeleteGroups deletes an Empty group
// (it becomes Dead; its metadata and offsets get tombstones); one with
// members is NON_EMPTY_GROUP. OffsetDelete removes the offsets asked for
// from an Empty group; from a consumer group with members, those of
// topics its members do not subscribe to (the others are
// GROUP_SUBSCRIBED_TO_TOPIC); another group with members is
// NON_EMPTY_GROUP for the whole request. A group left Empty with no
// offsets is deleted too (GroupMetadataManager.cleanupGroupMetadata).
//
// As Kafka's cleanupGroupMetadata, the tombstones are appended without
// waiting for them to commit (its acks=0 append): the answer comes at
// once, and a coordinator that fails over before they commit loads the
// group again.

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// DeleteGroups answers a DeleteGroups request.
func (c *Coordinator) DeleteGroups(now sim.Time, req *kmsg.DeleteGroupsRequest) *kmsg.DeleteGroupsResponse {
	resp := req.ResponseKind().(*kmsg.DeleteGroupsResponse)
	for _, id := range req.Groups {
		rg := kmsg.DeleteGroupsResponseGroup{Group: id}
		rg.ErrorCode = errCode(c.deleteGroup(now, id))
		resp.Groups = append(resp.Groups, rg)
	}
	return resp
}

func (c *Coordinator) deleteGroup(now sim.Time, id string) *kerr.Error {
	if err := c.checkGroup(id); err != nil {
		return err
	}
	g := c.groups[id]
	switch {
	case g == nil || g.state == Dead:
		return kerr.GroupIDNotFound
	case g.state != Empty:
		return kerr.NonEmptyGroup
	}
	c.cleanup(now, g, g.offsetTPs())
	return nil
}

// OffsetDelete answers an OffsetDelete request; unknown reports the
// partitions of topics the cluster does not have (the broker answers them
// UNKNOWN_TOPIC_OR_PARTITION, as KafkaApis does before the coordinator).
func (c *Coordinator) OffsetDelete(now sim.Time, req *kmsg.OffsetDeleteRequest, unknown func(topic string) bool) *kmsg.OffsetDeleteResponse {
	resp := req.ResponseKind().(*kmsg.OffsetDeleteResponse)
	fail := func(err *kerr.Error) *kmsg.OffsetDeleteResponse {
		resp.ErrorCode = err.Code
		return resp
	}
	if err := c.checkGroup(req.Group); err != nil {
		return fail(err)
	}
	g := c.groups[req.Group]
	if g == nil || g.state == Dead {
		return fail(kerr.GroupIDNotFound)
	}
	var subscribed []string
	if g.state != Empty {
		if g.protocolType != "consumer" {
			return fail(kerr.NonEmptyGroup)
		}
		subscribed = g.subscribedTopics()
	}
	var eligible []TopicPartition
	for _, t := range req.Topics {
		rt := kmsg.OffsetDeleteResponseTopic{Topic: t.Topic}
		for _, p := range t.Partitions {
			rp := kmsg.OffsetDeleteResponseTopicPartition{Partition: p.Partition}
			switch {
			case unknown != nil && unknown(t.Topic):
				rp.ErrorCode = kerr.UnknownTopicOrPartition.Code
			case slices.Contains(subscribed, t.Topic):
				rp.ErrorCode = kerr.GroupSubscribedToTopic.Code
			default:
				eligible = append(eligible, TopicPartition{t.Topic, p.Partition})
			}
			rt.Partitions = append(rt.Partitions, rp)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(eligible) > 0 {
		c.cleanup(now, g, eligible)
	}
	return resp
}

// cleanup removes tps' offsets from g and appends their tombstones; a
// group left Empty without offsets is deleted with a tombstone of its
// metadata.
func (c *Coordinator) cleanup(now sim.Time, g *group, tps []TopicPartition) {
	var recs []storage.Record
	removed := 0
	for _, tp := range tps {
		if _, ok := g.offsets[tp]; !ok {
			continue
		}
		delete(g.offsets, tp)
		delete(g.offsetAt, tp)
		k := kmsg.NewOffsetCommitKey()
		k.Version, k.Group, k.Topic, k.Partition = 1, g.id, tp.Topic, tp.Partition
		recs = append(recs, storage.Record{Timestamp: ms(now), Key: k.AppendTo(nil)})
		removed++
	}
	deleted := g.state == Empty && len(g.offsets) == 0
	if deleted {
		g.state = Dead
		delete(c.groups, g.id)
		recs = append(recs, GroupRecord(g.id, nil, ms(now)))
	}
	c.env.Log("group-cleanup", sim.S("group", g.id), sim.I("offsets-removed", int64(removed)), sim.S("deleted", map[bool]string{false: "false", true: "true"}[deleted]))
	if len(recs) == 0 {
		return
	}
	c.nextAppend(g.partition)
	c.env.Append(g.partition, recs, func(sim.Time, *kerr.Error) {})
}

// offsetTPs returns the partitions g has offsets for, sorted.
func (g *group) offsetTPs() []TopicPartition {
	out := make([]TopicPartition, 0, len(g.offsets))
	for tp := range g.offsets {
		out = append(out, tp)
	}
	slices.SortFunc(out, func(a, b TopicPartition) int {
		if a.Topic != b.Topic {
			if a.Topic < b.Topic {
				return -1
			}
			return 1
		}
		return int(a.Partition - b.Partition)
	})
	return out
}

// subscribedTopics returns the topics the members of a consumer group
// subscribe to under its protocol (ConsumerProtocol subscriptions), sorted.
func (g *group) subscribedTopics() []string {
	var out []string
	for _, id := range g.memberIDs() {
		var meta kmsg.ConsumerMemberMetadata
		if err := meta.ReadFrom(g.members[id].metadataFor(g.protocol)); err != nil {
			continue
		}
		for _, t := range meta.Topics {
			if !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	slices.Sort(out)
	return out
}
