package workload

// This file is an exploration's parameters (its bound and alphabet, as a
// choice file records them) and the clusters it can enumerate.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"
)

// ExploreParams are the bounds and the alphabet of an exploration.
type ExploreParams struct {
	// Depth is the number of actions per run (>= 1).
	Depth int
	// Records is how many records the workload may produce (m1..mN).
	Records int
	// Faults are the fault actions allowed: crash, power-loss, elect,
	// unclean, partition; on a KRaft cluster with a dynamic quorum also
	// reconfig (explore_reconfig.go). restart and notify come with
	// crash/power-loss and elect.
	Faults []string
	// Acks is the producer's acks: all (default), 1 or 0.
	Acks string
	// kraft is set by ValidateKRaft while it calls Validate: reconfig is
	// a KRaft fault only.
	kraft bool
}

// FaultNames are the fault actions an exploration can allow.
var FaultNames = []string{"crash", "power-loss", "elect", "unclean", "partition", "reconfig"}

// DefaultFaults are the faults explored when none are given: those of the
// TLA+ models (a crash keeps the page cache; an election is clean).
var DefaultFaults = []string{"crash", "elect"}

// Validate checks the parameters and fills the defaults.
func (p *ExploreParams) Validate() error {
	if p.Depth < 1 {
		return fmt.Errorf("depth %d: must be at least 1 (the number of actions per run)", p.Depth)
	}
	if p.Depth > 64 {
		return fmt.Errorf("depth %d: at most 64", p.Depth)
	}
	if p.Records < 0 || p.Records > 9 {
		return fmt.Errorf("records %d: want 0..9", p.Records)
	}
	if len(p.Faults) == 0 {
		p.Faults = DefaultFaults
	}
	for _, f := range p.Faults {
		if !slices.Contains(FaultNames, f) {
			return fmt.Errorf("fault %q: allowed %s", f, strings.Join(FaultNames, ", "))
		}
		if f == "reconfig" && !p.kraft {
			return fmt.Errorf("fault %q: KIP-853's voter changes need a KRaft cluster with a dynamic quorum (kafkasim.kraft.version=1); allowed here crash, power-loss, elect, unclean, partition", f)
		}
	}
	switch p.Acks {
	case "":
		p.Acks = "all"
	case "all", "-1", "1", "0":
	default:
		return fmt.Errorf("acks %q: allowed all, 1, 0", p.Acks)
	}
	return nil
}

// String renders the parameters as the choice file and the state file
// record them.
func (p ExploreParams) String() string {
	return fmt.Sprintf("depth=%d records=%d faults=%s acks=%s", p.Depth, p.Records, strings.Join(p.Faults, ","), p.Acks)
}

// ParseExploreParams is the inverse of ExploreParams.String.
func ParseExploreParams(s string) (ExploreParams, error) {
	var p ExploreParams
	for _, f := range strings.Fields(s) {
		k, v, _ := strings.Cut(f, "=")
		var err error
		switch k {
		case "depth":
			p.Depth, err = strconv.Atoi(v)
		case "records":
			p.Records, err = strconv.Atoi(v)
		case "faults":
			p.Faults = strings.Split(v, ",")
		case "acks":
			p.Acks = v
		default:
			err = fmt.Errorf("unknown parameter %q", k)
		}
		if err != nil {
			return p, fmt.Errorf("explore parameters %q: %v", s, err)
		}
	}
	return p, p.Validate()
}

// CheckExplorable reports whether the script's cluster is small enough to
// enumerate: 2 or 3 brokers, at most 3 dedicated KRaft controllers. A
// script with more than one partition is explored on the first partition
// of its first topic (OnePartition), in either mode, and explore says so
// (Partitions): the explorer enumerates one partition's states (and, on
// KRaft, the quorum's).
func CheckExplorable(s *scenarios.Script, kraft bool) error {
	switch {
	case s.Brokers < 2 || s.Brokers > 3:
		return fmt.Errorf("scenario %s has %d brokers: the explorer enumerates clusters of 2 or 3", s.Name, s.Brokers)
	case s.Controllers > 3:
		return fmt.Errorf("scenario %s has %d controllers: the explorer enumerates quorums of up to 3", s.Name, s.Controllers)
	}
	return nil
}

// Partitions counts the script's partitions, over every topic.
func Partitions(s *scenarios.Script) int {
	n := 0
	for _, t := range s.Topics {
		n += t.Partitions
	}
	return n
}

// OnePartition returns the script with only the first partition of its
// first topic (the script itself when it has just that): what a KRaft
// exploration builds.
func OnePartition(s *scenarios.Script) *scenarios.Script {
	if len(s.Topics) == 1 && s.Topics[0].Partitions == 1 {
		return s
	}
	c := *s
	t := s.Topics[0]
	t.Partitions = 1
	if t.Assignment != nil {
		t.Assignment = t.Assignment[:1]
	}
	c.Topics = []scenarios.TopicSpec{t}
	return &c
}
