package scenarios

// This file is what a variant runs under: its configuration (the script's
// properties, the variant's and -set's over them), its script variables,
// and the end phase's settings the script gives (the kafkasim.* properties,
// 'final-read', 'end-phase'). Validate checks them; the harness runs with them.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// Variant returns the named variant ("" for the first).
func (s *Script) Variant(name string) (Variant, error) {
	if name == "" {
		return s.Variants[0], nil
	}
	var names []string
	for _, v := range s.Variants {
		if v.Name == name {
			return v, nil
		}
		names = append(names, v.Name)
	}
	return Variant{}, fmt.Errorf("scenario %s has no variant %q (allowed: %s)", s.Name, name, strings.Join(names, ", "))
}

// Configuration returns the properties of a variant with overrides applied
// (the variant's over the script's, set's over both; either name of the
// truncation rule replaces both names below it: labels.go).
func (s *Script) Configuration(v Variant, set map[string]string) map[string]string {
	props := map[string]string{}
	for _, m := range []map[string]string{s.txnDefaults(), s.Props, v.Props, set} {
		l := map[string]string{}
		for k, val := range m {
			if !strings.HasPrefix(k, "$") && !isRunnerProp(k) {
				l[k] = val
			}
		}
		layer(props, l)
	}
	return props
}

// isRunnerProp reports whether a property is the runner's, not Kafka's
// (config.Parse never sees it).
func isRunnerProp(k string) bool { return k == PropLivenessTimeout || k == PropLinkLatency }

// ScriptVars returns the variant's script variables ($name=value) with the
// $-keys of set (a sweep's grid, or -set) overriding them.
func ScriptVars(v Variant, set map[string]string) map[string]string {
	vars := map[string]string{}
	for _, m := range []map[string]string{v.Props, set} {
		for k, val := range m {
			if strings.HasPrefix(k, "$") {
				vars[k] = val
			}
		}
	}
	return vars
}

// Substitute replaces $name in a step's arguments and values with the
// variant's script variables ($name=value in a variant line).
func (st Step) Substitute(vars map[string]string) Step {
	sub := func(s string) string {
		if strings.HasPrefix(s, "$") {
			if v, ok := vars[s]; ok {
				return v
			}
		}
		return s
	}
	out := st
	out.Args = make([]string, len(st.Args))
	for i, a := range st.Args {
		out.Args[i] = sub(a)
	}
	out.KV = make(map[string]string, len(st.KV))
	for k, v := range st.KV {
		out.KV[k] = sub(v)
	}
	return out
}

// PropLivenessTimeout is the liveness phase's bound in simulated
// milliseconds: a kafkasim property (script 'set' or -set), not Kafka's.
const PropLivenessTimeout = "kafkasim.liveness.timeout.ms"

// DefaultLivenessTimeout is kafkasim.liveness.timeout.ms's default.
const DefaultLivenessTimeout = 60 * sim.Second

const maxLivenessMilli = 86400000 // a day of simulated time

// PropLinkLatency fixes every link's latency, in simulated milliseconds: a
// kafkasim property, not Kafka's. Unset, each message's latency is drawn
// from sim.DefaultLink's range (100µs to 1ms); a schedule script written
// from an exploration sets the explorer's one latency (1ms) with it.
const PropLinkLatency = "kafkasim.link.latency.ms"

const maxLinkLatencyMilli = 60000 // a minute

// EndOptions are a run's settings the script gives beside Kafka's
// configuration: the end phase's and the links'.
type EndOptions struct {
	// LivenessTimeout is kafkasim.liveness.timeout.ms.
	LivenessTimeout sim.Duration
	// LinkLatency is kafkasim.link.latency.ms (0: the default link).
	LinkLatency sim.Duration
	// FinalRead is false with 'final-read off'.
	FinalRead bool
	// KeepCuts is set by 'end-phase keep-cuts': the heal leaves cut links
	// cut (only those between two of KeepCutsBetween when it is not
	// empty).
	KeepCuts        bool
	KeepCutsBetween []string
}

// EndOptions reads the end phase's settings from the script, the variant
// and the overrides; an invalid value is bad input.
func (s *Script) EndOptions(v Variant, set map[string]string) (EndOptions, error) {
	o := EndOptions{LivenessTimeout: DefaultLivenessTimeout, FinalRead: !s.NoFinalRead, KeepCuts: s.KeepCuts, KeepCutsBetween: s.KeepCutsBetween}
	val, ok := "", false
	for _, m := range []map[string]string{s.Props, v.Props, set} {
		if x, has := m[PropLivenessTimeout]; has {
			val, ok = x, true
		}
	}
	for _, m := range []map[string]string{s.Props, v.Props, set} {
		if x, has := m[PropLinkLatency]; has {
			n, err := strconv.ParseInt(x, 10, 64)
			if err != nil || n < 1 || n > maxLinkLatencyMilli {
				return o, fmt.Errorf("%s=%q: want a positive integer number of milliseconds of simulated time, 1 to %d (unset: each message's latency is drawn from 100us to 1ms)",
					PropLinkLatency, x, maxLinkLatencyMilli)
			}
			o.LinkLatency = sim.Duration(n) * sim.Millisecond
		}
	}
	if ok {
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil || n < 1 || n > maxLivenessMilli {
			return o, fmt.Errorf("%s=%q: want a positive integer number of milliseconds of simulated time, 1 to %d (default %d)",
				PropLivenessTimeout, val, maxLivenessMilli, DefaultLivenessTimeout/sim.Millisecond)
		}
		o.LivenessTimeout = sim.Duration(n) * sim.Millisecond
	}
	return o, nil
}

// BrokerName matches a broker's node name (b0, b1, ...); ControllerName
// (validate_kraft.go) a dedicated KRaft controller's.
var BrokerName = regexp.MustCompile(`^b[0-9]+$`)
