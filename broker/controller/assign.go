package controller

// This file assigns a new topic's replicas to brokers the way Kafka's
// AdminUtils.assignReplicasToBrokers does (and the seeds describe): leaders
// round-robin over the brokers sorted by id from a start index, each
// partition's first follower on the next broker (shifted by
// nextReplicaShift, which grows every full round), later followers after
// it; with broker.rack set on every broker, over a rack-alternating broker
// list, skipping brokers whose rack already holds a replica of the
// partition until every rack has one.
//
// Kafka draws startIndex and nextReplicaShift at random; here they are
// parameters, so the caller decides (the seeds' example continues the
// round-robin across topics with both at the next broker).

import (
	"fmt"
	"sort"
)

// Broker is a broker's id and rack ("" when broker.rack is unset).
type Broker struct {
	ID   int32
	Rack string
}

// AssignReplicas returns the replica list of each of partitions partitions,
// preferred leader first.
func AssignReplicas(brokers []Broker, partitions, replicationFactor, startIndex, nextReplicaShift int) ([][]int32, error) {
	n := len(brokers)
	switch {
	case partitions <= 0:
		return nil, fmt.Errorf("number of partitions %d: must be > 0", partitions)
	case replicationFactor <= 0:
		return nil, fmt.Errorf("replication factor %d: must be > 0", replicationFactor)
	case replicationFactor > n:
		return nil, fmt.Errorf("replication factor %d: larger than the %d available brokers", replicationFactor, n)
	case startIndex < 0 || nextReplicaShift < 0:
		return nil, fmt.Errorf("start index %d and replica shift %d: must be >= 0", startIndex, nextReplicaShift)
	}
	sorted := append([]Broker(nil), brokers...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	racks := 0
	for _, b := range sorted {
		if b.Rack != "" {
			racks++
		}
	}
	switch {
	case racks == 0:
		return assignRackUnaware(sorted, partitions, replicationFactor, startIndex, nextReplicaShift), nil
	case racks == n:
		return assignRackAware(sorted, partitions, replicationFactor, startIndex, nextReplicaShift), nil
	}
	return nil, fmt.Errorf("broker.rack is set on %d of %d brokers: set it on all or none", racks, n)
}

func replicaIndex(first, shift, j, n int) int {
	return (first + 1 + (shift+j)%(n-1)) % n
}

func assignRackUnaware(brokers []Broker, partitions, rf, start, shift int) [][]int32 {
	n := len(brokers)
	out := make([][]int32, partitions)
	current := 0
	for p := 0; p < partitions; p++ {
		if current > 0 && current%n == 0 {
			shift++
		}
		first := (current + start) % n
		replicas := []int32{brokers[first].ID}
		for j := 0; j < rf-1; j++ {
			replicas = append(replicas, brokers[replicaIndex(first, shift, j, n)].ID)
		}
		out[p] = replicas
		current++
	}
	return out
}

// rackAlternated orders brokers so that consecutive ones are on different
// racks: racks sorted, the i-th broker of each rack in turn
// (AdminUtils.getRackAlternatedBrokerList).
func rackAlternated(brokers []Broker) []Broker {
	byRack := map[string][]Broker{}
	var racks []string
	for _, b := range brokers {
		if _, ok := byRack[b.Rack]; !ok {
			racks = append(racks, b.Rack)
		}
		byRack[b.Rack] = append(byRack[b.Rack], b)
	}
	sort.Strings(racks)
	var out []Broker
	for i := 0; len(out) < len(brokers); i++ {
		for _, r := range racks {
			if i < len(byRack[r]) {
				out = append(out, byRack[r][i])
			}
		}
	}
	return out
}

func assignRackAware(brokers []Broker, partitions, rf, start, shift int) [][]int32 {
	arranged := rackAlternated(brokers)
	n := len(arranged)
	numRacks := 0
	seen := map[string]bool{}
	for _, b := range arranged {
		if !seen[b.Rack] {
			seen[b.Rack] = true
			numRacks++
		}
	}
	out := make([][]int32, partitions)
	current := 0
	for p := 0; p < partitions; p++ {
		if current > 0 && current%n == 0 {
			shift++
		}
		first := (current + start) % n
		leader := arranged[first]
		replicas := []int32{leader.ID}
		racksWith := map[string]bool{leader.Rack: true}
		used := map[int32]bool{leader.ID: true}
		k := 0
		for j := 0; j < rf-1; j++ {
			done := false
			for !done {
				b := arranged[replicaIndex(first, shift*numRacks, k, n)]
				k++
				// Skip a broker whose rack has a replica (until every rack
				// has one) or that holds a replica already.
				if (!racksWith[b.Rack] || len(racksWith) == numRacks) && !used[b.ID] {
					replicas = append(replicas, b.ID)
					racksWith[b.Rack] = true
					used[b.ID] = true
					done = true
				}
			}
		}
		out[p] = replicas
		current++
	}
	return out
}
