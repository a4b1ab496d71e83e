package harness

// This file is the randomized ("swarm") scenario: a cluster under a fault
// schedule drawn from the seed — crashes, power losses, restarts, pauses,
// network partitions, with consumer-crash=P crashes and restarts of the
// script's consumers, consumer-pause=P pauses of them (3s, as a broker's:
// a member back from one may be a zombie) and consumer-stall=P stalls of
// one of them past its session timeout (a zombie member), and with
// wipe-disk=P a down node's disk replaced by a blank one (mayWipe, in
// kraft.go, says when a controller may be) — while Kafka
// producers (package client: batching, retries, delivery.timeout.ms,
// max.in.flight.requests.per.connection,
// idempotence; the node of producer.go) send at a steady rate, then a heal
// and a quiet period so the replicas can converge. The rates are step
// arguments; a script variable of the same name ($crash=0.5, from a variant
// line, -set or a sweep's grid) overrides each of them, and each seed draws
// a swarm profile from them (profile.go) unless $profile=fixed. Producer
// properties given to the step (acks=$acks) configure every client; the
// producer properties of the run's configuration (the script's set lines,
// the variant's, -set and a sweep's grid: acks=1, enable.idempotence=false)
// override them, as what the user set must; the cluster's release decides
// the rest, idempotence included (config.ParseProducerWith: with acks=1
// set and enable.idempotence not, a 3.x client is not idempotent).
//
// Simplification: the clients send one record at a time to partitions
// chosen round-robin by the step (not by a partitioner), and are never
// crashed themselves; each record's outcome is recorded as the producer
// reports it (ok with its offset, fail for a certain refusal, info when
// unknown), which is what the checkers need.

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
)

// swarmSpec is a swarm step's arguments, parsed.
type swarmSpec struct {
	clients  int
	interval sim.Duration
	every    sim.Duration
	rates    map[string]float64 // the script's rates, by fault kind
	mode     string             // ProfileSwarm or ProfileFixed
	producer config.Producer
}

// parseSwarm applies the script variables vars to a swarm step's
// arguments and parses them; the producer properties are the step's with
// the run's (set: config.ProducerSet of its configuration) over them,
// parsed as the producer of the release with mechanisms m. Errors are bad
// input.
func parseSwarm(st scenarios.Step, vars map[string]string, m config.Mechanisms, set map[string]string) (swarmSpec, error) {
	kv := map[string]string{}
	for k, v := range st.KV {
		kv[k] = v
	}
	for _, k := range scenarios.SwarmKeys {
		if v, ok := vars["$"+k]; ok {
			kv[k] = v
		}
	}
	// name is how the input named an argument: $crash when a script
	// variable set it.
	name := func(k string) string {
		if _, ok := vars["$"+k]; ok {
			return "$" + k
		}
		return k
	}
	sp := swarmSpec{rates: map[string]float64{}, mode: scenarios.ProfileSwarm}
	props := map[string]string{}
	keys := make([]string, 0, len(kv))
	for k := range kv {
		keys = append(keys, k)
	}
	sortStrings(keys) // the first unknown argument named is the same every run
	for _, k := range keys {
		v := kv[k]
		switch {
		case slices.Contains(config.ProducerProperties(), k):
			props[k] = v
		case !slices.Contains(scenarios.SwarmKeys, k):
			return sp, fmt.Errorf("unknown argument %q (allowed: %s, or a producer property such as enable.idempotence or delivery.timeout.ms)", k, strings.Join(scenarios.SwarmKeys, ", "))
		}
	}
	for k, v := range set {
		props[k] = v
	}
	var err error
	if sp.clients, err = intArg(kv, "clients", 2); err != nil {
		return sp, err
	}
	if sp.clients > scenarios.MaxSwarmClients {
		return sp, fmt.Errorf("clients=%d: at most %d (a swarm run costs about 15 MB of memory per client; see docs/scenarios.md, \"What a run costs\")", sp.clients, scenarios.MaxSwarmClients)
	}
	if sp.interval, err = durArg(kv, "interval", 20*sim.Millisecond); err != nil {
		return sp, err
	}
	if sp.every, err = durArg(kv, "fault-every", 2*sim.Second); err != nil {
		return sp, err
	}
	for _, k := range swarmFaultKinds {
		if v, ok := kv[k]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if !(err == nil && f >= 0 && f <= 1) {
				return sp, fmt.Errorf("%s=%q: want a probability in [0,1]", name(k), v)
			}
			sp.rates[k] = f
		}
	}
	if v, ok := kv["profile"]; ok {
		if err := scenarios.CheckProfileMode(name("profile"), v); err != nil {
			return sp, err
		}
		sp.mode = v
	}
	if sp.producer, err = config.ParseProducerWith(m, props); err != nil {
		return sp, fmt.Errorf("the clients' producer properties: %w", err)
	}
	return sp, nil
}

// swarm runs the randomized workload and fault schedule for st.Dur.
func (r *Runner) swarm(st scenarios.Step) error {
	w := r.World
	sp, err := parseSwarm(st, r.vars, r.Cluster.Spec.Config.Broker.Mechanisms(), r.producerSet)
	if err != nil {
		return err
	}
	prof := drawProfile(w, sp.mode, sp.rates)
	r.profiles = append(r.profiles, prof.String())
	start, end := w.Now(), w.Now().Add(st.Dur)
	r.swarmEnd = end
	topic := r.s.Topics[0]
	for c := 0; c < sp.clients; c++ {
		name := "p" + strconv.Itoa(c+1)
		n, err := r.addProducer(name, sp.producer)
		if err != nil {
			return err
		}
		id, _ := w.Lookup(name)
		// Each send schedules the next, so the queue holds one pending
		// send per client rather than the whole run's. Client c's record
		// number k goes to partition k mod partitions.
		seq := 0
		var next func(w *sim.World)
		next = func(w *sim.World) {
			part := int32(seq % topic.Partitions)
			w.Act(id, func(ctx *sim.Context) { n.send(ctx, topic.Name, part) })
			seq++
			if at := w.Now().Add(sp.interval); at < end {
				w.At(at, "produce", next)
			}
		}
		w.At(start.Add(sim.Duration(c)*sp.interval/sim.Duration(sp.clients)), "produce", next)
	}
	var fault func(w *sim.World)
	fault = func(w *sim.World) {
		if st, ok := r.drawSwarmFault(prof.rates, sp.rates); ok {
			r.Step(st)
		}
		if at := w.Now().Add(sp.every); at < end {
			w.At(at, "swarm-fault", fault)
		}
	}
	w.At(start.Add(sp.every), "swarm-fault", fault)
	return r.Advance(end)
}

// drawSwarmFault draws at most one fault through the chooser, at the rates
// of the profile, and returns it as the step that injects it (false: none
// drawn). A crash or power-loss drawn for a broker that is down restarts it
// instead, at the script's rate (base): like heal, restarts stay on
// whatever the profile, so brokers do not stay down for the rest of the
// run. It only draws; the caller runs the step (the swarm at once, a paced
// run's schedule after noting what the target leads: faults.go).
func (r *Runner) drawSwarmFault(rates, base map[string]float64) (scenarios.Step, bool) {
	w := r.World
	// Consumer faults are drawn only when asked for, so that runs without
	// them keep their choices (and traces) as before.
	if cs := r.allConsumers(); rates["consumer-crash"] > 0 && len(cs) > 0 && w.Chance(sim.KindFault, rates["consumer-crash"]) {
		name := cs[w.Choose(sim.KindFault, len(cs))]
		id, _ := w.Lookup(name)
		op := "kill-consumer"
		if !w.Up(id) {
			op = "restart-consumer"
		}
		return scenarios.Step{Op: op, Args: []string{name}}, true
	}
	if p := rates["consumer-stall"]; p > 0 && len(r.consumers) > 0 && w.Chance(sim.KindFault, p) {
		// A stall past the member's session (a long GC pause) while it
		// processes a poll's records: the coordinator expels it, and it
		// comes back a zombie that still commits what it polled. The
		// stall is armed here and strikes at the member's next poll that
		// returns records (consumerNode.poll).
		s := r.consumerSettings[r.consumers[w.Choose(sim.KindFault, len(r.consumers))]]
		s.stall, s.stallBy = s.cfg.SessionTimeout+consumerStallMargin, r.swarmEnd
		return scenarios.Step{}, false
	}
	if cs := r.allConsumers(); rates["consumer-pause"] > 0 && len(cs) > 0 && w.Chance(sim.KindFault, rates["consumer-pause"]) {
		name := cs[w.Choose(sim.KindFault, len(cs))]
		return scenarios.Step{Op: "pause", Args: []string{name}, Dur: swarmPause}, true
	}
	// NB: in KRaft mode the dedicated controllers are targets too; ZooKeeper
	// runs draw among the brokers only, as before.
	targets := r.faultTargets()
	name := targets[w.Choose(sim.KindFault, len(targets))]
	id, _ := r.World.Lookup(name)
	if p := rates["wipe-disk"]; p > 0 && !w.Up(id) && r.mayWipe(name) && w.Chance(sim.KindFault, p) {
		// NB: drawn only when the script gives wipe-disk, so that the
		// other scripts' schedules do not change.
		return scenarios.Step{Op: "wipe-disk", Args: []string{name}}, true
	}
	for _, kind := range []string{"crash", "power-loss", "pause", "partition", "heal"} {
		p := rates[kind]
		if (kind == "crash" || kind == "power-loss") && !w.Up(id) {
			p = base[kind]
		}
		if !w.Chance(sim.KindFault, p) {
			continue
		}
		switch kind {
		case "crash", "power-loss":
			if !w.Up(id) {
				return scenarios.Step{Op: "restart", Args: []string{name}}, true
			}
			return scenarios.Step{Op: kind, Args: []string{name}, KV: map[string]string{}}, true
		case "pause":
			if w.Up(id) {
				return scenarios.Step{Op: "pause", Args: []string{name}, Dur: swarmPause}, true
			}
		case "partition":
			var rest []string
			for _, t := range targets {
				if t != name {
					rest = append(rest, t)
				}
			}
			if r.Cluster.ZK >= 0 {
				rest = append(rest, "zk")
			}
			for c := range r.clients {
				rest = append(rest, c)
			}
			for p := range r.producers {
				rest = append(rest, p)
			}
			// The consumers are on the majority side too: a broker cut off
			// from the cluster is cut off from every client.
			rest = append(rest, r.allConsumers()...)
			sortStrings(rest)
			args := append([]string{name, "|"}, strings.Join(rest, ","))
			return scenarios.Step{Op: "partition", Args: args}, true
		case "heal":
			return scenarios.Step{Op: "heal"}, true
		}
		return scenarios.Step{}, false
	}
	return scenarios.Step{}, false
}

// swarmPause is how long a swarm's pause stalls its broker.
const swarmPause = 3 * sim.Second

// consumerStallMargin is how much longer than its session.timeout.ms a
// swarm's consumer-stall stalls a member.
const consumerStallMargin = 2 * sim.Second

func sortStrings(xs []string) {
	for i := 1; i < len(xs); i++ {
		for j := i; j > 0 && xs[j] < xs[j-1]; j-- {
			xs[j], xs[j-1] = xs[j-1], xs[j]
		}
	}
}

func intArg(kv map[string]string, k string, def int) (int, error) {
	v, ok := kv[k]
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%s=%q: want a number >= 1", k, v)
	}
	return n, nil
}

func durArg(kv map[string]string, k string, def sim.Duration) (sim.Duration, error) {
	v, ok := kv[k]
	if !ok {
		return def, nil
	}
	d, err := scenarios.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration", k, v)
	}
	return d, nil
}
