package jepsen

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
)

// The scenarios of these tests are those of Jepsen's own tests of the
// analysis (jepsen/test/jepsen/tests/kafka_test.clj), rewritten as EDN
// lines with integer keys and values (x=1, y=2; a=1, b=2, c=3, d=4, f=6,
// g=7): they pin the definitions to Jepsen's, including its choices about
// :info and :fail ops.

// o is one history line; the :index is the position given.
func o(index, process int, typ, f, value string) string {
	return fmt.Sprintf("{:type :%s, :f :%s, :value %s, :process %d, :index %d}", typ, f, value, process, index)
}

// found runs Check on the lines and returns the anomalies per verdict, and
// the unseen verdict's result.
func found(t *testing.T, lines ...string) (map[string][]checkers.Anomaly, checkers.Result) {
	t.Helper()
	h, err := ReadHistory(strings.NewReader(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]checkers.Anomaly{}
	var unseen checkers.Result
	for _, v := range Check(h) {
		if len(v.Anomalies) > 0 {
			out[v.Checker] = v.Anomalies
		}
		if v.Checker == NameUnseen {
			unseen = v.Result
		}
	}
	return out, unseen
}

// expect checks that name has exactly len(want) anomalies, the i-th
// containing every substring of want[i].
func expect(t *testing.T, got map[string][]checkers.Anomaly, name string, want ...[]string) {
	t.Helper()
	if len(got[name]) != len(want) {
		t.Errorf("%s: %d anomalies, want %d: %v", name, len(got[name]), len(want), got[name])
		return
	}
	for i, subs := range want {
		s := got[name][i].String()
		for _, sub := range subs {
			if !strings.Contains(s, sub) {
				t.Errorf("%s #%d: %q lacks %q", name, i, s, sub)
			}
		}
	}
}

func TestUpstreamVersionOrders(t *testing.T) {
	// Read a, b at offsets 0, 1; an :info txn sent c at 1, b at 3, d at 4,
	// which committed since b was read: offset 1 holds b and c.
	got, _ := found(t,
		o(0, 0, "ok", "txn", "[[:poll {1 [[0 1] [1 2]]}]]"),
		o(1, 1, "info", "txn", "[[:send 1 [1 3]] [:send 1 [3 2]] [:send 1 [4 4]]]"))
	expect(t, got, NameInconsistentOffsets, []string{"offsets=[1]", "offset 1 (index 1) holds values 2, 3", "(ops #0, #1)"})
	expect(t, got, NameDuplicate, []string{"key=1 value=2 offsets=[1 3]"})

	// A real-world example: two acknowledged sends at offset 537.
	got, _ = found(t,
		o(0, 379, "invoke", "send", "[[:send 11 641]]"),
		o(1, 379, "ok", "send", "[[:send 11 [537 641]]]"),
		o(2, 363, "invoke", "send", "[[:send 11 645]]"),
		o(3, 363, "ok", "send", "[[:send 11 [537 645]]]"))
	expect(t, got, NameInconsistentOffsets, []string{"key=11 offsets=[537]: offset 537 (index 0) holds values 641, 645"})
}

func TestUpstreamInconsistentOffsetsInfo(t *testing.T) {
	// An :info send conflicting with an :ok one does not count until a
	// read proves the :info one committed.
	h := []string{
		o(0, 0, "invoke", "send", "[[:send 1 1] [:send 2 1]]"),
		o(1, 0, "info", "send", "[[:send 1 [0 1]] [:send 2 1]]"),
		o(2, 1, "invoke", "send", "[[:send 1 2]]"),
		o(3, 1, "ok", "send", "[[:send 1 [0 2]]]"),
	}
	got, _ := found(t, h...)
	expect(t, got, NameInconsistentOffsets)
	got, _ = found(t, append(h, o(4, 2, "invoke", "poll", "[[:poll]]"), o(5, 2, "ok", "poll", "[[:poll {2 [[5 1]]}]]"))...)
	expect(t, got, NameInconsistentOffsets, []string{"key=1 offsets=[0]", "holds values 1, 2"})
}

func TestUpstreamG1a(t *testing.T) {
	got, _ := found(t,
		o(0, 0, "invoke", "send", "[[:send 1 2] [:send 2 3]]"),
		o(1, 0, "fail", "send", "[[:send 1 2] [:send 2 3]]"),
		o(2, 1, "invoke", "poll", "[[:poll]]"),
		o(3, 1, "ok", "poll", "[[:poll {1 [[0 2]]}]]"))
	expect(t, got, NameG1a, []string{"key=1 value=2", "(ops #1, #3)"})
}

func TestUpstreamLostWrite(t *testing.T) {
	// a at 0, b at 1, d at 3; a poll reads c at 2: a and b are lost.
	got, _ := found(t,
		o(0, 0, "invoke", "send", "[[:send 1 1]]"),
		o(1, 0, "ok", "send", "[[:send 1 [0 1]]]"),
		o(2, 0, "invoke", "send", "[[:send 1 2] [:send 1 4]]"),
		o(3, 0, "ok", "send", "[[:send 1 [1 2]] [:send 1 [3 4]]]"),
		o(4, 1, "invoke", "send", "[[:send 1 3]]"),
		o(5, 1, "info", "send", "[[:send 1 3]]"),
		o(6, 0, "invoke", "poll", "[[:poll]]"),
		o(7, 0, "ok", "poll", "[[:poll {1 [[2 3]]}]]"))
	expect(t, got, NameLostWrite,
		[]string{"key=1 value=1 offsets=[0]", "sent by #1", "index 0", "#7 read value 3 at offset 2 (index 2)"},
		[]string{"key=1 value=2 offsets=[1]", "sent by #3", "index 1", "(index 2)"})

	// Inconsistent offsets: a at 0 is overwritten by b at 0; reading b and
	// c still means a should have been read.
	got, _ = found(t,
		o(0, 0, "invoke", "send", "[[:send 1 1]]"),
		o(1, 0, "ok", "send", "[[:send 1 [0 1]]]"),
		o(2, 0, "invoke", "send", "[[:send 1 2] [:send 1 3]]"),
		o(3, 0, "ok", "send", "[[:send 1 [0 2]] [:send 1 [2 3]]]"),
		o(4, 0, "invoke", "poll", "[[:poll]]"),
		o(5, 0, "ok", "poll", "[[:poll {1 [[0 2] [2 3]]}]]"))
	expect(t, got, NameLostWrite, []string{"key=1 value=1 offsets=[0]", "(index 1)", "(ops #1, #5)"})

	// (Not in Jepsen's tests.) A value sharing the index of the highest
	// value read is below the bound too: b was read at offset 0, where a
	// was acknowledged.
	got, _ = found(t,
		o(1, 0, "ok", "send", "[[:send 1 [0 1]]]"),
		o(3, 1, "ok", "send", "[[:send 1 [0 2]]]"),
		o(5, 2, "ok", "poll", "[[:poll {1 [[0 2]]}]]"))
	expect(t, got, NameLostWrite, []string{"key=1 value=1 offsets=[0]", "(ops #1, #5)"})

	// Atomicity: a crashed send of a (to x) and b (to y at 0) counts once a
	// poll reads a; then b, below c on y, is lost.
	h := []string{
		o(0, 0, "invoke", "send", "[[:send 1 1] [:send 2 2]]"),
		o(1, 0, "info", "send", "[[:send 1 1] [:send 2 [0 2]]]"),
		o(2, 1, "invoke", "send", "[[:send 2 3]]"),
		o(3, 1, "info", "send", "[[:send 2 3]]"),
	}
	pollC := []string{o(6, 3, "invoke", "poll", "[[:poll]]"), o(7, 3, "ok", "poll", "[[:poll {2 [[1 3]]}]]")}
	got, _ = found(t, append(append([]string(nil), h...), pollC...)...)
	expect(t, got, NameLostWrite)
	got, _ = found(t, append(append(h, o(4, 2, "invoke", "poll", "[[:poll]]"), o(5, 2, "ok", "poll", "[[:poll {1 [[0 1]]}]]")), pollC...)...)
	expect(t, got, NameLostWrite, []string{"key=2 value=2 offsets=[0]", "sent by #1 (info)", "(ops #1, #7)"})
}

func TestUpstreamPollSkip(t *testing.T) {
	poll12 := []string{o(0, 0, "invoke", "poll", "[[:poll]]"), o(1, 0, "ok", "poll", "[[:poll {1 [[1 1] [2 2]]}]]")}
	poll3 := []string{o(2, 1, "invoke", "poll", "[[:poll]]"), o(3, 1, "ok", "poll", "[[:poll {1 [[3 3]]}]]")}
	poll4 := []string{o(6, 0, "invoke", "poll", "[[:poll]]"), o(7, 0, "ok", "poll", "[[:poll {1 [[4 4]]}]]")}
	rest := []string{
		o(10, 2, "invoke", "send", "[[:send 1 6]]"), o(11, 2, "ok", "send", "[[:send 1 [6 6]]]"),
		o(12, 0, "invoke", "poll", "[[:poll]]"), o(13, 0, "ok", "poll", "[[:poll {1 [[7 7]]}]]"),
		o(14, 3, "invoke", "send", "[[:send 1 1] [:send 1 2] [:send 1 3] [:send 1 4] [:send 1 7]]"),
		o(15, 3, "info", "send", "[[:send 1 1] [:send 1 2] [:send 1 3] [:send 1 4] [:send 1 7]]"),
	}
	join := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	want := [][]string{
		{"key=1 offsets=[3]", "skipping 3 (delta 2) (ops #1, #7)"},
		{"key=1 offsets=[6]", "skipping 6 (delta 2) (ops #7, #13)"},
	}
	got, _ := found(t, join(poll12, poll3, poll4, rest)...)
	expect(t, got, NamePollSkip, want...)

	// Subscribing or assigning away from x forgets where process 0 was.
	subY := []string{o(4, 0, "invoke", "subscribe", "[2]"), o(5, 0, "ok", "subscribe", "[2]")}
	assignY := []string{o(8, 0, "invoke", "assign", "[2]"), o(9, 0, "info", "assign", "[2]")}
	got, _ = found(t, join(poll12, poll3, subY, poll4, assignY, rest)...)
	expect(t, got, NamePollSkip)
	// Ones that still cover x keep it (and a subscribe makes skips permitted).
	subXY := []string{o(4, 0, "invoke", "subscribe", "[1 2]"), o(5, 0, "ok", "subscribe", "[1 2]")}
	assignXY := []string{o(8, 0, "invoke", "assign", "[1 2]"), o(9, 0, "ok", "assign", "[1 2]")}
	got, _ = found(t, join(poll12, poll3, subXY, poll4, assignXY, rest)...)
	expect(t, got, NamePollSkip, append(want[:1:1], append(want[1], "[permitted]"))...)
}

func TestUpstreamPollSkipAborts(t *testing.T) {
	sends := func(n int) []string {
		var inv, ok []string
		for i := 0; i < n; i++ {
			inv = append(inv, fmt.Sprintf("[:send 1 %d]", i))
			ok = append(ok, fmt.Sprintf("[:send 1 [%d %d]]", i, i))
		}
		return []string{o(0, 0, "invoke", "send", "["+strings.Join(inv, " ")+"]"), o(1, 0, "ok", "send", "["+strings.Join(ok, " ")+"]")}
	}
	poll := func(i int, typ, reads string) []string {
		return []string{o(i, 1, "invoke", "txn", "[[:poll]]"), o(i+1, 1, typ, "txn", "[[:poll {1 ["+reads+"]}]]")}
	}
	join := func(parts ...[]string) []string {
		var out []string
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	// Aborted polls pick up where the last ok one left off: all good.
	got, unseen := found(t, join(sends(3), poll(2, "ok", "[0 0]"), poll(4, "fail", "[1 1] [2 2]"), poll(6, "info", "[1 1] [2 2]"), poll(8, "ok", "[1 1] [2 2]"))...)
	if len(got) != 0 || unseen != checkers.ResultOK {
		t.Errorf("aborted polls that rewind: %v, unseen %v", got, unseen)
	}
	// An abort does not move the position: polling on past it skips.
	got, _ = found(t, join(sends(6), poll(2, "ok", "[0 0]"), poll(4, "fail", "[1 1] [2 2]"), poll(6, "fail", "[3 3] [4 4]"), poll(8, "ok", "[5 5]"))...)
	expect(t, got, NamePollSkip,
		[]string{"offsets=[1 2]", "skipping 1, 2 (delta 3) (ops #3, #7)"},
		[]string{"offsets=[1 2 3 4]", "skipping 1, 2, 3, 4 (delta 5) (ops #3, #9)"})
	// An :info poll can be a poll-skip too.
	got, _ = found(t, join(sends(6), poll(2, "ok", "[0 0]"), poll(4, "fail", "[1 1] [2 2]"), poll(6, "info", "[3 3] [4 4]"))...)
	expect(t, got, NamePollSkip, []string{"skipping 1, 2 (delta 3) (ops #3, #7)"})
}

func TestUpstreamNonmonotonicPoll(t *testing.T) {
	base := []string{
		o(0, 0, "invoke", "send", "[[:send 1 1] [:send 1 2] [:send 1 3] [:send 1 4]]"),
		o(1, 0, "ok", "send", "[[:send 1 1] [:send 1 2] [:send 1 3] [:send 1 4]]"),
		o(2, 0, "invoke", "poll", "[[:poll]]"),
		o(3, 0, "ok", "poll", "[[:poll {1 [[1 1] [2 2] [3 3]]}]]"),
	}
	poll234 := []string{o(6, 0, "invoke", "poll", "[[:poll]]"), o(7, 0, "ok", "poll", "[[:poll {1 [[2 2] [3 3] [4 4]]}]]")}
	for _, c := range []struct {
		between string
		want    int
	}{{"", 1}, {"subscribe [2]", 0}, {"assign [2]", 0}, {"subscribe [1 2]", 1}, {"assign [1 2]", 1}} {
		h := append([]string(nil), base...)
		if c.between != "" {
			f, v, _ := strings.Cut(c.between, " ")
			h = append(h, o(4, 0, "invoke", f, v), o(5, 0, "ok", f, v))
		}
		got, _ := found(t, append(h, poll234...)...)
		if c.want == 0 {
			expect(t, got, NameNonmonotonicPoll)
		} else {
			expect(t, got, NameNonmonotonicPoll, []string{"key=1 offsets=[3 2]", "read up to value 3, then #7 started at 2 (delta -1) (ops #3, #7)"})
		}
	}
}

func TestUpstreamNonmonotonicSend(t *testing.T) {
	send34 := []string{o(0, 0, "invoke", "send", "[[:send 1 3] [:send 1 4]]"), o(1, 0, "ok", "send", "[[:send 1 [3 3]] [:send 1 [4 4]]]")}
	send12 := []string{o(10, 0, "invoke", "send", "[[:send 1 1] [:send 1 2]]"), o(11, 0, "ok", "send", "[[:send 1 [1 1]] [:send 1 [2 2]]]")}
	for _, c := range []struct {
		between []string
		want    int
	}{
		{nil, 1},
		{[]string{o(2, 0, "invoke", "subscribe", "[2]"), o(3, 0, "ok", "subscribe", "[2]")}, 0},
		{[]string{o(2, 0, "invoke", "assign", "[2]"), o(3, 0, "info", "assign", "[2]")}, 0},
		{[]string{o(2, 0, "invoke", "subscribe", "[1 2]"), o(3, 0, "ok", "subscribe", "[1 2]")}, 1},
	} {
		h := append(append(append([]string(nil), send34...), c.between...), send12...)
		got, _ := found(t, h...)
		if c.want == 0 {
			expect(t, got, NameNonmonotonicSend)
		} else {
			expect(t, got, NameNonmonotonicSend, []string{"key=1 offsets=[4 1]", "sent up to value 4, then #11 started at 1 (delta -3) (ops #1, #11)"})
		}
	}
}

func TestUpstreamInternal(t *testing.T) {
	// int-poll-skip, within one poll and across two polls of one op.
	got, _ := found(t,
		o(0, 1, "invoke", "send", "[[:send 1 1] [:send 1 2] [:send 1 4]]"),
		o(1, 1, "info", "send", "[[:send 1 1] [:send 1 2] [:send 1 4]]"),
		o(2, 0, "invoke", "poll", "[[:poll]]"),
		o(3, 0, "ok", "poll", "[[:poll {1 [[1 1] [4 4]]}]]"),
		o(4, 0, "invoke", "poll", "[[:poll] [:poll]]"),
		o(5, 0, "ok", "poll", "[[:poll {1 [[1 1]]}] [:poll {1 [[4 4]]}]]"),
		o(6, 0, "invoke", "poll", "[[:poll]]"),
		o(7, 0, "ok", "poll", "[[:poll {1 [[2 2]]}]]"))
	expect(t, got, NameIntPollSkip,
		[]string{"offsets=[2]", "#3 read value 1 then 4, skipping 2 (delta 2)"},
		[]string{"offsets=[2]", "#5 read value 1 then 4, skipping 2 (delta 2)"})

	// int-send-skip: c's offset is only known from a poll.
	got, _ = found(t,
		o(0, 0, "invoke", "send", "[[:send 1 1] [:send 1 3]]"),
		o(1, 0, "ok", "send", "[[:send 1 [1 1]] [:send 1 3]]"),
		o(2, 1, "invoke", "send", "[[:send 1 2]]"),
		o(3, 1, "info", "send", "[[:send 1 2]]"),
		o(4, 2, "invoke", "poll", "[[:poll]]"),
		o(5, 2, "ok", "poll", "[[:poll {1 [[2 2] [3 3]]}]]"))
	expect(t, got, NameIntSendSkip, []string{"#1 sent value 1 then 3, skipping 2 (delta 2)", "[permitted]"})

	// int-nonmonotonic-poll: backwards, and the same value twice.
	got, _ = found(t,
		o(0, 0, "invoke", "send", "[[:send 1 1] [:send 1 2] [:send 1 3]]"),
		o(1, 0, "info", "send", "[[:send 1 1] [:send 1 2] [:send 1 3]]"),
		o(2, 0, "invoke", "poll", "[[:poll]]"),
		o(3, 0, "ok", "poll", "[[:poll {1 [[3 3] [1 1]]}]]"),
		o(4, 0, "invoke", "poll", "[[:poll]]"),
		o(5, 0, "ok", "poll", "[[:poll {1 [[2 2] [3 3]]}] [:poll {1 [[3 3]]}]]"))
	expect(t, got, NameIntNonmonotonicPoll,
		[]string{"#3 read value 3 then 1 (delta -2)"},
		[]string{"#5 read value 3 then 3 (delta 0)"})

	// int-nonmonotonic-send: offsets out of order, or an order the polls show.
	got, _ = found(t,
		o(0, 0, "invoke", "send", "[[:send 1 3] [:send 1 1]]"),
		o(1, 0, "ok", "send", "[[:send 1 [3 3]] [:send 1 [1 1]]]"),
		o(2, 0, "invoke", "send", "[[:send 2 4] [:send 2 2]]"),
		o(3, 0, "info", "send", "[[:send 2 4] [:send 2 2]]"),
		o(4, 1, "invoke", "send", "[[:send 2 3]]"),
		o(5, 1, "info", "send", "[[:send 2 3]]"),
		o(6, 0, "invoke", "poll", "[[:poll]]"),
		o(7, 0, "ok", "poll", "[[:poll {2 [[2 2] [3 3] [4 4]]}]]"))
	expect(t, got, NameIntNonmonotonicSend,
		[]string{"key=1", "#1 sent value 3 then 1 (delta -1)"},
		[]string{"key=2", "#3 sent value 4 then 2 (delta -2)"})
}

func TestUpstreamDuplicate(t *testing.T) {
	// a sent at 1 and polled at 3.
	got, _ := found(t,
		o(0, 0, "invoke", "send", "[[:send 1 1]]"),
		o(1, 0, "ok", "send", "[[:send 1 [1 1]]]"),
		o(2, 1, "invoke", "send", "[[:send 1 2]]"),
		o(3, 1, "info", "send", "[[:send 1 2]]"),
		o(4, 2, "invoke", "poll", "[[:poll]]"),
		o(5, 2, "ok", "poll", "[[:poll {1 [[2 2] [3 1]]}]]"))
	expect(t, got, NameDuplicate, []string{"key=1 value=1 offsets=[1 3]", "(ops #1, #5)"})

	// Ten values each sent at 0 and polled at 1: every one is a duplicate,
	// and both offsets are inconsistent, whatever the map order.
	var h []string
	var want [][]string
	for v := 0; v < 10; v++ {
		i := 4 * v
		h = append(h, o(i, 0, "invoke", "send", fmt.Sprintf("[[:send 1 %d]]", v)),
			o(i+1, 0, "ok", "send", fmt.Sprintf("[[:send 1 [0 %d]]]", v)),
			o(i+2, 1, "invoke", "poll", "[[:poll]]"),
			o(i+3, 1, "ok", "poll", fmt.Sprintf("[[:poll {1 [[1 %d]]}]]", v)))
		want = append(want, []string{fmt.Sprintf("key=1 value=%d offsets=[0 1]", v)})
	}
	got, _ = found(t, h...)
	expect(t, got, NameDuplicate, want...)
	expect(t, got, NameInconsistentOffsets,
		[]string{"offset 0 (index 0) holds values 0, 1, 2, 3, 4, 5, 6, 7, 8, 9"},
		[]string{"offset 1 (index 1) holds values 0, 1, 2, 3, 4, 5, 6, 7, 8, 9"})

	// An aborted poll's reads count; a failed send's offset does not.
	got, _ = found(t,
		o(0, 0, "invoke", "send", "[[:send 1 0]]"),
		o(1, 0, "ok", "send", "[[:send 1 [1 0]]]"),
		o(2, 0, "invoke", "send", "[[:send 1 1]]"),
		o(3, 0, "fail", "send", "[[:send 1 [2 1]]]"),
		o(4, 1, "invoke", "poll", "[[:poll]]"),
		o(5, 1, "fail", "poll", "[[:poll {1 [[11 0] [12 1]]}]]"))
	expect(t, got, NameDuplicate, []string{"key=1 value=0 offsets=[1 11]"})
}
