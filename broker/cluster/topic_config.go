package cluster

// This file changes a topic's configs during a run, as kafka-configs.sh
// --alter --entity-type topics does (server/topic_config.go says what each
// node does with the change). The change reaches every running broker and
// controller at once, and every node started later reads it (ZooKeeper's
// /config/topics/<t>, KRaft's ConfigRecord): the cluster keeps the
// changed topics' settings and gives them to each new instance before it
// starts.
//
// An AlterConfigs or IncrementalAlterConfigs request in ZooKeeper mode
// takes the same path (server/alter_configs.go hands the topic's new own
// configs to TopicConfigsChanged); in KRaft mode the controller's
// ConfigRecords carry it instead. NB: an alter-config step after such a
// request starts from the topic's configuration in the run (the script's),
// not from what the request set.

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/security"
	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/sim"
)

// TopicConfig returns topic's configuration in effect: the run's topic
// configuration, the topic's own configs, and the changes made since.
func (c *Cluster) TopicConfig(topic string) (config.Topic, error) {
	if t, ok := c.altered[topic]; ok {
		return t, nil
	}
	for _, t := range c.Spec.Topics {
		if t.Name == topic {
			return c.Spec.Config.Topic.With(c.Spec.Config.Broker, t.Config)
		}
	}
	return config.Topic{}, fmt.Errorf("cluster: no topic %q (the script's topics: %s)", topic, c.topicNames())
}

func (c *Cluster) topicNames() string {
	s := ""
	for i, t := range c.Spec.Topics {
		if i > 0 {
			s += ", "
		}
		s += t.Name
	}
	return s
}

// AlterTopicConfig applies props (topic properties) over topic's
// configuration in effect and hands the result to every node: the
// running ones at once, the others when they start. It returns the new
// configuration.
func (c *Cluster) AlterTopicConfig(topic string, props map[string]string) (config.Topic, error) {
	cur, err := c.TopicConfig(topic)
	if err != nil {
		return config.Topic{}, err
	}
	t, err := cur.With(c.Spec.Config.Broker, props)
	if err != nil {
		return config.Topic{}, fmt.Errorf("topic %s: %w", topic, err)
	}
	for _, st := range c.Spec.Topics {
		if st.Name == topic && t.MinInsyncReplicas > st.ReplicationFactor {
			return config.Topic{}, fmt.Errorf("topic %s: min.insync.replicas %d above its replication factor %d: every acks=all produce would fail with NOT_ENOUGH_REPLICAS (allowed: 1 to %d)",
				topic, t.MinInsyncReplicas, st.ReplicationFactor, st.ReplicationFactor)
		}
	}
	if c.altered == nil {
		c.altered = map[string]config.Topic{}
	}
	c.altered[topic] = t
	delete(c.requested, topic)
	return t, c.applyTopicSettings(topic, server.TopicSettingsOf(t))
}

// topicConfigsChanged is the brokers' Config.TopicConfigChanged: a
// request changed topic's own configs to configs, which make s of the
// brokers' settings (ZooKeeper mode).
func (c *Cluster) topicConfigsChanged(topic string, configs map[string]string, s server.TopicSettings) error {
	if c.requested == nil {
		c.requested = map[string]server.TopicSettings{}
	}
	c.requested[topic] = s
	delete(c.altered, topic)
	return c.applyTopicSettings(topic, s)
}

// applyTopicSettings hands topic's settings to every running node.
func (c *Cluster) applyTopicSettings(topic string, s server.TopicSettings) error {
	for _, id := range append(append([]sim.NodeID{}, c.Brokers...), c.Controllers...) {
		b, _ := c.World.Node(id).(*server.Broker)
		if b == nil || !c.World.Up(id) {
			continue
		}
		var aerr error
		if err := c.World.Act(id, func(ctx *sim.Context) { aerr = b.AlterTopicConfig(ctx, topic, s) }); err != nil {
			return err
		}
		if aerr != nil {
			return aerr
		}
	}
	return nil
}

// withAltered wraps a node factory so that each new instance starts with
// the topic configs changed so far, and hands the changes its requests
// make to the cluster, and shares the cluster's security metadata.
func (c *Cluster) withAltered(f func() sim.Node) func() sim.Node {
	return func() sim.Node {
		n := f()
		b, ok := n.(*server.Broker)
		if !ok {
			return n
		}
		b.SetTopicConfigChanged(c.topicConfigsChanged)
		if c.security == nil {
			c.security = security.NewStore()
		}
		b.SetSecurity(c.security)
		for _, t := range slices.Sorted(maps.Keys(c.altered)) {
			b.PresetTopicConfig(t, server.TopicSettingsOf(c.altered[t]))
		}
		for _, t := range slices.Sorted(maps.Keys(c.requested)) {
			b.PresetTopicConfig(t, c.requested[t])
		}
		return n
	}
}
