package config

// This file is what the commands need to layer configurations read from
// files under -set and -grid: which kind of property a key is, and Overlay,
// which puts a later layer over an earlier one the way Parse will read the
// result.

import (
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config/catalog"
)

// Models reports whether kafkasim models property name (unprefixed) of
// kind k: broker, topic, producer or consumer (the admin client has no
// modelled property).
func Models(k catalog.Kind, name string) bool {
	switch k {
	case catalog.Broker:
		return knows(partBroker, name)
	case catalog.Topic:
		return knows(partTopic, name)
	case catalog.Producer:
		return knows(partProducer, name)
	case catalog.Consumer:
		return knows(partConsumer, name)
	}
	return false
}

// IsKind reports whether name is a property of kind k that kafkasim models
// or that some release in the catalog has.
func IsKind(k catalog.Kind, name string) bool {
	return Models(k, name) || catalog.Anywhere(k, name)
}

// Replaced is a key of an earlier layer that a later layer's key replaced.
type Replaced struct {
	Old, New string
}

// Overlay puts layer over acc, as a later layer of configuration over an
// earlier one: each key of layer replaces the same key of acc, and an
// unprefixed key also replaces the prefixed keys of acc it reaches
// (-set acks=all over a producer file's producer.acks=1), which Parse would
// otherwise prefer. It returns what it replaced whose value differs, sorted
// by new key, then old. A prefixed key of layer over an unprefixed one of
// acc needs nothing: Parse prefers it already.
func Overlay(acc, layer map[string]string) []Replaced {
	var out []Replaced
	for _, k := range sortedKeys(layer) {
		v := layer[k]
		if old, ok := acc[k]; ok && old != v {
			out = append(out, Replaced{Old: k, New: k})
		}
		for p := partTopic; p < numParts; p++ {
			pk := partPrefix[p] + k
			old, ok := acc[pk]
			if _, own := layer[pk]; !ok || own || !reaches(k, p) {
				continue
			}
			if old != v {
				out = append(out, Replaced{Old: pk, New: k})
			}
			delete(acc, pk)
		}
	}
	for k, v := range layer {
		acc[k] = v
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].New != out[j].New {
			return out[i].New < out[j].New
		}
		return out[i].Old < out[j].Old
	})
	return out
}

// reaches reports whether key, unprefixed, reaches part p in Parse: a key
// the broker knows goes to the broker only (topics inherit it).
func reaches(key string, p part) bool {
	if strings.Contains(key, "$") || knows(partBroker, key) {
		return false
	}
	return knows(p, key)
}
