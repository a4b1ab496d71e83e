// historyfile.go: kafkasim's history file, JSON lines, as `kafkasim run
// -history FILE` saves a run and `kafkasim check -history FILE` judges it.
//
// The format: the first line is the header {"kafkasim_history":1,...};
// every other line is an object with exactly one of the keys "producer",
// "consumer", "op", "final", "invariants" or "transactions" (a run with
// transactions: the transactions checker's history, TxnHistory). Ops appear in invocation order
// and their "index" is their position. Enumerations are spelled as in
// traces ("send", "ok", "leader", "power-loss"). A file holds exactly one
// "final" line: the checkers judge loss and divergence against the
// replicas' final logs, so a history without one cannot be judged and is
// refused rather than passed.
//
// What it simplifies: the invariants monitor watches a live run event by
// event, so it cannot be re-run on a file; the run's monitor verdict is
// saved on the "invariants" line and reported as recorded. The liveness
// phase's samples travel inside "final" (Final.Liveness) and are judged
// again; a file without them gets an Unknown liveness verdict. The facts
// that decide what is permitted (Final.Facts: failures, unclean elections,
// the ISR history in ISRChanges) travel inside "final" too; a file written
// before ISRChanges existed is judged as if every replica stayed in the ISR,
// so KIP-966's losses then read as bugs. Porcupine's visual evidence is not
// saved (check recomputes it).

package checkers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
)

// HistoryFormatVersion is the version written in a history file's header.
const HistoryFormatVersion = 1

// HistoryFile is the content of a history file.
type HistoryFile struct {
	// Source says where the history came from, e.g. "swarm/kip279-safe
	// seed 54"; free text.
	Source  string
	History History
	Final   Final
	// Invariants is the invariants verdict recorded during the run, or nil.
	Invariants *Verdict
	// Transactions is the transaction history of a run with transactions,
	// or nil.
	Transactions *TxnHistory
}

type historyHeader struct {
	Version int    `json:"kafkasim_history"`
	Source  string `json:"source,omitempty"`
}

// savedVerdict is a Verdict without porcupine's evidence (which holds
// functions and is recomputed anyway).
type savedVerdict struct {
	Checker   string
	Result    Result
	Anomalies []Anomaly `json:",omitempty"`
	Omitted   int       `json:",omitempty"`
	Notes     []string  `json:",omitempty"`
}

type historyLine struct {
	Producer     *Producer     `json:"producer,omitempty"`
	Consumer     *Consumer     `json:"consumer,omitempty"`
	Op           *Op           `json:"op,omitempty"`
	Final        *Final        `json:"final,omitempty"`
	Invariants   *savedVerdict `json:"invariants,omitempty"`
	Transactions *TxnHistory   `json:"transactions,omitempty"`
	ShareGroup   *ShareGroup   `json:"share_group,omitempty"`
	ShareLoad    *ShareLoad    `json:"share_load,omitempty"`
}

// WriteHistoryFile writes f as JSON lines.
func WriteHistoryFile(w io.Writer, f HistoryFile) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	if err := enc.Encode(historyHeader{Version: HistoryFormatVersion, Source: f.Source}); err != nil {
		return err
	}
	var lines []historyLine
	for i := range f.History.Producers {
		lines = append(lines, historyLine{Producer: &f.History.Producers[i]})
	}
	for i := range f.History.Consumers {
		lines = append(lines, historyLine{Consumer: &f.History.Consumers[i]})
	}
	for i := range f.History.ShareGroups {
		lines = append(lines, historyLine{ShareGroup: &f.History.ShareGroups[i]})
	}
	for i := range f.History.ShareLoads {
		lines = append(lines, historyLine{ShareLoad: &f.History.ShareLoads[i]})
	}
	for i := range f.History.Ops {
		lines = append(lines, historyLine{Op: &f.History.Ops[i]})
	}
	lines = append(lines, historyLine{Final: &f.Final})
	if v := f.Invariants; v != nil {
		lines = append(lines, historyLine{Invariants: &savedVerdict{v.Checker, v.Result, v.Anomalies, v.Omitted, v.Notes}})
	}
	if f.Transactions != nil {
		lines = append(lines, historyLine{Transactions: f.Transactions})
	}
	for _, l := range lines {
		if err := enc.Encode(l); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// ReadHistoryFile parses a history file. Errors name the line and what
// was wrong with it.
func ReadHistoryFile(r io.Reader) (HistoryFile, error) {
	var f HistoryFile
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 256<<20) // a final line holds whole logs
	n, haveFinal := 0, false
	for sc.Scan() {
		n++
		text := bytes.TrimSpace(sc.Bytes())
		if n == 1 {
			var h historyHeader
			if err := strictJSON(text, &h); err != nil || h.Version == 0 {
				return f, fmt.Errorf("line 1: want the header {\"kafkasim_history\":%d,...}: not a kafkasim history file", HistoryFormatVersion)
			}
			if h.Version != HistoryFormatVersion {
				return f, fmt.Errorf("line 1: history format version %d; this kafkasim reads version %d", h.Version, HistoryFormatVersion)
			}
			f.Source = h.Source
			continue
		}
		if len(text) == 0 {
			continue
		}
		var l historyLine
		if err := strictJSON(text, &l); err != nil {
			return f, fmt.Errorf("line %d: %v", n, err)
		}
		set := 0
		for _, p := range []bool{l.Producer != nil, l.Consumer != nil, l.Op != nil, l.Final != nil, l.Invariants != nil, l.Transactions != nil, l.ShareGroup != nil, l.ShareLoad != nil} {
			if p {
				set++
			}
		}
		if set != 1 {
			return f, fmt.Errorf("line %d: want exactly one of the keys producer, consumer, op, final, invariants, transactions, share_group, share_load", n)
		}
		switch {
		case l.Producer != nil:
			f.History.Producers = append(f.History.Producers, *l.Producer)
		case l.Consumer != nil:
			f.History.Consumers = append(f.History.Consumers, *l.Consumer)
		case l.ShareGroup != nil:
			f.History.ShareGroups = append(f.History.ShareGroups, *l.ShareGroup)
		case l.ShareLoad != nil:
			f.History.ShareLoads = append(f.History.ShareLoads, *l.ShareLoad)
		case l.Op != nil:
			op := *l.Op
			if op.Index != len(f.History.Ops) {
				return f, fmt.Errorf("line %d: op index %d, want %d (ops are listed in order, indexed from 0)", n, op.Index, len(f.History.Ops))
			}
			if op.Kind < Send || op.Kind > ShareLeave {
				return f, fmt.Errorf("line %d: op has no kind (want send, poll, hw, consume, commit, assign, revoke, fetch-committed, share-acquire, share-ack or share-leave)", n)
			}
			if op.Outcome == Pending {
				return f, fmt.Errorf("line %d: op #%d is pending: a finished history has only ok, fail and info", n, op.Index)
			}
			f.History.Ops = append(f.History.Ops, op)
		case l.Final != nil:
			if haveFinal {
				return f, fmt.Errorf("line %d: a second final line", n)
			}
			for _, fl := range l.Final.Facts.Failures {
				if fl.Kind < Crash || fl.Kind > Paused { // JSON null leaves the zero value, which is no failure
					return f, fmt.Errorf("line %d: a failure of broker %d has no kind (want crash, power-loss, isolated or paused)", n, fl.Broker)
				}
			}
			f.Final, haveFinal = *l.Final, true
		case l.Invariants != nil:
			v := l.Invariants
			f.Invariants = &Verdict{Checker: NameInvariants, Result: v.Result, Anomalies: v.Anomalies, Omitted: v.Omitted, Notes: v.Notes}
		case l.Transactions != nil:
			f.Transactions = l.Transactions
		}
	}
	if err := sc.Err(); err != nil {
		return f, fmt.Errorf("line %d: %v", n+1, err)
	}
	if n == 0 {
		return f, fmt.Errorf("empty file: not a kafkasim history file")
	}
	if !haveFinal {
		return f, fmt.Errorf("no final line: the replicas' final logs are needed to judge loss and divergence")
	}
	return f, nil
}

// strictJSON decodes one JSON value, refusing unknown keys and trailing data.
func strictJSON(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("trailing data after the JSON object")
	}
	return nil
}

// CheckFile runs every checker on a saved history: as CheckAll, with the
// invariants verdict the run recorded (Unknown when the file has none),
// and, for a run with transactions, linearizability outside them and the
// transactions checker, as the run judged it.
func CheckFile(f HistoryFile, opts Options) []Verdict {
	lin := opts.SkipLinearizability
	if f.Transactions != nil {
		opts.SkipLinearizability = true
		opts.Transactions = f.Transactions
	}
	out := CheckAll(f.History, f.Final, nil, opts)
	if f.Transactions != nil {
		if !lin {
			out[0] = LinearizabilityOutsideTransactions(f.History, f.Final, *f.Transactions, opts.LinearizabilityBudget)
		}
		out = append(out, CheckTransactions(*f.Transactions, f.Final))
	}
	for i := range out {
		if out[i].Checker != NameInvariants {
			continue
		}
		if f.Invariants == nil {
			out[i].Notes = []string{"the history file holds no invariants verdict (the monitor watches live runs only)"}
			continue
		}
		v := *f.Invariants
		v.Notes = append(append([]string(nil), v.Notes...), "recorded by the run that saved the history")
		out[i] = v
	}
	return out
}
