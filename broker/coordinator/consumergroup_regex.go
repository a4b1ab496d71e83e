package coordinator

// This file resolves the consumer group protocol's regular-expression
// subscriptions on the broker (KIP-848, ConsumerGroupHeartbeat v1's
// SubscribedTopicRegex, Kafka 4.0): a member's subscription is its topic
// names and the topics whose whole name the expression matches, internal
// topics too: Kafka's refresh matches every topic of the metadata image,
// and franz-go's Test848RegexBrokerResolves, run against Kafka 4.x, expects
// an expression naming __consumer_offsets to be given it. Kafka compiles the expression with RE2/J; Go's regexp
// is RE2, the same syntax and semantics. A change of what the group's
// expressions match bumps the group epoch, as Kafka's regex refresh does.
//
// Simplifications: the expressions are resolved again at every heartbeat
// of the group (Kafka refreshes them asynchronously, in batches, at most
// every few seconds) and the ConsumerGroupRegularExpression records of
// 4.0 are not written: a loaded member's expression (kept in its
// ConsumerGroupMemberMetadata) is resolved against the topics at load.

import (
	"regexp"
	"slices"

	"github.com/kafkasim/kafkasim/sim"
)

// resolveSubscription returns a member's effective topics: its names and
// its expression's matches, sorted. An expression that does not compile
// matches nothing (the heartbeat that set it was refused).
func (c *Coordinator) resolveSubscription(names []string, regex string) []string {
	out := slices.Clone(names)
	if regex != "" && c.env.Topics != nil {
		if re, err := regexp.Compile("^(?:" + regex + ")$"); err == nil {
			for _, t := range c.env.Topics() {
				if re.MatchString(t.Name) {
					out = append(out, t.Name)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// refreshRegexes resolves the expressions of the group's members again and
// reports whether any member's topics changed.
func (c *Coordinator) refreshRegexes(g *consumerGroup) bool {
	changed := false
	for _, id := range g.memberIDs() {
		m := g.members[id]
		if m.regex == "" {
			continue
		}
		if topics := c.resolveSubscription(m.names, m.regex); !slices.Equal(topics, m.topics) {
			c.env.Log("consumer-regex-resolved", sim.S("group", g.id), sim.S("member", id), sim.S("regex", m.regex), sim.I("topics", int64(len(topics))))
			m.topics, changed = topics, true
		}
	}
	return changed
}
