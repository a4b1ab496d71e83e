package harness

// This file puts Kafka's producer (package client: batching, retries,
// max.in.flight, idempotence) into scripts: 'producer NAME key=value ...'
// creates it with producer properties, 'send NAME TOPIC/P COUNT
// [interval=DUR]' sends COUNT records with unique values, and each record's
// outcome is recorded in the history as the producer reports it (ok, fail
// for a certain refusal, info when unknown). The swarm step's clients are
// these nodes too (addProducer).

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// producerNode is a node running one Kafka producer.
type producerNode struct {
	name string
	p    *client.Producer
	rec  *checkers.Recorder
	acks int16
	sent int
	// scheduled counts the records the script's send steps asked of it
	// (Stats.Sends: those never attempted).
	scheduled int
	// Transactions (transactions.go): the run's log, the producer's
	// transactional.id, its open transaction (-1: none) and its last
	// init-txn, commit or abort.
	txn  *txnLog
	tid  string
	cur  int
	call *txnCall
}

func (n *producerNode) Start(ctx *sim.Context) { n.p.Start(ctx) }
func (n *producerNode) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	n.p.HandleMessage(ctx, from, m)
}
func (n *producerNode) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	n.p.HandleTimer(ctx, id, name)
}

// Disconnected implements sim.Disconnectable.
func (n *producerNode) Disconnected(ctx *sim.Context, peer sim.NodeID) {
	n.p.HandleDisconnect(ctx, peer)
}

// send sends one record and records its outcome.
func (n *producerNode) send(ctx *sim.Context, topic string, part int32) {
	value := n.name + "-" + strconv.Itoa(n.sent) // NB: as "%s-%d", one allocation
	n.sent++
	n.sendValue(ctx, topic, part, value, "")
}

// sendKeyed sends one record with key and records its outcome.
func (n *producerNode) sendKeyed(ctx *sim.Context, topic string, part int32, key string) {
	value := n.name + "-" + strconv.Itoa(n.sent)
	n.sent++
	op := n.rec.Send(ctx.Now(), n.name, topic, part, key, value, n.acks)
	n.sendOp(ctx, client.Record{Topic: topic, Partition: part, Key: []byte(key), Value: []byte(value)}, op)
}

// sendValue sends one record with value and records its outcome; in an
// open transaction, it is one of its writes (input: the input value it
// derives from, consume-transform-produce's).
func (n *producerNode) sendValue(ctx *sim.Context, topic string, part int32, value, input string) {
	if n.tid != "" {
		n.sendTxn(ctx, topic, part, value, input)
		return
	}
	op := n.rec.Send(ctx.Now(), n.name, topic, part, "", value, n.acks)
	n.sendOp(ctx, client.Record{Topic: topic, Partition: part, Value: []byte(value)}, op)
}

// sendOp sends rec, the history's op, and records its outcome.
func (n *producerNode) sendOp(ctx *sim.Context, rec client.Record, op checkers.OpID) {
	err := n.p.Send(ctx, rec, func(ctx *sim.Context, md client.RecordMetadata, err error) {
		if pid, epoch := n.p.ProducerID(); pid >= 0 {
			n.rec.SetProducerID(op, pid, epoch, -1)
		}
		switch client.Classify(md, err) {
		case client.OutcomeOK:
			n.rec.Acked(op, ctx.Now(), md.Offset)
		case client.OutcomeFail:
			n.rec.Fail(op, ctx.Now(), err.Error())
		default:
			reason := "unknown"
			if err != nil {
				reason = err.Error()
			}
			n.rec.Info(op, ctx.Now(), reason)
		}
	})
	if err != nil {
		n.rec.Fail(op, ctx.Now(), err.Error())
	}
}

// sendTxn sends a record of the open transaction. NB: it is one of the
// transaction's writes, judged by the transactions checker, and not a
// Send of the history: an acknowledged record of a transaction that
// aborts is rightly never delivered to read_committed consumers, which
// the other checkers would take for a lost write.
func (n *producerNode) sendTxn(ctx *sim.Context, topic string, part int32, value, input string) {
	if n.cur >= 0 {
		t := &n.txn.txns[n.cur]
		t.Writes = append(t.Writes, checkers.TxnWrite{Topic: topic, Partition: part, Value: value, Input: input})
	}
	err := n.p.Send(ctx, client.Record{Topic: topic, Partition: part, Value: []byte(value)}, func(ctx *sim.Context, md client.RecordMetadata, err error) {
		if err != nil {
			ctx.Log("txn-send-error", sim.S("value", value), sim.S("error", err.Error()))
		}
	})
	if err != nil {
		ctx.Log("txn-send-error", sim.S("value", value), sim.S("error", err.Error()))
	}
}

// newProducer executes a 'producer NAME key=value ...' step. The
// producer's defaults are those of the cluster's release (a 2.x client has
// acks=1 and no idempotence by default: KIP-679 changed both in 3.0), as a
// user's client of the same release would have them.
func (r *Runner) newProducer(st scenarios.Step) error {
	cfg, _, err := producerConfig(r.Cluster.Spec.Config.Broker, r.given, st.KV)
	if err != nil {
		return err
	}
	_, err = r.addProducer(st.Args[0], cfg)
	return err
}

// addProducer starts a producer node named name with cfg, bootstrapped
// from every broker, and declares its configuration to the history as the
// producer really has it. The 'producer' step and the swarm's clients
// both make their producers here.
func (r *Runner) addProducer(name string, cfg config.Producer) (*producerNode, error) {
	if _, ok := r.World.Lookup(name); ok {
		return nil, fmt.Errorf("%q already names a node", name)
	}
	var bootstrap []int32
	for i := range r.Cluster.Brokers {
		bootstrap = append(bootstrap, int32(i))
	}
	cfg.Mutants = r.Cluster.Spec.Config.Broker.Mutants
	n := &producerNode{name: name, p: client.New(cfg, bootstrap), rec: r.Recorder, acks: int16(cfg.Acks), txn: r.txn, tid: cfg.TransactionalID, cur: -1}
	n.p.TransactionVersion = int16(r.Cluster.Spec.Config.Broker.Txn.Version)
	if cfg.TransactionalID != "" {
		r.txn.used = true
	}
	r.producerNotes.add(name, cfg.IdempotenceNote)
	r.Recorder.Producer(checkers.Producer{Process: name, Acks: cfg.Acks.String(), Idempotent: cfg.EnableIdempotence,
		MaxInFlight: cfg.MaxInFlightRequestsPerConnection, Retries: cfg.Retries})
	id, err := r.World.AddNode(name, func() sim.Node { return n }, sim.NodeOptions{})
	if err != nil {
		return nil, err
	}
	r.producers[name] = n
	return n, r.World.Inject(sim.Start{Node: id})
}

// scheduledSends returns what the script's send steps asked of each
// producer that had any.
func (r *Runner) scheduledSends() map[string]int {
	out := map[string]int{}
	for name, n := range r.producers {
		if n.scheduled > 0 {
			out[name] = n.scheduled
		}
	}
	return out
}

// sendRecords executes 'send NAME TOPIC/P COUNT [interval=DUR] [key=K]'.
func (r *Runner) sendRecords(st scenarios.Step) error {
	n, ok := r.producers[st.Args[0]]
	if !ok {
		return fmt.Errorf("no producer %q (create it with a 'producer' step)", st.Args[0])
	}
	topic, ps, _ := strings.Cut(st.Args[1], "/")
	p, err := strconv.Atoi(ps)
	if err != nil || !r.hasPartition(topic, int32(p)) {
		return fmt.Errorf("%q is not a partition of this scenario", st.Args[1])
	}
	count, err := strconv.Atoi(st.Args[2])
	if err != nil || count < 1 {
		return fmt.Errorf("count %q: want a number >= 1", st.Args[2])
	}
	interval, err := durArg(st.KV, "interval", sim.Millisecond)
	if err != nil {
		return err
	}
	key, hasKey := st.KV["key"]
	if hasKey && n.tid != "" {
		return fmt.Errorf("send %s key=%s: a transactional producer's send takes no key", st.Args[0], key)
	}
	id, _ := r.World.Lookup(st.Args[0])
	n.scheduled += count
	left := count
	var next func(w *sim.World)
	next = func(w *sim.World) {
		w.Act(id, func(ctx *sim.Context) {
			if hasKey {
				n.sendKeyed(ctx, topic, int32(p), key)
			} else {
				n.send(ctx, topic, int32(p))
			}
		})
		if left--; left > 0 {
			w.At(w.Now().Add(interval), "send", next)
		}
	}
	return r.World.At(r.World.Now(), "send", next)
}

// delay executes 'delay A -> B DUR' (or <->; A or B may be "*" for every
// broker): every message sent on the links from now on is held DUR on top
// of its latency, and, the links being FIFO, the messages after it wait
// behind it; 'delay A -> B 0s' (or heal's end phase) ends it. A message
// held past later ones on other links is how a request of transaction N
// reaches a broker during N+1 (Jepsen's delayed produce/EndTxn).
func (r *Runner) delay(st scenarios.Step) error {
	link := sim.DefaultLink
	if st.Dur > 0 {
		link.DelayProbability, link.Delay = 1, st.Dur
	}
	if st.KV["overtaken"] == "true" {
		// A held message does not hold the later ones: they may overtake
		// it, as a client's retry on a new connection overtakes a request
		// stuck on the old one.
		link.ReorderProbability = 1
	}
	return r.setLinks(st.Args[0], st.Args[2], st.Args[1] == "<->", link)
}

// lossy executes 'lossy A <-> B drop=P duplicate=P' (A may be "*" for every
// broker): the links get those fault rates.
func (r *Runner) lossy(st scenarios.Step) error {
	link := sim.DefaultLink
	for k, v := range st.KV {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			return fmt.Errorf("%s=%q: want a probability in [0,1]", k, v)
		}
		switch k {
		case "drop":
			link.DropProbability = f
		case "duplicate":
			link.DuplicateProbability = f
		case "reorder":
			link.ReorderProbability = f
		default:
			return fmt.Errorf("%q: allowed drop, duplicate, reorder", k)
		}
	}
	return r.setLinks(st.Args[0], st.Args[2], st.Args[1] == "<->", link)
}

// setLinks gives the links from a to b (and back, with both) the link
// configuration; "*" stands for every broker.
func (r *Runner) setLinks(a, b string, both bool, link sim.LinkConfig) error {
	ends := func(name string) ([]sim.NodeID, error) {
		if name == "*" {
			return r.Cluster.Brokers, nil
		}
		id, err := r.node(name)
		return []sim.NodeID{id}, err
	}
	as, err := ends(a)
	if err != nil {
		return err
	}
	bs, err := ends(b)
	if err != nil {
		return err
	}
	for _, a := range as {
		for _, b := range bs {
			if err := r.World.SetLink(a, b, link); err != nil {
				return err
			}
			r.lossyLinks = append(r.lossyLinks, [2]sim.NodeID{a, b})
			if both {
				if err := r.World.SetLink(b, a, link); err != nil {
					return err
				}
				r.lossyLinks = append(r.lossyLinks, [2]sim.NodeID{b, a})
			}
		}
	}
	return nil
}

// producerNotes collects the producers' idempotence notes in the order the
// producers were made, each note once with the producers it applies to.
type producerNotes struct {
	notes []string
	names [][]string
}

func (pn *producerNotes) add(name, note string) {
	if note == "" {
		return
	}
	for i, n := range pn.notes {
		if n == note {
			pn.names[i] = append(pn.names[i], name)
			return
		}
	}
	pn.notes = append(pn.notes, note)
	pn.names = append(pn.names, []string{name})
}

// lines renders "p1, p2: note" per note; nil when none.
func (pn *producerNotes) lines() []string {
	var out []string
	for i, n := range pn.notes {
		out = append(out, strings.Join(pn.names[i], ", ")+": "+n)
	}
	return out
}

// producerSet returns the producer properties the configuration of
// variant v under set gives (config.ProducerSet), nil when it gives none
// or does not parse (Prepare reports that).
func producerSet(s *scenarios.Script, v scenarios.Variant, set map[string]string) map[string]string {
	ps, err := config.ProducerSet(s.Configuration(v, set))
	if err != nil || len(ps) == 0 {
		return nil
	}
	return ps
}

// fromVariant adds to a conflict between two properties where one of them
// comes from the variant line and not from set, so that a user who set the
// other one (-grid acks=1 against kip101-safe's enable.idempotence=true)
// sees why, and how to change it.
func fromVariant(err error, v scenarios.Variant, set map[string]string) error {
	var e *config.Error
	if !errors.As(err, &e) || e.Kind != config.Conflict {
		return err
	}
	for _, k := range []string{e.Property, e.Other} {
		val, inVariant := v.Props[k]
		if _, inSet := set[k]; inVariant && !inSet {
			return fmt.Errorf("%w (%s=%s is variant %s's: -set %s=... or another variant to change it)", err, k, val, v.Name, k)
		}
	}
	return err
}
