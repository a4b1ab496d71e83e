// Package mutant is kafkasim's catalogue of planted bugs: switches, each
// off by default and NOT Kafka, that make one component make one real
// mistake (the HW advancing before the ISR fetched, a vote granted without
// the log check, a transaction marker skipped). `kafkasim mutants` turns
// each on in turn and measures how quickly the checkers find it: the
// detection power of the testbed, as FoundationDB's BUGGIFY and
// TigerBeetle's VOPR measure theirs.
//
// A mutant is set as the broker property kafkasim.mutant.NAME=true (-set,
// a -config file, a -grid axis); the cluster hands the Set to every
// component (server, storage, controllers, Raft, coordinators, clients),
// which asks Set.On at the one place its mistake lives. Nothing here
// imports another package: every layer may import it.
package mutant

import (
	"sort"
	"strings"
)

// Prefix is the property prefix of a mutant switch.
const Prefix = "kafkasim.mutant."

// ID names one mutant. IDs are stable within a build only: reports and
// files name mutants by Name.
type ID uint8

// Set is a set of mutants switched on. The zero value is none (Kafka).
type Set uint64

// On reports whether mutant id is switched on.
func (s Set) On(id ID) bool { return s&(1<<id) != 0 }

// With returns s with id switched on (or off).
func (s Set) With(id ID, on bool) Set {
	if on {
		return s | 1<<id
	}
	return s &^ (1 << id)
}

// Names returns the names of the mutants switched on, in catalogue order.
func (s Set) Names() []string {
	var out []string
	for _, m := range Catalogue {
		if s.On(m.ID) {
			out = append(out, m.Name)
		}
	}
	return out
}

// String renders s as its names joined by commas ("" for none).
func (s Set) String() string { return strings.Join(s.Names(), ",") }

// Layer is the part of the stack a mutant lives in.
type Layer string

// The layers.
const (
	Replication Layer = "replication"
	Controller  Layer = "controller"
	Raft        Layer = "raft"
	ELR         Layer = "kip-966"
	Txn         Layer = "transactions"
	Groups      Layer = "groups"
	Storage     Layer = "producer-storage"
	Client      Layer = "client"
)

// Target is one scenario and variant that can reach a mutant: where
// `kafkasim mutants` looks for it.
type Target struct {
	Scenario string
	Variant  string
}

// Mutant describes one planted bug.
type Mutant struct {
	ID    ID
	Name  string
	Layer Layer
	// Mistake says, in one line, the real mistake the mutant imitates.
	Mistake string
	// Where names the code that makes it (package and function).
	Where string
	// Targets are the scenarios that can reach it, swarms first.
	Targets []Target
	// Equivalent, when set, says why no observable behaviour changes
	// (an equivalent mutant): nothing can detect it, and the mutants run
	// does not count it against the goal.
	Equivalent string
}

// Property returns the mutant's switch, kafkasim.mutant.NAME.
func (m Mutant) Property() string { return Prefix + m.Name }

// ByName finds a mutant by name (without the prefix).
func ByName(name string) (Mutant, bool) {
	for _, m := range Catalogue {
		if m.Name == name {
			return m, true
		}
	}
	return Mutant{}, false
}

// Names lists every mutant's name, in catalogue order.
func Names() []string {
	out := make([]string, len(Catalogue))
	for i, m := range Catalogue {
		out[i] = m.Name
	}
	return out
}

// SortedNames lists every mutant's name, sorted.
func SortedNames() []string {
	out := Names()
	sort.Strings(out)
	return out
}
