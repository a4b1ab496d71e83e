// transactions.go: the transactions checker — Kafka's exactly-once
// promises judged on a history of transactions, with Adya's and Elle's
// anomaly names.
//
// What Kafka promises (KIP-98, KIP-447): a transaction's writes, and the
// consumer offsets it commits, become visible to read_committed consumers
// all together when it commits, and never when it aborts; a
// read_committed consumer never reads past the last stable offset. It does
// not promise isolation between concurrent transactions: two transactions
// may interleave their writes to different partitions in different orders.
//
// What it checks, each anomaly naming the transactions, values and offsets:
//   - lost-committed-write: a write of a transaction the client saw commit
//     is missing from the final log of its partition, or sits there under
//     an ABORT marker. Permitted only by a loss fact of the contract
//     (contract.go: an unclean election, every ISR member losing power).
//   - G1a (aborted read): a read_committed consumer delivered a write of a
//     transaction that aborted (as its client saw it, or as the final log's
//     marker says).
//   - G1b (intermediate read): a read_committed consumer delivered a write
//     of a transaction before that transaction's commit was even asked for
//     (the read completed before commitTransaction was invoked).
//   - torn-transaction: a read_committed consumer delivered part of a
//     committed transaction, and read past another of its writes without
//     delivering it.
//   - read-skip: a read_committed consumer's poll moved its position past
//     a committed record (of no transaction it saw part of: that is a
//     torn transaction) without delivering it.
//   - duplicate-output: consume-transform-produce wrote more than one
//     committed output for one input (the final log, read committed).
//   - missing-output: a committed record of a consume-transform-produce
//     input topic (TxnHistory.InputTopics) has no committed output in the
//     final logs. Permitted when the input's partition had a loss fact (an
//     unclean election may have removed the output's marker), or when a
//     partition can never take an acks=all write (Facts.Unwritable: fewer
//     replicas than its min.insync.replicas, e.g. __transaction_state with
//     transaction.state.log.replication.factor=1 and min.isr 2).
//   - G0 (write cycle) over the write-write order of the final logs
//     (consecutive transactions' writes in a partition) and G1c (circular
//     information flow) over write-write and write-read (a transaction
//     consumed another's output) orders: a cycle made only of write-read
//     edges is a bug (under read_committed a transaction can read only what
//     committed before it); a cycle through write-write edges is reported
//     as permitted — Kafka's transactions are atomic, not isolated.
//
// What it simplifies: the history is one value per write (values are
// unique in a run), so a write is traced to its transaction by value; a
// transaction whose client outcome is unknown is judged by its final-log
// marker; read_uncommitted reads are not judged.

package checkers

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// NameTransactions is the transactions checker's name.
const NameTransactions = "transactions"

// Anomaly kinds of the transactions checker.
const (
	KindLostCommittedWrite = "lost-committed-write"
	KindG1a                = "G1a"
	KindG1b                = "G1b"
	KindTornTransaction    = "torn-transaction"
	KindDuplicateOutput    = "duplicate-output"
	KindMissingOutput      = "missing-output"
	KindReadSkip           = "read-skip"
	KindG0                 = "G0"
	KindG1c                = "G1c"
)

// TxnOutcome is how a transaction ended.
type TxnOutcome uint8

// The outcomes of a transaction.
const (
	// TxnUnknown: not known (the client crashed or timed out; in a final
	// log: no marker yet, the transaction is open).
	TxnUnknown TxnOutcome = iota
	// TxnCommitted: commitTransaction returned (in a final log: a COMMIT
	// marker, or a non-transactional record).
	TxnCommitted
	// TxnAborted: abortTransaction returned (in a final log: an ABORT
	// marker).
	TxnAborted
)

// String returns "unknown", "committed" or "aborted".
func (o TxnOutcome) String() string {
	switch o {
	case TxnCommitted:
		return "committed"
	case TxnAborted:
		return "aborted"
	}
	return "unknown"
}

// TxnWrite is one record a transaction sent.
type TxnWrite struct {
	Topic     string
	Partition int32
	Value     string
	// Input is the input value a consume-transform-produce transaction
	// derived this output from ("" for a plain write).
	Input string
}

// Txn is one transaction of a transactional producer.
type Txn struct {
	// Process is the client; TransactionalID its transactional.id.
	Process, TransactionalID string
	// Begin is when beginTransaction was called; EndInvoke when
	// commitTransaction or abortTransaction was called (0: never); End
	// when it returned.
	Begin, EndInvoke, End sim.Time
	// Outcome is what the client saw.
	Outcome TxnOutcome
	Writes  []TxnWrite
	// Inputs are the values a consume-transform-produce transaction
	// consumed (their offsets committed in it).
	Inputs []string
}

// TxnRead is one poll's records of one partition as a consumer delivered
// them: FetchOffset the position before, Next the position after.
type TxnRead struct {
	Process           string
	Topic             string
	Partition         int32
	ReadCommitted     bool
	FetchOffset, Next int64
	Records           []Record
	Invoke, Complete  sim.Time
}

// TxnFinalRecord is a data record of a final log with the outcome of its
// transaction (TxnCommitted for a non-transactional record).
type TxnFinalRecord struct {
	Offset int64
	Value  string
	Status TxnOutcome
}

// TxnFinalPartition is one partition's final log, data records only.
type TxnFinalPartition struct {
	Topic     string
	Partition int32
	Records   []TxnFinalRecord
	// Transactional: the log holds transactional or control batches.
	Transactional bool `json:",omitempty"`
}

// TxnHistory is what the transactions checker judges.
type TxnHistory struct {
	Txns  []Txn
	Reads []TxnRead
	// Final holds the partitions whose final log is known.
	Final []TxnFinalPartition
	// InputTopics are the topics consume-transform-produce reads: every
	// committed record of their final logs must have a committed output.
	InputTopics []string
}

// txnPos locates a write in the final logs.
type txnPos struct {
	tp     tp
	offset int64
	status TxnOutcome
}

// CheckTransactions judges h; f gives the contract's facts (f.Partitions
// may be empty). It is Unknown when there is no transaction, or none of
// the partitions written is in h.Final.
func CheckTransactions(h TxnHistory, f Final) Verdict {
	owner := map[string]int{} // value -> transaction
	for i, t := range h.Txns {
		for _, w := range t.Writes {
			owner[w.Value] = i
		}
	}
	final := map[string]txnPos{}
	known := map[tp]bool{}
	for _, p := range h.Final {
		k := tp{p.Topic, p.Partition}
		known[k] = true
		for _, r := range p.Records {
			final[r.Value] = txnPos{k, r.Offset, r.Status}
		}
	}
	// outcome is a transaction's end: the client's, else its final markers.
	outcome := func(i int) TxnOutcome {
		if o := h.Txns[i].Outcome; o != TxnUnknown {
			return o
		}
		for _, w := range h.Txns[i].Writes {
			if p, ok := final[w.Value]; ok && p.status != TxnUnknown {
				return p.status
			}
		}
		return TxnUnknown
	}
	var out []Anomaly
	var c *contract
	judged := 0
	for i, t := range h.Txns {
		if t.Outcome != TxnCommitted {
			continue
		}
		for _, w := range t.Writes {
			k := tp{w.Topic, w.Partition}
			if !known[k] {
				continue
			}
			judged++
			p, ok := final[w.Value]
			if ok && p.status == TxnCommitted {
				continue
			}
			if c == nil {
				c = newContract(f)
			}
			why, permitted := c.lossExcuse(Op{Kind: Send, Topic: w.Topic, Partition: w.Partition, Value: w.Value, Acks: -1, Invoke: t.Begin, Leader: -1})
			desc := "transaction " + txnName(h.Txns, i) + " committed at " + t.End.String() + " but " + w.Value + " is not in the final log of " + k.String()
			a := Anomaly{Kind: KindLostCommittedWrite, Topic: w.Topic, Partition: w.Partition, Value: w.Value, Times: []sim.Time{t.End}, Permitted: permitted}
			if ok {
				desc = "transaction " + txnName(h.Txns, i) + " committed at " + t.End.String() + " but " + w.Value + " at offset " +
					strconv.FormatInt(p.offset, 10) + " of " + k.String() + " is " + p.status.String() + " in the final log"
				a.Offsets = []int64{p.offset}
			}
			a.Description = desc + "; " + why
			out = append(out, a)
		}
	}
	out = append(out, readAnomalies(h, owner, final, outcome)...)
	out = append(out, duplicateOutputs(h, final)...)
	out = append(out, missingOutputs(h, final, f, &c)...)
	out = append(out, cycleAnomalies(h, owner, final, outcome)...)
	note := strconv.Itoa(len(h.Txns)) + " transactions, " + strconv.Itoa(len(h.Reads)) + " reads, " + strconv.Itoa(len(h.Final)) + " final logs"
	if len(h.Txns) == 0 && len(out) == 0 {
		// read_committed consumers alone: no transaction to judge, as
		// linearizability is not judged on all-transactional partitions.
		return NotJudgedVerdict(NameTransactions, "no transaction in the run (no transactional producer began one): nothing to judge; "+note)
	}
	unknown := judged == 0 && len(h.Final) == 0
	return verdict(NameTransactions, out, unknown, note)
}

func txnName(txns []Txn, i int) string {
	return "T" + strconv.Itoa(i) + " (" + txns[i].Process + " " + txns[i].TransactionalID + ")"
}

// readAnomalies finds G1a, G1b and torn transactions in read_committed
// reads.
func readAnomalies(h TxnHistory, owner map[string]int, final map[string]txnPos, outcome func(int) TxnOutcome) []Anomaly {
	var out []Anomaly
	type pk struct {
		process string
		tp      tp
	}
	delivered := map[pk]map[string]bool{}
	seenTxn := map[pk]map[int]bool{} // transactions a process saw part of, by partition read
	covered := map[pk][][2]int64{}
	var order []pk
	for _, r := range h.Reads {
		if !r.ReadCommitted {
			continue
		}
		k := pk{r.Process, tp{r.Topic, r.Partition}}
		if delivered[k] == nil {
			delivered[k], seenTxn[k] = map[string]bool{}, map[int]bool{}
			order = append(order, k)
		}
		covered[k] = append(covered[k], [2]int64{r.FetchOffset, r.Next})
		for _, rec := range r.Records {
			delivered[k][rec.Value] = true
			i, ok := owner[rec.Value]
			if !ok {
				continue
			}
			seenTxn[k][i] = true
			t := h.Txns[i]
			switch {
			case outcome(i) == TxnAborted:
				out = append(out, Anomaly{Kind: KindG1a, Topic: r.Topic, Partition: r.Partition, Value: rec.Value, Offsets: []int64{rec.Offset},
					Times: []sim.Time{r.Complete}, Description: r.Process + " (read_committed) read " + rec.Value + " at offset " + strconv.FormatInt(rec.Offset, 10) +
						" of " + tp{r.Topic, r.Partition}.String() + " at " + r.Complete.String() + ", written by " + txnName(h.Txns, i) + ", which aborted"})
			case t.EndInvoke == 0 || r.Complete < t.EndInvoke:
				if t.EndInvoke == 0 && outcome(i) != TxnCommitted {
					break // never ended: judged as aborted or open by its markers
				}
				out = append(out, Anomaly{Kind: KindG1b, Topic: r.Topic, Partition: r.Partition, Value: rec.Value, Offsets: []int64{rec.Offset},
					Times: []sim.Time{r.Complete, t.EndInvoke}, Description: r.Process + " (read_committed) read " + rec.Value + " at offset " +
						strconv.FormatInt(rec.Offset, 10) + " at " + r.Complete.String() + ", before " + txnName(h.Txns, i) + " asked to commit (" + t.EndInvoke.String() + ")"})
			}
		}
	}
	// Torn: a process saw part of a committed transaction and read past
	// another of its writes without delivering it.
	torn := map[pk][]string{}
	for _, k := range order {
		txns := make([]int, 0, len(seenTxn[k]))
		for i := range seenTxn[k] {
			txns = append(txns, i)
		}
		slices.Sort(txns)
		for _, i := range txns {
			if outcome(i) != TxnCommitted {
				continue
			}
			for _, w := range h.Txns[i].Writes {
				p, ok := final[w.Value]
				wk := pk{k.process, tp{w.Topic, w.Partition}}
				if !ok || p.status != TxnCommitted || delivered[wk][w.Value] || !coveredBy(covered[wk], p.offset) {
					continue
				}
				torn[wk] = append(torn[wk], w.Value)
				out = append(out, Anomaly{Kind: KindTornTransaction, Topic: w.Topic, Partition: w.Partition, Value: w.Value, Offsets: []int64{p.offset},
					Description: k.process + " (read_committed) saw part of committed " + txnName(h.Txns, i) + " but read past " + w.Value +
						" at offset " + strconv.FormatInt(p.offset, 10) + " of " + wk.tp.String() + " without delivering it"})
			}
		}
	}
	// Read skips: a committed record a poll of the process read past
	// without delivering (and not already a torn transaction's).
	finalOf := map[tp][]TxnFinalRecord{}
	for _, p := range h.Final {
		finalOf[tp{p.Topic, p.Partition}] = p.Records
	}
	for _, k := range order {
		for _, r := range finalOf[k.tp] {
			if r.Status != TxnCommitted || delivered[k][r.Value] || slices.Contains(torn[k], r.Value) || !coveredBy(covered[k], r.Offset) {
				continue
			}
			out = append(out, Anomaly{Kind: KindReadSkip, Topic: k.tp.topic, Partition: k.tp.partition, Value: r.Value, Offsets: []int64{r.Offset},
				Description: k.process + " (read_committed) read past " + r.Value + " at offset " + strconv.FormatInt(r.Offset, 10) + " of " +
					k.tp.String() + ", committed, without delivering it"})
		}
	}
	return out
}

func coveredBy(ivs [][2]int64, o int64) bool {
	for _, iv := range ivs {
		if o >= iv[0] && o < iv[1] {
			return true
		}
	}
	return false
}

// duplicateOutputs: more than one committed output of one input.
func duplicateOutputs(h TxnHistory, final map[string]txnPos) []Anomaly {
	outputs := map[string][]string{}
	var inputs []string
	for _, t := range h.Txns {
		for _, w := range t.Writes {
			if w.Input == "" {
				continue
			}
			if p, ok := final[w.Value]; ok && p.status == TxnCommitted {
				if outputs[w.Input] == nil {
					inputs = append(inputs, w.Input)
				}
				outputs[w.Input] = append(outputs[w.Input], w.Value)
			}
		}
	}
	var out []Anomaly
	for _, in := range inputs {
		if vs := outputs[in]; len(vs) > 1 {
			var offs []int64
			for _, v := range vs {
				offs = append(offs, final[v].offset)
			}
			out = append(out, Anomaly{Kind: KindDuplicateOutput, Value: in, Offsets: offs, Topic: final[vs[0]].tp.topic, Partition: final[vs[0]].tp.partition,
				Description: "input " + in + " has " + strconv.Itoa(len(vs)) + " committed outputs: " + strings.Join(vs, ", ")})
		}
	}
	return out
}

// missingOutputs: a committed input of consume-transform-produce with no
// committed output.
func missingOutputs(h TxnHistory, final map[string]txnPos, f Final, c **contract) []Anomaly {
	if len(h.InputTopics) == 0 {
		return nil
	}
	has := map[string]bool{}
	for _, t := range h.Txns {
		for _, w := range t.Writes {
			if p, ok := final[w.Value]; ok && w.Input != "" && p.status == TxnCommitted {
				has[w.Input] = true
			}
		}
	}
	var out []Anomaly
	for _, p := range h.Final {
		if !slices.Contains(h.InputTopics, p.Topic) {
			continue
		}
		for _, r := range p.Records {
			if r.Status != TxnCommitted || has[r.Value] {
				continue
			}
			if *c == nil {
				*c = newContract(f)
			}
			why, permitted := (*c).lossExcuse(Op{Kind: Send, Topic: p.Topic, Partition: p.Partition, Value: r.Value, Acks: -1, Leader: -1})
			if !permitted && len(f.Facts.Unwritable) > 0 {
				// The pipeline's writes need acks=all (its output, its
				// offsets, the coordinator's log): one partition that can
				// never take them may keep any input from its output.
				why, permitted = "permitted: "+strings.TrimPrefix(f.Facts.Unwritable[0].Why, "permitted: ")+"; the pipeline cannot commit what needs it", true
			}
			out = append(out, Anomaly{Kind: KindMissingOutput, Topic: p.Topic, Partition: p.Partition, Value: r.Value, Offsets: []int64{r.Offset}, Permitted: permitted,
				Description: "input " + r.Value + " at offset " + strconv.FormatInt(r.Offset, 10) + " of " + tp{p.Topic, p.Partition}.String() +
					" has no committed output in the final logs; " + why})
		}
	}
	return out
}

// edge kinds of the dependency graph.
const (
	edgeWW = 1 << iota
	edgeWR
)

// cycleAnomalies builds the write-write and write-read graph of the
// committed transactions and reports each strongly connected component
// with a cycle once: G1c if it has a write-read edge, else G0.
func cycleAnomalies(h TxnHistory, owner map[string]int, final map[string]txnPos, outcome func(int) TxnOutcome) []Anomaly {
	n := len(h.Txns)
	adj := make([]map[int]int, n)
	add := func(a, b, kind int) {
		if a == b {
			return
		}
		if adj[a] == nil {
			adj[a] = map[int]int{}
		}
		adj[a][b] |= kind
	}
	for _, p := range h.Final {
		prev := -1
		for _, r := range p.Records {
			i, ok := owner[r.Value]
			if !ok || r.Status != TxnCommitted {
				continue
			}
			if prev >= 0 && prev != i {
				add(prev, i, edgeWW)
			}
			prev = i
		}
	}
	for j, t := range h.Txns {
		if outcome(j) != TxnCommitted {
			continue
		}
		for _, in := range t.Inputs {
			if i, ok := owner[in]; ok && outcome(i) == TxnCommitted {
				add(i, j, edgeWR)
			}
		}
	}
	var out []Anomaly
	for _, scc := range tarjan(n, adj) {
		if len(scc) < 2 {
			continue
		}
		in := map[int]bool{}
		for _, v := range scc {
			in[v] = true
		}
		wwOnly, wrOnly := true, true
		var names []string
		for _, v := range scc {
			names = append(names, txnName(h.Txns, v))
			for w, k := range adj[v] {
				if !in[w] {
					continue
				}
				if k&edgeWR != 0 {
					wwOnly = false
				}
				if k&edgeWW != 0 && k&edgeWR == 0 {
					wrOnly = false
				}
			}
		}
		a := Anomaly{Kind: KindG0, Description: "write cycle among " + strings.Join(names, ", ") +
			" (their writes are in different orders in different partitions); permitted: Kafka's transactions are atomic, not isolated", Permitted: true}
		if !wwOnly {
			a.Kind = KindG1c
			a.Description = "circular information flow among " + strings.Join(names, ", ")
			if wrOnly {
				a.Permitted = false
				a.Description += ": each consumed another's committed output, which read_committed allows only after that one committed"
			} else {
				a.Description += " through write-write orders; permitted: Kafka's transactions are atomic, not isolated"
			}
		}
		out = append(out, a)
	}
	return out
}

// tarjan returns the strongly connected components of the graph, each
// sorted, in order of their smallest vertex (iterative: histories may hold
// 10,000s of transactions).
func tarjan(n int, adj []map[int]int) [][]int {
	index := make([]int, n)
	low := make([]int, n)
	on := make([]bool, n)
	for i := range index {
		index[i] = -1
	}
	succ := make([][]int, n)
	for v := range adj {
		for w := range adj[v] {
			succ[v] = append(succ[v], w)
		}
		slices.Sort(succ[v])
	}
	var sccs [][]int
	var st []int
	next := 0
	type frame struct{ v, i int }
	for root := 0; root < n; root++ {
		if index[root] >= 0 {
			continue
		}
		call := []frame{{root, 0}}
		index[root], low[root] = next, next
		next++
		st = append(st, root)
		on[root] = true
		for len(call) > 0 {
			f := &call[len(call)-1]
			if f.i < len(succ[f.v]) {
				w := succ[f.v][f.i]
				f.i++
				if index[w] < 0 {
					index[w], low[w] = next, next
					next++
					st = append(st, w)
					on[w] = true
					call = append(call, frame{w, 0})
				} else if on[w] {
					low[f.v] = min(low[f.v], index[w])
				}
				continue
			}
			v := f.v
			call = call[:len(call)-1]
			if len(call) > 0 {
				u := call[len(call)-1].v
				low[u] = min(low[u], low[v])
			}
			if low[v] == index[v] {
				var comp []int
				for {
					w := st[len(st)-1]
					st = st[:len(st)-1]
					on[w] = false
					comp = append(comp, w)
					if w == v {
						break
					}
				}
				slices.Sort(comp)
				sccs = append(sccs, comp)
			}
		}
	}
	slices.SortFunc(sccs, func(a, b []int) int { return cmp.Compare(a[0], b[0]) })
	return sccs
}
