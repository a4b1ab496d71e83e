package metadata

// This file is the metadata image: the state that replaying committed
// records builds, on the controller and on every broker (Kafka's
// MetadataImage / MetadataDelta, and the replay methods of
// ClusterControlManager, ReplicationControlManager,
// ConfigurationControlManager, FeatureControlManager and
// ProducerIdControlManager).
//
// Simplified: one image, replayed in place (Kafka builds an immutable image
// from deltas); Clone gives a copy. Directory assignments (KIP-858),
// reassignment (adding/removing replicas) and delegation tokens, quotas,
// ACLs and SCRAM are kept only as far as the records above carry them.
//
// Invariant: no decision or output depends on Go's map order; every list
// the image returns is sorted.

import (
	"fmt"
	"slices"

	"github.com/kafkasim/kafkasim/broker/mutant"
	"sort"
)

// PartitionState is a partition's registration.
type PartitionState struct {
	Topic                               string
	TopicID                             [16]byte
	Partition                           int32
	Replicas, ISR, ELR, LastKnownELR    []int32
	Leader, LeaderEpoch, PartitionEpoch int32
	LeaderRecoveryState                 int8
	// Directories are the replicas' log directories (KIP-858).
	Directories [][16]byte
}

// BrokerState is a broker's registration.
type BrokerState struct {
	ID                           int32
	Epoch                        int64
	IncarnationID                [16]byte
	Rack                         string
	Fenced, InControlledShutdown bool
}

type broker struct {
	reg RegisterBrokerRecord // as registered, Fenced/InControlledShutdown kept current
}

type topic struct {
	name  string
	id    [16]byte
	parts map[int32]*PartitionState
}

type configKey struct {
	typ  int8
	name string
}

// Image is the metadata image. The zero value is not ready: use NewImage.
type Image struct {
	brokers        map[int32]*broker
	topics         map[[16]byte]*topic
	byName         map[string][16]byte
	configs        map[configKey]map[string]string
	features       map[string]int16
	nextProducerID int64
	lastPIDBroker  int32
	lastPIDEpoch   int64
	// mutants are the planted bugs the replay makes (SetMutants).
	mutants mutant.Set
}

// SetMutants switches on the planted bugs of the replay (package mutant;
// none is Kafka). Clone keeps them.
func (i *Image) SetMutants(s mutant.Set) { i.mutants = s }

// NewImage returns the empty image.
func NewImage() *Image {
	return &Image{
		brokers:  map[int32]*broker{},
		topics:   map[[16]byte]*topic{},
		byName:   map[string][16]byte{},
		configs:  map[configKey]map[string]string{},
		features: map[string]int16{},
	}
}

// Replay applies one committed record. It returns an error, and changes
// nothing, for a record that does not fit the image (an unknown broker,
// topic or partition, a duplicate topic, a stale broker epoch).
func (i *Image) Replay(r Record) error {
	switch x := r.(type) {
	case *RegisterBrokerRecord:
		c := *x
		c.EndPoints = slices.Clone(x.EndPoints)
		c.Features = slices.Clone(x.Features)
		c.LogDirs = slices.Clone(x.LogDirs)
		i.brokers[x.BrokerID] = &broker{reg: c}
	case *UnregisterBrokerRecord:
		b, err := i.broker(x.BrokerID, x.BrokerEpoch)
		if err != nil {
			return err
		}
		delete(i.brokers, b.reg.BrokerID)
	case *FenceBrokerRecord:
		b, err := i.broker(x.ID, x.Epoch)
		if err != nil {
			return err
		}
		b.reg.Fenced = true
	case *UnfenceBrokerRecord:
		b, err := i.broker(x.ID, x.Epoch)
		if err != nil {
			return err
		}
		b.reg.Fenced = false
	case *BrokerRegistrationChangeRecord:
		b, err := i.broker(x.BrokerID, x.BrokerEpoch)
		if err != nil {
			return err
		}
		if x.Fenced < Unfence || x.Fenced > Fence || (x.InControlledShutdown != NoChange && x.InControlledShutdown != InControlledShutdownChange) {
			return fmt.Errorf("metadata: BrokerRegistrationChangeRecord for broker %d: bad fenced %d / in-controlled-shutdown %d", x.BrokerID, x.Fenced, x.InControlledShutdown)
		}
		switch x.Fenced {
		case Fence:
			b.reg.Fenced = true
		case Unfence:
			b.reg.Fenced = false
		}
		if x.InControlledShutdown == InControlledShutdownChange {
			b.reg.InControlledShutdown = true
		}
		if len(x.LogDirs) > 0 {
			b.reg.LogDirs = slices.Clone(x.LogDirs)
		}
	case *TopicRecord:
		if _, ok := i.byName[x.Name]; ok {
			return fmt.Errorf("metadata: TopicRecord: topic %q exists", x.Name)
		}
		if _, ok := i.topics[x.TopicID]; ok {
			return fmt.Errorf("metadata: TopicRecord %q: topic id %x is taken", x.Name, x.TopicID)
		}
		i.topics[x.TopicID] = &topic{name: x.Name, id: x.TopicID, parts: map[int32]*PartitionState{}}
		i.byName[x.Name] = x.TopicID
	case *RemoveTopicRecord:
		t, ok := i.topics[x.TopicID]
		if !ok {
			return fmt.Errorf("metadata: RemoveTopicRecord: unknown topic id %x", x.TopicID)
		}
		delete(i.topics, x.TopicID)
		delete(i.byName, t.name)
		delete(i.configs, configKey{ResourceTopic, t.name})
	case *PartitionRecord:
		t, ok := i.topics[x.TopicID]
		if !ok {
			return fmt.Errorf("metadata: PartitionRecord %d: unknown topic id %x", x.PartitionID, x.TopicID)
		}
		t.parts[x.PartitionID] = &PartitionState{
			Topic: t.name, TopicID: t.id, Partition: x.PartitionID,
			Replicas: slices.Clone(x.Replicas), ISR: slices.Clone(x.ISR),
			ELR: slices.Clone(x.EligibleLeaderReplicas), LastKnownELR: slices.Clone(x.LastKnownELR),
			Leader: x.Leader, LeaderEpoch: x.LeaderEpoch, PartitionEpoch: x.PartitionEpoch,
			LeaderRecoveryState: x.LeaderRecoveryState, Directories: slices.Clone(x.Directories),
		}
	case *PartitionChangeRecord:
		t, ok := i.topics[x.TopicID]
		if !ok {
			return fmt.Errorf("metadata: PartitionChangeRecord %d: unknown topic id %x", x.PartitionID, x.TopicID)
		}
		p, ok := t.parts[x.PartitionID]
		if !ok {
			return fmt.Errorf("metadata: PartitionChangeRecord: unknown partition %s-%d", t.name, x.PartitionID)
		}
		if x.Leader >= 0 && x.Leader != p.Leader && i.mutants.On(mutant.LeaderEpochNotBumped) {
			// Mutant leader-epoch-not-bumped: a new leader keeps the
			// partition's leader epoch.
			epoch := p.LeaderEpoch
			Merge(p, x)
			p.LeaderEpoch = epoch
			break
		}
		Merge(p, x)
	case *ConfigRecord:
		k := configKey{x.ResourceType, x.ResourceName}
		if x.Value == nil {
			delete(i.configs[k], x.Name)
			if len(i.configs[k]) == 0 {
				delete(i.configs, k)
			}
			break
		}
		if i.configs[k] == nil {
			i.configs[k] = map[string]string{}
		}
		i.configs[k][x.Name] = *x.Value
	case *FeatureLevelRecord:
		if x.FeatureLevel == 0 {
			delete(i.features, x.Name)
		} else {
			i.features[x.Name] = x.FeatureLevel
		}
	case *ProducerIdsRecord:
		if x.NextProducerID <= i.nextProducerID {
			return fmt.Errorf("metadata: ProducerIdsRecord: next producer id %d is not above %d", x.NextProducerID, i.nextProducerID)
		}
		i.nextProducerID, i.lastPIDBroker, i.lastPIDEpoch = x.NextProducerID, x.BrokerID, x.BrokerEpoch
	case *NoOpRecord:
	default:
		return fmt.Errorf("metadata: cannot replay %T", r)
	}
	return nil
}

// Merge applies a change to a partition as PartitionRegistration.merge
// does: nil fields are unchanged; a leader change (even to the same
// leader) bumps the leader epoch; every change bumps the partition epoch.
func Merge(p *PartitionState, x *PartitionChangeRecord) {
	if x.Replicas != nil {
		p.Replicas = slices.Clone(x.Replicas)
	}
	if x.Directories != nil {
		p.Directories = slices.Clone(x.Directories)
	}
	if x.ISR != nil {
		p.ISR = slices.Clone(x.ISR)
	}
	if x.Leader != NoLeaderChange {
		p.Leader = x.Leader
		p.LeaderEpoch++
	}
	if x.LeaderRecoveryState != LeaderRecoveryNoChange {
		p.LeaderRecoveryState = x.LeaderRecoveryState
	}
	if x.EligibleLeaderReplicas != nil {
		p.ELR = slices.Clone(x.EligibleLeaderReplicas)
	}
	if x.LastKnownELR != nil {
		p.LastKnownELR = slices.Clone(x.LastKnownELR)
	}
	p.PartitionEpoch++
}

func (i *Image) broker(id int32, epoch int64) (*broker, error) {
	b, ok := i.brokers[id]
	if !ok {
		return nil, fmt.Errorf("metadata: unknown broker %d", id)
	}
	if b.reg.BrokerEpoch != epoch {
		return nil, fmt.Errorf("metadata: broker %d has epoch %d, not %d", id, b.reg.BrokerEpoch, epoch)
	}
	return b, nil
}

// Clone returns a deep copy.
func (i *Image) Clone() *Image {
	c := NewImage()
	c.mutants = i.mutants
	for id, b := range i.brokers {
		r := b.reg
		r.EndPoints, r.Features, r.LogDirs = slices.Clone(r.EndPoints), slices.Clone(r.Features), slices.Clone(r.LogDirs)
		c.brokers[id] = &broker{reg: r}
	}
	for id, t := range i.topics {
		nt := &topic{name: t.name, id: t.id, parts: map[int32]*PartitionState{}}
		for p, s := range t.parts {
			cp := clonePartition(*s)
			nt.parts[p] = &cp
		}
		c.topics[id] = nt
		c.byName[t.name] = id
	}
	for k, m := range i.configs {
		nm := make(map[string]string, len(m))
		for n, v := range m {
			nm[n] = v
		}
		c.configs[k] = nm
	}
	for n, l := range i.features {
		c.features[n] = l
	}
	c.nextProducerID, c.lastPIDBroker, c.lastPIDEpoch = i.nextProducerID, i.lastPIDBroker, i.lastPIDEpoch
	return c
}

func clonePartition(s PartitionState) PartitionState {
	s.Replicas, s.ISR, s.ELR, s.LastKnownELR = slices.Clone(s.Replicas), slices.Clone(s.ISR), slices.Clone(s.ELR), slices.Clone(s.LastKnownELR)
	s.Directories = slices.Clone(s.Directories)
	return s
}

// Partition returns a copy of a partition's state.
func (i *Image) Partition(topic string, p int32) (PartitionState, bool) {
	id, ok := i.byName[topic]
	if !ok {
		return PartitionState{}, false
	}
	s, ok := i.topics[id].parts[p]
	if !ok {
		return PartitionState{}, false
	}
	return clonePartition(*s), true
}

// HasLeaderless reports whether some partition has no leader, without
// copying the partitions (ReplicationControlManager's
// areSomePartitionsLeaderless). NB: the maps' order cannot reach the
// answer: it is whether any partition qualifies.
func (i *Image) HasLeaderless() bool {
	for _, t := range i.topics {
		for _, p := range t.parts {
			if p.Leader == NoLeader {
				return true
			}
		}
	}
	return false
}

// Partitions returns every partition, sorted by topic, partition.
func (i *Image) Partitions() []PartitionState {
	var out []PartitionState
	for _, name := range i.TopicNames() {
		t := i.topics[i.byName[name]]
		for _, p := range sortedKeys(t.parts) {
			out = append(out, clonePartition(*t.parts[p]))
		}
	}
	return out
}

// TopicNames returns the topics' names, sorted.
func (i *Image) TopicNames() []string {
	names := make([]string, 0, len(i.byName))
	for n := range i.byName {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// NumPartitions returns how many partitions a topic has (0 if unknown).
func (i *Image) NumPartitions(topic string) int {
	id, ok := i.byName[topic]
	if !ok {
		return 0
	}
	return len(i.topics[id].parts)
}

// TopicName returns the name of the topic with that id.
func (i *Image) TopicName(id [16]byte) (string, bool) {
	t, ok := i.topics[id]
	if !ok {
		return "", false
	}
	return t.name, true
}

// TopicID returns the id of the named topic.
func (i *Image) TopicID(name string) ([16]byte, bool) {
	id, ok := i.byName[name]
	return id, ok
}

// Broker returns a broker's registration.
func (i *Image) Broker(id int32) (BrokerState, bool) {
	b, ok := i.brokers[id]
	if !ok {
		return BrokerState{}, false
	}
	return b.state(), true
}

func (b *broker) state() BrokerState {
	return BrokerState{ID: b.reg.BrokerID, Epoch: b.reg.BrokerEpoch, IncarnationID: b.reg.IncarnationID, Rack: b.reg.Rack, Fenced: b.reg.Fenced, InControlledShutdown: b.reg.InControlledShutdown}
}

// Brokers returns every registered broker, sorted by id.
func (i *Image) Brokers() []BrokerState {
	out := make([]BrokerState, 0, len(i.brokers))
	for _, id := range sortedKeys(i.brokers) {
		out = append(out, i.brokers[id].state())
	}
	return out
}

// Endpoints returns a broker's endpoints as registered.
func (i *Image) Endpoints(id int32) []BrokerEndpoint {
	b, ok := i.brokers[id]
	if !ok {
		return nil
	}
	return slices.Clone(b.reg.EndPoints)
}

// Config returns a config value of a resource (ResourceTopic, ResourceBroker).
func (i *Image) Config(resourceType int8, resource, key string) (string, bool) {
	v, ok := i.configs[configKey{resourceType, resource}][key]
	return v, ok
}

// ConfigNames returns the names of a resource's configs, sorted.
func (i *Image) ConfigNames(resourceType int8, resource string) []string {
	return sortedKeys(i.configs[configKey{resourceType, resource}])
}

// Feature returns a finalized feature's level (0 if not finalized).
func (i *Image) Feature(name string) int16 { return i.features[name] }

// NextProducerID returns the first producer id not yet handed out.
func (i *Image) NextProducerID() int64 { return i.nextProducerID }

// PartitionOf returns which partition a PartitionRecord or
// PartitionChangeRecord touches, naming the topic through img.
func PartitionOf(r Record, img *Image) (topic string, partition int32, ok bool) {
	var id [16]byte
	switch x := r.(type) {
	case *PartitionRecord:
		id, partition = x.TopicID, x.PartitionID
	case *PartitionChangeRecord:
		id, partition = x.TopicID, x.PartitionID
	default:
		return "", 0, false
	}
	topic, ok = img.TopicName(id)
	return topic, partition, ok
}

func sortedKeys[K int32 | string, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
