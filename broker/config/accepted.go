package config

// This file holds what kafkasim does with the Kafka properties it does not
// model: every property of the selected release (the generated tables of
// package catalog) is accepted when its value passes Kafka's ConfigDef
// type and validator, and listed once as "accepted, not modelled"; a
// property the release does not have is refused, naming the releases that
// have it; a misspelt one is refused with suggestions drawn from the
// release's own properties.
//
// A key is looked up, after kafkasim's own tables, as Kafka would read it:
// with a prefix (topic., producer., consumer., admin.) in that kind only;
// without one in the broker's properties first, then a topic's, the
// producer's, the consumer's and the admin client's (the order Parse routes
// modelled keys in).
//
// Simplified vs Kafka: Kafka's broker logs a warning for a property it
// does not know and starts; kafkasim refuses it (exit 2), as a test bed
// should not silently run something other than what was asked. KafkaConfig's
// cross-checks between unmodelled properties (listeners against
// advertised.listeners, SASL mechanisms, ...) are not made: they decide
// whether a real broker starts, never what it loses.

import (
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config/catalog"
)

// AdminPrefix addresses an admin client property (Kafka Streams' prefix).
// No part of a Config holds one: admin properties are accepted, not
// modelled.
const AdminPrefix = "admin."

// partKind is the catalog's kind of each part.
var partKind = [numParts]catalog.Kind{catalog.Broker, catalog.Topic, catalog.Producer, catalog.Consumer}

// lookupOrder is the order an unprefixed key is looked up in.
var lookupOrder = []catalog.Kind{catalog.Broker, catalog.Topic, catalog.Producer, catalog.Consumer, catalog.Admin}

// kindPrefix is the prefix that addresses a kind ("" for the broker).
var kindPrefix = map[catalog.Kind]string{catalog.Topic: TopicPrefix, catalog.Producer: ProducerPrefix,
	catalog.Consumer: ConsumerPrefix, catalog.Admin: AdminPrefix}

// catalogRelease is the name the catalog knows release v by.
func catalogRelease(v Version) string { return v.String() }

// addressed returns the kinds key may name and its name without prefix:
// one kind for a prefixed key, every kind in lookup order otherwise.
func addressed(key string) ([]catalog.Kind, string) {
	for _, k := range lookupOrder[1:] {
		if base, ok := strings.CutPrefix(key, kindPrefix[k]); ok && base != "" {
			return []catalog.Kind{k}, base
		}
	}
	return lookupOrder, key
}

// acceptUnmodelled checks key=value, which no kafkasim table knows,
// against release v's properties. It returns the "key=value" line to list
// as accepted, not modelled, or the error: a bad value, a property of other
// releases only, or an unknown property with suggestions.
func acceptUnmodelled(key, value string, v Version) (string, error) {
	kinds, base := addressed(key)
	rel := catalogRelease(v)
	if !catalog.Has(rel) {
		// No table for this release (0.8.x): a property of some release
		// is accepted unchecked; anything else is unknown.
		for _, k := range kinds {
			if catalog.Anywhere(k, base) {
				return key + "=" + value, nil
			}
		}
		return "", unknownIn(key, v)
	}
	for _, k := range kinds {
		d, ok := catalog.Lookup(k, rel, base)
		if !ok {
			continue
		}
		if err := d.Check(value); err != nil {
			return "", checkError(key, value, err)
		}
		return key + "=" + value, nil
	}
	for _, k := range kinds {
		if rs := catalog.ReleasesWith(k, base); len(rs) > 0 {
			return "", notInRelease(key, value, k, v, rs)
		}
	}
	return "", unknownIn(key, v)
}

// checkModelledInRelease refuses a key kafkasim models (routed to part p
// as base) that Kafka's release v does not have while another release
// does, set to a value other than what v does without it:
// zookeeper.connect=localhost:2181 in 4.0, replica.selector.class below
// 2.4. kafkasim's tables span every release (a release's behaviour is its
// defaults), so the value that release behaves as passes
// (transaction.partition.verification.enable=false below 3.6, as Pairs
// renders it), and so do kafkasim's own selectors
// (inter.broker.protocol.version from 4.0, which picks the release) and
// names Kafka never had.
func checkModelledInRelease(key, value string, p part, base string, v Version) error {
	rel := catalogRelease(v)
	if !catalog.Has(rel) || base == PropInterBrokerProtocolVersion || p == partProducer || p == partConsumer {
		// NB: a client of a newer release talks to older brokers, and
		// the run's client defaults are the newest ZooKeeper release's
		// (ParseProducer): only the brokers' and topics' properties are
		// held to the brokers' release.
		return nil
	}
	k := partKind[p]
	if _, ok := catalog.Lookup(k, rel, base); ok {
		return nil
	}
	rs := catalog.ReleasesWith(k, base)
	if len(rs) == 0 || asReleaseDoes(p, base, value, v) {
		return nil
	}
	return notInRelease(key, value, k, v, rs)
}

// asReleaseDoes reports whether value, for the modelled property base of
// part p, is what release v's defaults already are.
func asReleaseDoes(p part, base, value string, v Version) bool {
	switch p {
	case partBroker:
		return sameAsDefault(brokerProps, DefaultBrokerFor(v), base, value)
	case partTopic:
		return sameAsDefault(topicProps, DefaultBrokerFor(v).TopicDefaults(), base, value)
	}
	return false
}

func sameAsDefault[T any](t table[T], def T, name, value string) bool {
	prop, ok := t.find(name)
	if !ok {
		return false
	}
	given := def
	if err := prop.set(&given, value); err != nil {
		return false
	}
	return prop.get(&given) == prop.get(&def)
}

func checkError(key, value string, err error) error {
	if ce, ok := err.(*catalog.CheckError); ok {
		return &Error{Kind: BadValue, Property: key, Value: value, Reason: ce.Reason, Allowed: ce.Allowed}
	}
	return &Error{Kind: BadValue, Property: key, Value: value, Reason: err.Error()}
}

func notInRelease(key, value string, k catalog.Kind, v Version, releases []string) error {
	return &Error{Kind: NotInRelease, Property: key, Value: value,
		Reason:  "not a " + k.String() + " property of Kafka " + v.String(),
		Allowed: "the releases that have it: " + releaseRanges(releases)}
}

// releaseRanges renders releases (a subset of catalog.Releases, oldest
// first) as runs of consecutive releases: "0.9.0 to 3.9, 4.1".
func releaseRanges(releases []string) string {
	all := catalog.Releases()
	index := map[string]int{}
	for i, r := range all {
		index[r] = i
	}
	var parts []string
	for i := 0; i < len(releases); {
		j := i
		for j+1 < len(releases) && index[releases[j+1]] == index[releases[j]]+1 {
			j++
		}
		if i == j {
			parts = append(parts, releases[i])
		} else {
			parts = append(parts, releases[i]+" to "+releases[j])
		}
		i = j + 1
	}
	return strings.Join(parts, ", ")
}

// unknownIn builds the UnknownProperty error for key, with suggestions
// from release v's properties and kafkasim's own.
func unknownIn(key string, v Version) error {
	kinds, _ := addressed(key)
	prefixed := len(kinds) == 1
	seen := map[string]bool{}
	var cands []string
	add := func(n string) {
		if !seen[n] {
			seen[n] = true
			cands = append(cands, n)
		}
	}
	for _, k := range kinds {
		pre := ""
		if prefixed {
			pre = kindPrefix[k]
		}
		for _, n := range catalog.Names(k, catalogRelease(v)) {
			add(pre + n)
		}
	}
	for _, n := range allKeys() {
		add(n)
	}
	sort.Strings(cands)
	s := suggest(key, cands)
	e := &Error{Kind: UnknownProperty, Property: key, Reason: "not a property of Kafka " + v.String() + " nor of kafkasim", Suggestions: s}
	if len(s) > 0 {
		e.Suggestion = s[0]
	}
	return e
}

// maxSuggestions bounds a "did you mean" list.
const maxSuggestions = 3

// suggest returns the candidates near enough to key to be a misspelling
// of it: those within an edit distance of a third of the key's length (at
// least 2) and no further than one edit beyond the nearest; failing any,
// those that contain the key whole (a key of 6 or more characters). At
// most maxSuggestions, nearest first; cands is sorted, so ties resolve by
// name.
func suggest(key string, cands []string) []string {
	limit := max(2, len(key)/3)
	best := limit + 1
	dist := make([]int, len(cands))
	for i, c := range cands {
		dist[i] = EditDistance(key, c)
		best = min(best, dist[i])
	}
	var out []string
	if best <= limit {
		for d := best; d <= best+1 && d <= limit; d++ {
			for i, c := range cands {
				if dist[i] == d && len(out) < maxSuggestions {
					out = append(out, c)
				}
			}
		}
		return out
	}
	for _, c := range cands {
		if len(key) >= 6 && strings.Contains(c, key) && len(out) < maxSuggestions {
			out = append(out, c)
		}
	}
	return out
}

// quoteList renders names as "a", "b" or "c".
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	switch len(q) {
	case 0:
		return ""
	case 1:
		return q[0]
	}
	return strings.Join(q[:len(q)-1], ", ") + " or " + q[len(q)-1]
}

// ClientProps returns the properties of given (a map Parse reads) that
// Parse routes to the producer (prefix ProducerPrefix) or the consumer
// (ConsumerPrefix) and that kafkasim models, by their names without
// prefix: the base that a script's own client declaration (producer p1
// acks=1) is layered on, so that -set, -producer-config and
// -consumer-config reach every client of the run.
func ClientProps(given map[string]string, prefix string) map[string]string {
	p := partProducer
	if prefix == ConsumerPrefix {
		p = partConsumer
	}
	out := map[string]string{}
	for _, k := range sortedKeys(given) {
		if base, ok := strings.CutPrefix(k, prefix); ok && knows(p, base) {
			out[base] = given[k]
			continue
		}
		if knows(p, k) && !knows(partBroker, k) {
			if _, prefixed := given[prefix+k]; !prefixed {
				out[k] = given[k]
			}
		}
	}
	return out
}

// SplitClient separates a client declaration's properties (a script's
// producer or consumer line; prefix ProducerPrefix or ConsumerPrefix) into
// those kafkasim models and the others, which are checked against release
// v's client properties and returned as sorted key=value lines (accepted,
// not modelled), or refused.
func SplitClient(prefix string, v Version, props map[string]string) (map[string]string, []string, error) {
	p := partProducer
	if prefix == ConsumerPrefix {
		p = partConsumer
	}
	modelled := map[string]string{}
	var others []string
	for _, k := range sortedKeys(props) {
		if knows(p, k) {
			modelled[k] = props[k]
			continue
		}
		if _, err := acceptUnmodelled(prefix+k, props[k], v); err != nil {
			return nil, nil, rename(err, map[string]string{prefix + k: k})
		}
		others = append(others, k+"="+props[k])
	}
	return modelled, others, nil
}

// CheckTopicConfig checks a topic config that kafkasim does not model, as
// a CreateTopics request gives it (max.message.bytes=2000000), against
// release v's topic properties: nil when the release has it and the value
// passes its validator; an *Error otherwise (a broker answers
// INVALID_CONFIG).
func CheckTopicConfig(v Version, name, value string) error {
	if _, err := acceptUnmodelled(TopicPrefix+name, value, v); err != nil {
		return rename(err, map[string]string{TopicPrefix + name: name})
	}
	return nil
}
