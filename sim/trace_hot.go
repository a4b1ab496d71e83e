package sim

// This file is the trace's fast path for the records the kernel writes for
// every message and timer (send, recv, timer). Each hashes exactly as add
// would hash the same record — TestHotRecordsHashAsAdd holds them to it —
// but mixes its constant kind and keys from words read once, and builds no
// []Field unless the record is kept. Two such records per delivered message
// were about a third of the kernel's instructions.

// short is a string of at most 7 bytes as mixString reads it: its length,
// then its one (partial) word.
type short struct{ n, w uint64 }

func shortOf(s string) short {
	if len(s) > 7 {
		panic("sim: shortOf(" + s + "): longer than 7 bytes")
	}
	var w uint64
	for i := 0; i < len(s); i++ {
		w = w<<8 | uint64(s[i])
	}
	return short{n: uint64(len(s)), w: w}
}

// mixShort is mixString(h, s) for the string s was made from.
func mixShort(h uint64, s short) uint64 { return mix(mix(h, s.n), s.w) }

// hotKinds are the kinds of Trace.hot, in order.
var hotKinds = [3]string{"send", "recv", "timer"}

const (
	hotSend = iota
	hotRecv
	hotTimer
)

var (
	kSend, kRecv, kTimer                        = shortOf("send"), shortOf("recv"), shortOf("timer")
	kTo, kFrom, kMsg, kSize, kLatency, kNameKey = shortOf("to"), shortOf("from"), shortOf("msg"), shortOf("size"), shortOf("latency"), shortOf("name")
)

// addSend is add(..., "send", to=, msg=, size=, latency=).
func (t *Trace) addSend(event uint64, now Time, node NodeID, name, to, msg string, size, latency int64) {
	if t.hot[hotSend] {
		t.add(event, now, node, name, "send", []Field{S("to", to), S("msg", msg), I("size", size), I("latency", latency)})
		return
	}
	h := mixShort(t.head(event, now, node), kSend)
	h = mixString(mixShort(h, kTo), to)
	h = mixString(mixShort(h, kMsg), msg)
	h = mix(mixShort(h, kSize), uint64(size))
	t.hash = mix(mixShort(h, kLatency), uint64(latency))
	t.count++
}

// addRecv is add(..., "recv", from=, msg=).
func (t *Trace) addRecv(event uint64, now Time, node NodeID, name, from, msg string) {
	if t.hot[hotRecv] {
		t.add(event, now, node, name, "recv", []Field{S("from", from), S("msg", msg)})
		return
	}
	h := mixShort(t.head(event, now, node), kRecv)
	h = mixString(mixShort(h, kFrom), from)
	t.hash = mixString(mixShort(h, kMsg), msg)
	t.count++
}

// addTimer is add(..., "timer", name=timer).
func (t *Trace) addTimer(event uint64, now Time, node NodeID, name, timer string) {
	if t.hot[hotTimer] {
		t.add(event, now, node, name, "timer", []Field{S("name", timer)})
		return
	}
	h := mixShort(t.head(event, now, node), kTimer)
	t.hash = mixString(mixShort(h, kNameKey), timer)
	t.count++
}
