package harness

// This file counts a run's acknowledged sends (Stats.Acked) and, for a
// run whose clients are real (serve), says what the count is made of.

import (
	"cmp"
	"slices"

	"github.com/kafkasim/kafkasim/checkers"
)

// AckedCount is the acknowledged sends of one client to one topic.
type AckedCount struct {
	Process string `json:"process"`
	Topic   string `json:"topic"`
	Acked   int    `json:"acked"`
}

// SendCount is what became of one producer's sends: Attempted of them
// were invoked, each Acked, Failed (certainly not written: a refusal, a
// fenced producer), Unknown (timed out, cut off, or still unanswered when
// the run ended: maybe written) or
// Unanswered (acks=0: no answer is asked for). Scheduled, when the
// script's send steps say it, is what they asked for; NeverAttempted =
// Scheduled - Attempted, the sends the run ended (or the producer died)
// before making.
type SendCount struct {
	Process        string `json:"process"`
	Scheduled      int    `json:"scheduled,omitempty"`
	Attempted      int    `json:"attempted"`
	Acked          int    `json:"acked"`
	Failed         int    `json:"failed"`
	Unknown        int    `json:"unknown"`
	Unanswered     int    `json:"unanswered,omitempty"`
	NeverAttempted int    `json:"never_attempted,omitempty"`
}

// countSends fills Sends from h's sends (the end phase's probes and the
// transactional sends apart: those are counted as transactions),
// scheduled giving the script's send steps' counts by producer.
func (st *Stats) countSends(h checkers.History, scheduled map[string]int) {
	by := map[string]*SendCount{}
	get := func(p string) *SendCount {
		c := by[p]
		if c == nil {
			c = &SendCount{Process: p}
			by[p] = c
		}
		return c
	}
	for _, op := range h.Ops {
		if op.Kind != checkers.Send || op.Process == CheckerClient {
			continue
		}
		c := get(op.Process)
		c.Attempted++
		switch {
		case op.Outcome == checkers.OK:
			c.Acked++
		case op.Outcome == checkers.Fail:
			c.Failed++
		case op.Error == "acks=0":
			c.Unanswered++
		default:
			c.Unknown++
		}
	}
	for p, n := range scheduled {
		c := get(p)
		c.Scheduled = n
		c.NeverAttempted = max(0, n-c.Attempted)
	}
	st.Sends = st.Sends[:0]
	for _, c := range by {
		st.Sends = append(st.Sends, *c)
	}
	slices.SortFunc(st.Sends, func(a, b SendCount) int { return cmp.Compare(a.Process, b.Process) })
}

// count fills Acked from h's acknowledged sends, the end phase's probes
// left out, and with breakdown what Acked counts (AckedBy, AckedAgain,
// Probes).
func (st *Stats) count(h checkers.History, breakdown bool) {
	type idem struct {
		pid   int64
		epoch int16
		seq   int32
		tp    string
		part  int32
	}
	acked := map[idem]bool{}
	by := map[[2]string]int{}
	idempotent := map[string]bool{}
	for _, p := range h.Producers {
		idempotent[p.Process] = p.Idempotent
	}
	for _, op := range h.Ops {
		if op.Kind != checkers.Send || op.Outcome != checkers.OK {
			continue
		}
		if op.Process == CheckerClient { // probes are not the workload
			st.Probes++
			continue
		}
		st.Acked++
		by[[2]string{op.Process, op.Topic}]++
		if idempotent[op.Process] {
			k := idem{op.ProducerID, op.ProducerEpoch, op.Sequence, op.Topic, op.Partition}
			if acked[k] {
				st.AckedAgain++
			}
			acked[k] = true
		}
	}
	if !breakdown {
		st.AckedAgain, st.Probes = 0, 0
		return
	}
	for k, n := range by {
		st.AckedBy = append(st.AckedBy, AckedCount{Process: k[0], Topic: k[1], Acked: n})
	}
	slices.SortFunc(st.AckedBy, func(a, b AckedCount) int {
		return cmp.Or(cmp.Compare(a.Process, b.Process), cmp.Compare(a.Topic, b.Topic))
	})
}
