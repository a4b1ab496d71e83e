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
