package checkers

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// chist builds consumer histories by hand.
type chist struct {
	r *Recorder
	t sim.Time
	// gen is each process's generation: its last assign's (1 before any),
	// which its deliveries carry.
	gen map[string]int32
}

func newCHist(sem string) *chist {
	h := &chist{r: NewRecorder()}
	h.r.Consumer(Consumer{Process: "c1", Group: "g", Semantics: sem})
	h.r.Consumer(Consumer{Process: "c2", Group: "g", Semantics: sem})
	return h
}

func (h *chist) tick() sim.Time { h.t = h.t.Add(sim.Millisecond); return h.t }

// send acknowledges value at offset of t-0.
func (h *chist) send(value string, offset int64) {
	id := h.r.Send(h.tick(), "p", "t", 0, "", value, -1)
	h.r.Acked(id, h.tick(), offset)
}

func (h *chist) assign(proc string, gen int32) {
	if h.gen == nil {
		h.gen = map[string]int32{}
	}
	h.gen[proc] = gen
	h.r.Assign(h.tick(), proc, "g", proc, gen, "t", 0)
}
func (h *chist) revoke(proc string, gen int32) {
	h.r.Revoke(h.tick(), proc, "g", proc, gen, "t", 0, "revoked")
}

// consume delivers offset:value pairs "0:a 1:b" to proc.
func (h *chist) consume(proc string, from int64, recs string) {
	gen, ok := h.gen[proc]
	if !ok {
		gen = 1
	}
	id := h.r.Consume(h.tick(), proc, "g", proc, gen, "t", 0, from)
	var rs []Record
	for _, f := range strings.Fields(recs) {
		off, v, _ := strings.Cut(f, ":")
		n := int64(0)
		for _, c := range off {
			n = n*10 + int64(c-'0')
		}
		rs = append(rs, Record{Offset: n, Value: v})
	}
	h.r.Consumed(id, h.tick(), rs)
}

func (h *chist) commit(proc string, gen int32, offset int64, ok bool) {
	id := h.r.Commit(h.tick(), proc, "g", proc, gen, "t", 0, offset)
	if ok {
		h.r.Committed(id, h.tick())
	} else {
		h.r.Fail(id, h.tick(), "ILLEGAL_GENERATION")
	}
}

func kinds(v Verdict) string {
	var ks []string
	for _, a := range v.Anomalies {
		k := a.Kind
		if a.Permitted {
			k += "(permitted)"
		}
		ks = append(ks, k)
	}
	return strings.Join(ks, " ")
}

func sends(h *chist, n int) {
	for i := 0; i < n; i++ {
		h.send(string(rune('a'+i)), int64(i))
	}
}

func TestConsumersMustPass(t *testing.T) {
	h := newCHist(AtLeastOnce)
	sends(h, 4)
	h.assign("c1", 1)
	h.consume("c1", 0, "0:a 1:b")
	h.commit("c1", 1, 2, true)
	h.revoke("c1", 1)
	h.assign("c2", 2)
	h.consume("c2", 2, "2:c 3:d")
	h.commit("c2", 2, 4, true)
	hist := h.r.Finish(h.tick())
	for _, v := range []Verdict{Consumers(hist, Final{}), Groups(hist, Final{})} {
		if v.Result != ResultOK {
			t.Errorf("%s: %v", v.Checker, v)
		}
	}
}

func TestConsumersMustFail(t *testing.T) {
	cases := []struct {
		name  string
		sem   string
		build func(h *chist)
		check func(h History) Verdict
		want  string
	}{
		{"lost-write", AtLeastOnce, func(h *chist) { sends(h, 3); h.consume("c1", 0, "0:a 2:c") }, nil, "lost-write int-poll-skip"},
		{"lost-write at-most-once is permitted", AtMostOnce, func(h *chist) {
			sends(h, 3)
			h.consume("c1", 0, "0:a")
			h.assign("c2", 2)
			h.consume("c2", 2, "2:c")
		}, nil, "lost-write(permitted)"},
		{"duplicate at-most-once", AtMostOnce, func(h *chist) {
			sends(h, 2)
			h.consume("c1", 0, "0:a 1:b")
			h.assign("c2", 2)
			h.consume("c2", 1, "1:b")
		}, nil, "duplicate"},
		{"duplicate at-least-once is permitted", AtLeastOnce, func(h *chist) {
			sends(h, 2)
			h.consume("c1", 0, "0:a 1:b")
			h.assign("c2", 2)
			h.consume("c2", 1, "1:b")
		}, nil, "duplicate(permitted)"},
		{"duplicate exactly-once (the sink applied a value twice)", ExactlyOnce, func(h *chist) {
			sends(h, 2)
			h.consume("c1", 0, "0:a 1:b")
			h.assign("c2", 2)
			h.consume("c2", 1, "1:b")
		}, nil, "duplicate"},
		{"lost-write exactly-once", ExactlyOnce, func(h *chist) {
			sends(h, 3)
			h.consume("c1", 0, "0:a")
			h.assign("c2", 2)
			h.consume("c2", 2, "2:c")
		}, nil, "lost-write"},
		{"G1a: a failed send read", AtLeastOnce, func(h *chist) {
			sends(h, 1)
			id := h.r.Send(h.tick(), "p", "t", 0, "", "x", -1)
			h.r.Fail(id, h.tick(), "NOT_ENOUGH_REPLICAS")
			h.consume("c1", 0, "0:a 1:x")
		}, nil, "G1a"},
		{"a failed send never read is fine", AtLeastOnce, func(h *chist) {
			sends(h, 1)
			id := h.r.Send(h.tick(), "p", "t", 0, "", "x", -1)
			h.r.Fail(id, h.tick(), "NOT_ENOUGH_REPLICAS")
			h.consume("c1", 0, "0:a")
		}, nil, ""},
		{"poll-skip", AtLeastOnce, func(h *chist) { sends(h, 3); h.consume("c1", 0, "0:a"); h.consume("c1", 2, "2:c") }, nil, "lost-write poll-skip"},
		{"nonmonotonic-poll", AtLeastOnce, func(h *chist) {
			sends(h, 2)
			h.consume("c1", 0, "0:a 1:b")
			h.consume("c1", 1, "1:b")
		}, nil, "duplicate(permitted) nonmonotonic-poll"},
		{"int-nonmonotonic-poll", AtLeastOnce, func(h *chist) { sends(h, 2); h.consume("c1", 0, "1:b 0:a") }, nil, "int-nonmonotonic-poll"},
		{"inconsistent-offsets", AtLeastOnce, func(h *chist) { sends(h, 1); h.consume("c1", 0, "0:z") }, nil, "inconsistent-offsets lost-write"},
		{"unseen", AtLeastOnce, func(h *chist) { sends(h, 3); h.consume("c1", 0, "0:a") }, nil, "unseen"},
		{"double-owner", AtLeastOnce, func(h *chist) { h.assign("c1", 3); h.assign("c2", 3) }, func(h History) Verdict { return Groups(h, Final{}) }, "double-owner"},
		{"commit-backwards", AtLeastOnce, func(h *chist) { h.commit("c1", 1, 5, true); h.commit("c2", 2, 3, true) },
			func(h History) Verdict { return Groups(h, Final{}) }, "commit-backwards"},
		{"offset-rewind", AtLeastOnce, func(h *chist) {
			sends(h, 3)
			h.consume("c1", 0, "0:a 1:b")
			h.commit("c1", 1, 2, true)
			h.assign("c2", 2)
			h.consume("c2", 0, "0:a")
		}, func(h History) Verdict { return Groups(h, Final{}) }, "offset-rewind"},
		{"failed commits do not count", AtLeastOnce, func(h *chist) { h.commit("c1", 1, 5, false); h.commit("c2", 2, 3, true) },
			func(h History) Verdict { return Groups(h, Final{}) }, ""},
	}
	for _, c := range cases {
		h := newCHist(c.sem)
		c.build(h)
		hist := h.r.Finish(h.tick())
		check := c.check
		if check == nil {
			check = func(h History) Verdict { return Consumers(h, Final{}) }
		}
		if got := kinds(check(hist)); got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
}

// An unclean election of __consumer_offsets makes rewinds permitted.
func TestGroupsUncleanOffsetsPermitted(t *testing.T) {
	h := newCHist(AtLeastOnce)
	sends(h, 3)
	h.consume("c1", 0, "0:a 1:b")
	h.commit("c1", 1, 2, true)
	h.assign("c2", 2)
	h.consume("c2", 0, "0:a")
	f := Final{Facts: Facts{UncleanElections: []UncleanElection{{Topic: "__consumer_offsets", Partition: 3}}}}
	if got := kinds(Groups(h.r.Finish(h.tick()), f)); got != "offset-rewind(permitted)" {
		t.Errorf("got %q", got)
	}
}

// TestGroupsUnfencedCommitsPermitted: a group whose members commit with
// OffsetCommit v0 (offsets.storage=zookeeper) cannot fence a stale
// member's commit: its backwards commit is permitted, and says why.
func TestGroupsUnfencedCommitsPermitted(t *testing.T) {
	for _, unfenced := range []bool{false, true} {
		h := &chist{r: NewRecorder()}
		h.r.Consumer(Consumer{Process: "c1", Group: "g", Semantics: AtLeastOnce, UnfencedCommits: unfenced})
		h.r.Consumer(Consumer{Process: "c2", Group: "g", Semantics: AtLeastOnce, UnfencedCommits: unfenced})
		h.commit("c1", 1, 5, true)
		h.commit("c2", 2, 3, true)
		v := Groups(h.r.Finish(h.tick()), Final{})
		want := "commit-backwards"
		if unfenced {
			want += "(permitted)"
		}
		if got := kinds(v); got != want {
			t.Errorf("unfenced=%v: got %q, want %q", unfenced, got, want)
		}
		if unfenced && !strings.Contains(v.Anomalies[0].Description, "offsets.storage=zookeeper") {
			t.Errorf("description %q does not say why", v.Anomalies[0].Description)
		}
	}
}
