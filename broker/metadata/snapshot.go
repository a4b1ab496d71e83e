package metadata

// This file writes the image as records, for KIP-630 snapshots: what
// Kafka's MetadataImage.write emits through the image writers (features
// first, metadata.version leading, so a reader knows the level before
// anything else; then brokers, topics with their partitions, configs and
// the producer-id block). Replaying them into NewImage() gives an equal
// image.

import (
	"slices"
	"sort"
)

// Records returns the image as records, in a fixed order.
func (i *Image) Records() []Record {
	var out []Record
	if l, ok := i.features[MetadataVersionFeature]; ok {
		out = append(out, &FeatureLevelRecord{Name: MetadataVersionFeature, FeatureLevel: l})
	}
	for _, n := range sortedKeys(i.features) {
		if n != MetadataVersionFeature {
			out = append(out, &FeatureLevelRecord{Name: n, FeatureLevel: i.features[n]})
		}
	}
	for _, id := range sortedKeys(i.brokers) {
		r := i.brokers[id].reg
		r.EndPoints, r.Features, r.LogDirs = slices.Clone(r.EndPoints), slices.Clone(r.Features), slices.Clone(r.LogDirs)
		out = append(out, &r)
	}
	for _, name := range i.TopicNames() {
		t := i.topics[i.byName[name]]
		out = append(out, &TopicRecord{Name: t.name, TopicID: t.id})
		for _, p := range sortedKeys(t.parts) {
			s := clonePartition(*t.parts[p])
			out = append(out, &PartitionRecord{
				PartitionID: s.Partition, TopicID: s.TopicID, Replicas: s.Replicas, ISR: s.ISR,
				RemovingReplicas: []int32{}, AddingReplicas: []int32{},
				Leader: s.Leader, LeaderRecoveryState: s.LeaderRecoveryState, LeaderEpoch: s.LeaderEpoch,
				PartitionEpoch: s.PartitionEpoch, Directories: s.Directories,
				EligibleLeaderReplicas: s.ELR, LastKnownELR: s.LastKnownELR,
			})
		}
	}
	keys := make([]configKey, 0, len(i.configs))
	for k := range i.configs {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(a, b int) bool {
		if keys[a].typ != keys[b].typ {
			return keys[a].typ < keys[b].typ
		}
		return keys[a].name < keys[b].name
	})
	for _, k := range keys {
		for _, n := range sortedKeys(i.configs[k]) {
			v := i.configs[k][n]
			out = append(out, &ConfigRecord{ResourceType: k.typ, ResourceName: k.name, Name: n, Value: &v})
		}
	}
	if i.nextProducerID > 0 {
		out = append(out, &ProducerIdsRecord{BrokerID: i.lastPIDBroker, BrokerEpoch: i.lastPIDEpoch, NextProducerID: i.nextProducerID})
	}
	return out
}

// Equal reports whether two images hold the same state (compared through
// their records, which are in a fixed order).
func (i *Image) Equal(o *Image) bool {
	a, b := i.Records(), o.Records()
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if string(Encode(a[k])) != string(Encode(b[k])) {
			return false
		}
	}
	return true
}
