package assignor

// This file holds the server-side assignors of the consumer group protocol
// (KIP-848, Kafka 4.0+), run by the group coordinator rather than by a
// group leader: their shared types (ServerMember, ServerTopic, TopicID)
// and the uniform assignor (Kafka's UniformAssignor, group.consumer.assignors'
// default), which dispatches on the subscription type as Kafka does:
// every member subscribed to the same topics (HOMOGENEOUS) takes
// UniformHomogeneousAssignmentBuilder, here uniformHomogeneous; otherwise
// UniformHeterogeneousAssignmentBuilder (uniform_hetero.go).
//
// Simplifications: members iterate in the order given (the coordinator
// sorts them by member id; Kafka's GroupSpecImpl iterates a HashMap, and
// its own tests sort them with a TreeMap, as here). Partitions of one topic
// iterate ascending (a HashSet<Integer> of fewer than 16 partitions does
// too; past that Java's order is by bucket). The topics of a member's
// current assignment iterate in the order given. No rack awareness.

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"slices"
)

// TopicID is a topic's Uuid (org.apache.kafka.common.Uuid): KRaft gives
// every topic one. The homogeneous uniform assignor's result depends on
// the Java HashSet order of the subscribed topics' ids.
type TopicID [16]byte

// ParseTopicID decodes Uuid.toString's form: 22 characters of URL-safe
// base64 without padding.
func ParseTopicID(s string) (TopicID, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return TopicID{}, fmt.Errorf("topic id %q: want 22 characters of URL-safe base64 (16 bytes)", s)
	}
	return TopicID(b), nil
}

func (id TopicID) String() string { return base64.RawURLEncoding.EncodeToString(id[:]) }

func (id TopicID) msb() int64 { return int64(binary.BigEndian.Uint64(id[:8])) }
func (id TopicID) lsb() int64 { return int64(binary.BigEndian.Uint64(id[8:])) }

// javaHash is Uuid.hashCode: the high and low words of msb ^ lsb, xored.
func (id TopicID) javaHash() int32 {
	h := id.msb() ^ id.lsb()
	return int32(h>>32) ^ int32(h)
}

// CompareTopicIDs is Uuid.compareTo: the most significant 64 bits as a
// signed long, then the least significant.
func CompareTopicIDs(a, b TopicID) int {
	switch {
	case a.msb() < b.msb():
		return -1
	case a.msb() > b.msb():
		return 1
	case a.lsb() < b.lsb():
		return -1
	case a.lsb() > b.lsb():
		return 1
	}
	return 0
}

// ServerTopic is a topic as the coordinator's metadata image describes it.
type ServerTopic struct {
	Name       string
	ID         TopicID
	Partitions int32
}

// ServerMember is a consumer group member as a server-side assignor sees
// it: its subscribed topics (names, already resolved from any regular
// expression) and its current target assignment.
type ServerMember struct {
	ID string
	// InstanceID is group.instance.id; "" for a dynamic member. The range
	// assignor orders static members first, by instance id.
	InstanceID string
	Topics     []string
	// Assigned is the member's target assignment of the previous epoch,
	// grouped by topic in iteration order.
	Assigned []TopicPartition
}

// ServerAssignor is a server-side assignor (ConsumerGroupPartitionAssignor).
// Assign returns the new target assignment: each member given appears,
// except that the uniform assignor answers an empty result when no member
// subscribes to anything. A member subscribed to a topic missing from
// topics is an error (PartitionAssignorException).
type ServerAssignor interface {
	Name() string
	Assign(members []ServerMember, topics []ServerTopic) (Assignment, error)
}

// ServerAssignorByName returns the server-side assignor named by
// group.consumer.assignors / ConsumerGroupHeartbeat's ServerAssignor.
func ServerAssignorByName(name string) (ServerAssignor, error) {
	switch name {
	case "uniform":
		return Uniform{}, nil
	case "range":
		return ServerRange{}, nil
	}
	return nil, fmt.Errorf("server assignor %q: unknown (allowed: uniform, range)", name)
}

// Homogeneous reports whether every member subscribes to the same topics
// (Kafka's SubscriptionType.HOMOGENEOUS: each subscribed topic is
// subscribed by every member).
func Homogeneous(members []ServerMember) bool {
	count := map[string]int{}
	for _, m := range members {
		seen := map[string]bool{}
		for _, t := range m.Topics {
			if !seen[t] {
				seen[t] = true
				count[t]++
			}
		}
	}
	for _, n := range count { // NB: an all-of check, map order does not matter
		if n != len(members) {
			return false
		}
	}
	return true
}

// Uniform is Kafka's UniformAssignor ("uniform"), the default.
type Uniform struct{}

// Name implements ServerAssignor.
func (Uniform) Name() string { return "uniform" }

// Assign implements ServerAssignor.
func (Uniform) Assign(members []ServerMember, topics []ServerTopic) (Assignment, error) {
	if len(members) == 0 {
		return Assignment{}, nil
	}
	byName := map[string]ServerTopic{}
	for _, t := range topics {
		byName[t.Name] = t
	}
	for _, m := range members {
		for _, t := range m.Topics {
			if _, ok := byName[t]; !ok {
				return nil, fmt.Errorf("uniform: member %s subscribes to topic %q which doesn't exist in the topic metadata", m.ID, t)
			}
		}
	}
	if Homogeneous(members) {
		return uniformHomogeneous(members, byName), nil
	}
	return uniformHeterogeneous(members, byName), nil
}

// javaHashSetOrder returns the topics in the order a HashSet<Uuid> built
// with new HashSet<>(collection) iterates them: by bucket of a table sized
// for the collection, then in insertion order (here: by name).
func javaHashSetOrder(names []string, byName map[string]ServerTopic) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	out = slices.Compact(out)
	n := 16
	for n < int(float32(len(out))/0.75)+1 {
		n *= 2
	}
	slices.SortStableFunc(out, func(a, b string) int {
		return javaBucket(byName[a].ID.javaHash(), n) - javaBucket(byName[b].ID.javaHash(), n)
	})
	return out
}

// byTopic groups a member's assignment by topic, in first-appearance order.
func byTopic(tps []TopicPartition) (order []string, parts map[string][]int32) {
	parts = map[string][]int32{}
	for _, tp := range tps {
		if _, ok := parts[tp.Topic]; !ok {
			order = append(order, tp.Topic)
		}
		parts[tp.Topic] = append(parts[tp.Topic], tp.Partition)
	}
	for _, t := range order {
		slices.Sort(parts[t])
	}
	return order, parts
}

// uniformHomogeneous is UniformHomogeneousAssignmentBuilder: every member
// gets total/members partitions, the first total%members of them (in member
// order) one more; a member keeps what it has up to its quota, and the
// partitions nobody keeps go, in topic order, to the members below quota.
func uniformHomogeneous(members []ServerMember, byName map[string]ServerTopic) Assignment {
	subscribed := javaHashSetOrder(members[0].Topics, byName)
	if len(subscribed) == 0 {
		return Assignment{}
	}
	owned := map[TopicPartition]bool{}
	for _, m := range members {
		for _, tp := range m.Assigned {
			owned[tp] = true
		}
	}
	var unassigned []TopicPartition
	total := 0
	for _, t := range subscribed {
		n := int(byName[t].Partitions)
		for p := 0; p < n; p++ {
			if tp := (TopicPartition{t, int32(p)}); !owned[tp] {
				unassigned = append(unassigned, tp)
			}
		}
		total += n
	}
	minQuota, extra := total/len(members), total%len(members)
	type unfilled struct {
		id    string
		quota int
	}
	var below []unfilled
	out := Assignment{}
	for _, m := range members {
		quota := minQuota
		if extra > 0 {
			quota++
			extra--
		}
		kept := []TopicPartition{}
		order, parts := byTopic(m.Assigned)
		for _, t := range order {
			if !slices.Contains(subscribed, t) {
				continue
			}
			ps := parts[t]
			if len(ps) <= quota {
				quota -= len(ps)
				for _, p := range ps {
					kept = append(kept, TopicPartition{t, p})
				}
				continue
			}
			for _, p := range ps {
				if quota > 0 {
					quota--
					kept = append(kept, TopicPartition{t, p})
				} else {
					unassigned = append(unassigned, TopicPartition{t, p})
				}
			}
		}
		if quota > 0 {
			below = append(below, unfilled{m.ID, quota})
		}
		out[m.ID] = kept
	}
	i := 0
	for _, u := range below {
		for q := 0; q < u.quota && i < len(unassigned); q++ {
			out[u.id] = append(out[u.id], unassigned[i])
			i++
		}
	}
	if i < len(unassigned) {
		// Kafka throws "Partitions were left unassigned"; the quotas add up
		// to the total, so this cannot happen.
		panic(fmt.Sprintf("uniform: %d partitions left unassigned", len(unassigned)-i))
	}
	return out.sort()
}
