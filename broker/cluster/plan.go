package cluster

// This file prepares a cluster once for the many worlds it is built in.
// An exploration builds the same cluster for every one of its thousands of
// short runs; checking the spec and resolving each broker's server
// configuration cost as much as a tenth of such a run, and give the same
// answer every time.

import (
	"fmt"
	"maps"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/controller"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/sim"
)

// Plan is a Spec checked (Spec.Validate) with each node's server
// configuration resolved and checked, ready to be built in any number of
// worlds (Plan.Build).
//
// Invariant: a Plan is never changed after NewPlan, and what it hands to
// a world (the configurations, shared by every world built from it) is
// only read by the nodes, so one Plan serves worlds built and run at once
// on several goroutines.
type Plan struct {
	spec    Spec
	members []controller.Broker // the brokers as the replica assignment sees them
	configs []server.Config     // each broker's (Cluster.BrokerConfig)
	brokers []func() sim.Node   // each broker's node, from its configuration
	// voters are the KRaft voters; controllers the dedicated controller
	// nodes' factories (KRaft mode only).
	voters      []int32
	controllers []func() sim.Node
}

// NewPlan checks spec and resolves the configuration of each of its nodes;
// the error is what Build would return for it.
func NewPlan(spec Spec) (*Plan, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	p := &Plan{spec: spec}
	kraftMode := spec.KRaft()
	if kraftMode {
		p.voters, _ = spec.voters() // checked by Validate
	}
	for i := 0; i < spec.Brokers; i++ {
		rack := ""
		if len(spec.Racks) > 0 {
			rack = spec.Racks[i]
		}
		p.members = append(p.members, controller.Broker{ID: int32(i), Rack: rack})
		sc, err := ServerConfig(spec.Config, int32(i), rack)
		if err != nil {
			return nil, err
		}
		if spec.ManualController || kraftMode {
			sc.ZooKeeper = ""
		}
		sc.NoAutoCreate = spec.ScriptedTopics
		if sc.TopicOverrides, err = spec.topicOverrides(sc.TopicOverrides); err != nil {
			return nil, err
		}
		if kraftMode {
			sc.KRaft = kraftConfig(spec.Config, int32(i), spec.Config.Broker.KRaft.ProcessRoles, p.voters)
		}
		f, err := server.New(sc)
		if err != nil {
			return nil, err
		}
		p.configs = append(p.configs, sc)
		p.brokers = append(p.brokers, f)
	}
	if kraftMode {
		for i := 0; i < spec.controllers(); i++ {
			id := server.FirstControllerID + int32(i)
			sc, err := ServerConfig(spec.Config, id, "")
			if err != nil {
				return nil, err
			}
			sc.ZooKeeper = ""
			sc.KRaft = kraftConfig(spec.Config, id, config.RolesController, p.voters)
			if sc.TopicOverrides, err = spec.topicOverrides(sc.TopicOverrides); err != nil {
				return nil, err
			}
			f, err := server.New(sc)
			if err != nil {
				return nil, err
			}
			p.controllers = append(p.controllers, f)
		}
	}
	return p, nil
}

// Spec is the spec the plan was made from.
func (p *Plan) Spec() Spec { return p.spec }

// topicOverrides adds to base (not changed) the settings of every topic of
// the spec: the run's topic configuration with the topic's own configs
// over it.
func (s Spec) topicOverrides(base map[string]server.TopicSettings) (map[string]server.TopicSettings, error) {
	if len(s.Topics) == 0 {
		return base, nil
	}
	out := maps.Clone(base)
	if out == nil {
		out = map[string]server.TopicSettings{}
	}
	for _, t := range s.Topics {
		tc, err := s.Config.Topic.With(s.Config.Broker, t.Config)
		if err != nil {
			return nil, fmt.Errorf("topic %s: %w", t.Name, err)
		}
		out[t.Name] = server.TopicSettingsOf(tc)
	}
	return out, nil
}
