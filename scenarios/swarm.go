package scenarios

// This file is the randomized ("swarm") scenario: a cluster under a fault
// schedule drawn from the seed — crashes, power losses, restarts, pauses,
// network partitions, and with consumer-crash=P crashes and restarts of the
// script's consumers — while clients produce at a steady rate, then a heal
// and a quiet period so the replicas can converge. The rates are step
// arguments; a script variable of the same name ($crash=0.5, from a variant
// line, -set or a sweep's grid) overrides each of them.
//
// Simplification: the clients are the scripted ones (one attempt per
// record, no retries, no batching); the outcome of every record is still
// exactly known or "unknown", which is what the checkers need.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

const swarmScript = `
describe random crashes, power losses, restarts, pauses and partitions under a steady produce load; replicas must converge after healing
source kafkasim swarm testing (FoundationDB / TigerBeetle style)
brokers 3
topic t partitions=3 rf=3
set zookeeper.session.timeout.ms=6000 replica.lag.time.max.ms=10000
variant kip279-safe truncation=kip279 min.insync.replicas=2 unclean.leader.election.enable=false $acks=all
variant kip101-safe truncation=kip101 min.insync.replicas=2 unclean.leader.election.enable=false $acks=all
variant hw-unsafe truncation=hw min.insync.replicas=1 unclean.leader.election.enable=true $acks=1
expect kip279-safe divergence=permitted duplicates=ok
expect kip101-safe duplicates=ok
expect hw-unsafe duplicates=ok

run 3s
swarm 60s clients=2 interval=20ms acks=$acks fault-every=2s crash=0.3 power-loss=0.1 pause=0.1 partition=0.2 heal=0.3
heal
restart-all
run 30s
`

// Swarm returns the randomized scenario.
func Swarm() *Script {
	s, err := Parse("swarm", "swarm", strings.NewReader(swarmScript))
	if err != nil {
		panic(err)
	}
	return s
}

// SwarmKeys are the swarm step's arguments, each overridable by the script
// variable of the same name ($crash, $fault-every, ...).
var SwarmKeys = []string{"clients", "interval", "acks", "fault-every", "crash", "power-loss", "pause", "partition", "heal", "consumer-crash"}

// swarm runs the randomized workload and fault schedule for st.Dur.
func (r *runner) swarm(st Step) error {
	w := r.w
	for _, k := range SwarmKeys {
		if v, ok := r.vars["$"+k]; ok {
			st.KV[k] = v
		}
	}
	clients, err := intArg(st.KV, "clients", 2)
	if err != nil {
		return err
	}
	interval, err := durArg(st.KV, "interval", 20*sim.Millisecond)
	if err != nil {
		return err
	}
	every, err := durArg(st.KV, "fault-every", 2*sim.Second)
	if err != nil {
		return err
	}
	rates := map[string]float64{}
	for _, k := range []string{"crash", "power-loss", "pause", "partition", "heal", "consumer-crash"} {
		if v, ok := st.KV[k]; ok {
			f, err := strconv.ParseFloat(v, 64)
			if !(err == nil && f >= 0 && f <= 1) {
				return fmt.Errorf("%s=%q: want a probability in [0,1]", k, v)
			}
			rates[k] = f
		}
	}
	acks := parseAcks(st.KV["acks"])
	start, end := w.Now(), w.Now().Add(st.Dur)
	var parts int
	for _, t := range r.s.Topics {
		parts += t.Partitions
	}
	topic := r.s.Topics[0]
	for c := 0; c < clients; c++ {
		name := "p" + strconv.Itoa(c+1)
		id, cl, err := r.client(name)
		if err != nil {
			return err
		}
		// Each send schedules the next, so the queue holds one pending
		// send per client rather than the whole run's.
		seq := 0
		var next func(w *sim.World)
		next = func(w *sim.World) {
			w.Act(id, func(ctx *sim.Context) {
				cl.produce(ctx, topic.Name, int32(seq%topic.Partitions), fmt.Sprintf("%s-%d", name, seq), acks, 10*sim.Second)
			})
			seq++
			if at := w.Now().Add(interval); at < end {
				w.At(at, "produce", next)
			}
		}
		w.At(start.Add(sim.Duration(c)*interval/sim.Duration(clients)), "produce", next)
	}
	var fault func(w *sim.World)
	fault = func(w *sim.World) {
		r.swarmFault(rates)
		if at := w.Now().Add(every); at < end {
			w.At(at, "swarm-fault", fault)
		}
	}
	w.At(start.Add(every), "swarm-fault", fault)
	return r.advance(end)
}

// swarmFault draws at most one fault through the chooser.
func (r *runner) swarmFault(rates map[string]float64) {
	w := r.w
	// Consumer faults are drawn only when asked for, so that runs without
	// them keep their choices (and traces) as before.
	if p := rates["consumer-crash"]; p > 0 && len(r.consumers) > 0 && w.Chance(sim.KindFault, p) {
		name := r.consumers[w.Choose(sim.KindFault, len(r.consumers))]
		id, _ := w.Lookup(name)
		op := "kill-consumer"
		if !w.Up(id) {
			op = "restart-consumer"
		}
		r.step(Step{Op: op, Args: []string{name}})
		return
	}
	b := int32(w.Choose(sim.KindFault, len(r.c.Brokers)))
	id := r.c.Brokers[b]
	name := "b" + strconv.Itoa(int(b))
	for _, kind := range []string{"crash", "power-loss", "pause", "partition", "heal"} {
		if !w.Chance(sim.KindFault, rates[kind]) {
			continue
		}
		switch kind {
		case "crash", "power-loss":
			if !w.Up(id) {
				r.step(Step{Op: "restart", Args: []string{name}})
				return
			}
			r.step(Step{Op: kind, Args: []string{name}, KV: map[string]string{}})
		case "pause":
			if w.Up(id) {
				r.step(Step{Op: "pause", Args: []string{name}, Dur: 3 * sim.Second})
			}
		case "partition":
			var rest []string
			for i := range r.c.Brokers {
				if int32(i) != b {
					rest = append(rest, "b"+strconv.Itoa(i))
				}
			}
			rest = append(rest, "zk")
			for c := range r.clients {
				rest = append(rest, c)
			}
			// The consumers are on the majority side too: a broker cut off
			// from the cluster is cut off from every client.
			rest = append(rest, r.consumers...)
			sortStrings(rest)
			args := append([]string{name, "|"}, strings.Join(rest, ","))
			r.step(Step{Op: "partition", Args: args})
		case "heal":
			r.step(Step{Op: "heal"})
		}
		return
	}
}

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
	d, err := ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%s=%q: want a positive duration", k, v)
	}
	return d, nil
}
