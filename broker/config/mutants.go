package config

// This file holds the planted-bug switches, kafkasim.mutant.NAME (package
// mutant): one boolean broker property per mutant, false by default. They
// are not Kafka: a run with one on is a test of the checkers, and every
// report's config line names it.

import (
	"strconv"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

func mutantProps() []property[Broker] {
	out := make([]property[Broker], 0, len(mutant.Catalogue))
	for _, m := range mutant.Catalogue {
		id := m.ID
		name := m.Property()
		out = append(out, property[Broker]{
			name: name,
			set: func(b *Broker, v string) error {
				var on bool
				// Parsed as every BOOLEAN property is.
				if err := boolProp(name, func(*bool) *bool { return &on }).set(nil, v); err != nil {
					return err
				}
				b.Mutants = b.Mutants.With(id, on)
				return nil
			},
			get:  func(b *Broker) string { return strconv.FormatBool(b.Mutants.On(id)) },
			same: func(a, b *Broker) bool { return a.Mutants.On(id) == b.Mutants.On(id) },
		})
	}
	return out
}
