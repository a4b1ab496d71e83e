package main

// This file is -config, -producer-config and -consumer-config, the
// properties files operators keep (server.properties, producer.properties,
// consumer.properties), shared by every command that runs a scenario.
//
// Files are read here (broker/config parses bytes only) and merged into the
// command's -set map: files in flag order, then -set over them, then -grid
// (sweep) or a matrix's release over that. A producer file's key becomes
// producer.KEY and a consumer file's consumer.KEY; a server file's keys
// stay unprefixed and must be broker properties. Since the values end up
// in the -set map, every replay command and tape records them as -set
// pairs: the run repeats without the files. Every override of a file's
// value is reported on stderr; every error a file's value causes names its
// file:line.

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/config/catalog"
	"github.com/kafkasim/kafkasim/scenarios"
)

// configFile is one -config, -producer-config or -consumer-config flag.
type configFile struct {
	kind catalog.Kind // Broker, Producer or Consumer
	path string
}

// configFlags are the files given, in flag order.
type configFlags struct {
	files []configFile
}

// configFileFlag is one of the three flags: it appends to the shared list,
// so later files win whichever flag named them.
type configFileFlag struct {
	c    *configFlags
	kind catalog.Kind
}

func (f configFileFlag) String() string { return "" }

func (f configFileFlag) Set(v string) error {
	if v == "" {
		return errors.New("want the path of a properties file")
	}
	f.c.files = append(f.c.files, configFile{f.kind, v})
	return nil
}

// The flags' names, by kind.
var configFlagName = map[catalog.Kind]string{catalog.Broker: "-config", catalog.Producer: "-producer-config", catalog.Consumer: "-consumer-config"}

// addConfigFlags registers -config, -producer-config and -consumer-config
// on fs.
func addConfigFlags(fs *flag.FlagSet) *configFlags {
	c := &configFlags{}
	fs.Var(configFileFlag{c, catalog.Broker}, "config", "read broker properties from `FILE`, as Kafka's server.properties (repeatable; later files win; -set and -grid win over files)")
	fs.Var(configFileFlag{c, catalog.Producer}, "producer-config", "read the producer's properties from `FILE`, as Kafka's producer.properties (repeatable; each KEY is set as producer.KEY)")
	fs.Var(configFileFlag{c, catalog.Consumer}, "consumer-config", "read the consumer's properties from `FILE`, as Kafka's consumer.properties (repeatable; each KEY is set as consumer.KEY)")
	return c
}

// origin is where a value of the merged map came from.
type origin struct {
	file string
	line int
	key  string // as the file wrote it (acks, not producer.acks)
	val  string
}

func (o origin) String() string { return fmt.Sprintf("%s=%s from %s:%d", o.key, o.val, o.file, o.line) }

// loadedConfig is the files merged with -set.
type loadedConfig struct {
	cmd string
	// origins maps each key of the merged map whose value a file gave
	// (and nothing later replaced) to its file and line.
	origins map[string]origin
}

// labels returns, for harness.Options.Origins, where each file-given key
// came from ("server.properties:7").
func (lc *loadedConfig) labels() map[string]string {
	if len(lc.origins) == 0 {
		return nil
	}
	out := make(map[string]string, len(lc.origins))
	for k, o := range lc.origins {
		out[k] = fmt.Sprintf("%s:%d", o.file, o.line)
	}
	return out
}

// replayArgs returns the file flags as the command line gave them, for
// harness.Options.ConfigFiles.
func (c *configFlags) replayArgs() []string {
	var out []string
	for _, f := range c.files {
		out = append(out, configFlagName[f.kind], f.path)
	}
	return out
}

// given reports whether any file was given.
func (c *configFlags) given() bool { return len(c.files) > 0 }

// under names the overrides in messages: "this -set", or "the -config
// files and -set" when files were given.
func (c *configFlags) under() string {
	if c.given() {
		return "the -config files and -set"
	}
	return "this -set"
}

// load reads the files, checks their keys, and merges them under set, in
// place: set then holds files < -set. Notes (a key given twice in a file,
// a file's value overridden) go to stderr as "kafkasim CMD: ...". Errors
// are usage errors naming the file (and line).
func (c *configFlags) load(cmd string, set map[string]string, stderr io.Writer) (*loadedConfig, error) {
	lc := &loadedConfig{cmd: cmd, origins: map[string]origin{}}
	if !c.given() {
		return lc, nil
	}
	merged := map[string]string{}
	var notes []string
	for _, f := range c.files {
		data, err := os.ReadFile(f.path)
		if err != nil {
			return nil, usagef("%s %s: cannot read it: %v", configFlagName[f.kind], f.path, unwrapPath(err))
		}
		entries, err := config.ReadProperties(f.path, data)
		if err != nil {
			return nil, usageError{err.Error()}
		}
		notes = append(notes, config.DuplicateNotes(f.path, entries)...)
		layer := map[string]string{}
		from := map[string]origin{}
		for _, e := range entries {
			if err := checkFileKey(f, e); err != nil {
				return nil, err
			}
			if f.kind == catalog.Broker && e.Key == config.PropProcessRoles && strings.TrimSpace(e.Value) == "controller" {
				// A controller's own file (config/kraft/controller.properties):
				// its properties are the quorum's, but the scenario's nodes
				// keep their roles (dedicated controllers are its
				// 'controllers N' header).
				notes = append(notes, fmt.Sprintf("%s:%d: process.roles=controller: the file describes a dedicated controller; its properties apply, the scenario's nodes keep their roles (dedicated controllers come from its 'controllers N' header)",
					f.path, e.Line))
				continue
			}
			if reachesClients(f.kind, e.Key) {
				notes = append(notes, fmt.Sprintf("%s:%d: %s is a broker property kafkasim does not model: ignored (as -set it would configure the %s)",
					f.path, e.Line, e.Key, clientsOf(e.Key)))
				continue
			}
			k := e.Key
			switch f.kind {
			case catalog.Producer:
				k = config.ProducerPrefix + k
			case catalog.Consumer:
				k = config.ConsumerPrefix + k
			}
			layer[k] = e.Value
			from[k] = origin{file: f.path, line: e.Line, key: e.Key, val: e.Value}
		}
		notes = append(notes, lc.overlay(merged, layer, func(k string) string { return from[k].String() })...)
		for k, o := range from {
			lc.origins[k] = o
		}
	}
	notes = append(notes, lc.overlay(merged, set, func(k string) string { return "-set " + k + "=" + set[k] })...)
	for _, n := range notes {
		fmt.Fprintf(stderr, "kafkasim %s: %s\n", cmd, n)
	}
	for k := range set {
		delete(set, k)
	}
	for k, v := range merged {
		set[k] = v
	}
	// The values are checked once, here, whatever the scenario: a bad
	// value or an unknown key is the file's. Conflicts between properties
	// wait for the scenario's own configuration (harness.Prepare), where
	// blame names the file too.
	props := map[string]string{}
	for k, v := range merged {
		if !strings.HasPrefix(k, "$") && k != scenarios.PropLivenessTimeout && k != scenarios.PropLinkLatency {
			props[k] = v
		}
	}
	if _, err := config.Parse(props); err != nil {
		var ce *config.Error
		// NB: a property of other releases is judged under the run's
		// release, which the scenario may choose, unless the files or
		// -set name it.
		deferred := errors.As(err, &ce) && (ce.Kind == config.Conflict || ce.Kind == config.NotInRelease && !namesRelease(props))
		if !deferred {
			return nil, lc.blame(err)
		}
	}
	return lc, nil
}

// overlay puts layer over merged (config.Overlay) and returns a note for
// each value of a file it replaced; by renders the replacing key.
func (lc *loadedConfig) overlay(merged, layer map[string]string, by func(k string) string) []string {
	var notes []string
	for _, r := range config.Overlay(merged, layer) {
		if o, ok := lc.origins[r.Old]; ok {
			notes = append(notes, o.String()+" is overridden by "+by(r.New))
		}
		delete(lc.origins, r.Old)
	}
	for k := range layer {
		delete(lc.origins, k)
	}
	return notes
}

// overriddenBy returns, for each file value that key (a -grid axis, a
// matrix release's key) replaces, the note "... is overridden by by".
func (lc *loadedConfig) overriddenBy(set map[string]string, key, by string) []string {
	probe := map[string]string{}
	for k, v := range set {
		probe[k] = v
	}
	var notes []string
	for _, r := range config.Overlay(probe, map[string]string{key: "\x00"}) {
		if o, ok := lc.origins[r.Old]; ok {
			notes = append(notes, fmt.Sprintf("kafkasim %s: %s is overridden by %s", lc.cmd, o, by))
		}
	}
	return notes
}

// replacedIn returns a note for each file value of base that run, the
// configuration of one run built over base, no longer holds: "... is
// overridden by by (key=value)".
func (lc *loadedConfig) replacedIn(base, run map[string]string, by string) []string {
	var notes []string
	for _, k := range sortedKeys(base) {
		o, ok := lc.origins[k]
		v, kept := run[k]
		if !ok || (kept && v == base[k]) {
			continue
		}
		what := by
		if kept {
			what += " (" + k + "=" + v + ")"
		}
		notes = append(notes, fmt.Sprintf("kafkasim %s: %s is overridden by %s", lc.cmd, o, what))
	}
	return notes
}

// namesRelease reports whether props choose the release.
func namesRelease(props map[string]string) bool {
	for _, k := range []string{config.PropInterBrokerProtocolVersion, config.PropMetadataVersion, config.PropTruncation} {
		if _, ok := props[k]; ok {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }

// blame prefixes a configuration error with the file and line of the value
// it names, when a file gave it, and makes it a usage error.
func (lc *loadedConfig) blame(err error) error {
	if err == nil {
		return nil
	}
	var ce *config.Error
	if lc != nil && errors.As(err, &ce) {
		for _, k := range []string{ce.Property, ce.Other} {
			if o, ok := lc.origins[k]; ok {
				return usagef("%s:%d: %v", o.file, o.line, err)
			}
		}
	}
	var ue usageError
	if errors.As(err, &ue) {
		return err
	}
	return usageError{err.Error()}
}

// reachesClients reports whether a server file's key is a broker property
// kafkasim does not model but does model for a client or topic: unprefixed
// in the -set map, config.Parse would give it to them, not to the broker.
func reachesClients(k catalog.Kind, key string) bool {
	return k == catalog.Broker && !config.Models(catalog.Broker, key) && clientsOf(key) != ""
}

// clientsOf names the parts other than the broker that model key: "producer
// and consumer", "topic", or "".
func clientsOf(key string) string {
	var out []string
	for _, k := range []catalog.Kind{catalog.Topic, catalog.Producer, catalog.Consumer} {
		if config.Models(k, key) {
			out = append(out, k.String())
		}
	}
	return strings.Join(out, " and ")
}

// checkFileKey refuses a key of the wrong kind of file: a server file's key
// must be a broker property, a producer file's a producer's, a consumer
// file's a consumer's (modelled by kafkasim or in some release's catalog).
func checkFileKey(f configFile, e config.Entry) error {
	if e.Key == "" {
		return usagef("%s:%d: a value without a key (%q)", f.path, e.Line, e.Value)
	}
	if config.IsKind(f.kind, e.Key) {
		return nil
	}
	rels := catalog.Releases()
	span := ""
	if len(rels) > 0 {
		span = " (" + rels[0] + " to " + rels[len(rels)-1] + ")"
	}
	msg := fmt.Sprintf("%s:%d: %s is not a %s property: kafkasim does not model it and no Kafka release in its catalog%s has it",
		f.path, e.Line, e.Key, f.kind, span)
	var hints []string
	for _, k := range []catalog.Kind{catalog.Broker, catalog.Producer, catalog.Consumer} {
		if k != f.kind && config.IsKind(k, e.Key) {
			hints = append(hints, fmt.Sprintf("a %s property: give its file with %s", k, configFlagName[k]))
		}
	}
	if f.kind == catalog.Broker && config.IsKind(catalog.Topic, e.Key) {
		hints = append(hints, "a topic property: set it with -set topic."+e.Key+"=VALUE")
	}
	sort.Strings(hints)
	if len(hints) > 0 {
		msg += "; it is " + strings.Join(hints, "; ")
	}
	return usageError{msg}
}

// unwrapPath drops the path os repeats in its error ("open F: no such
// file or directory" -> "no such file or directory").
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
