package harness

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/server"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/sim"
)

// runBuiltin runs a builtin scenario's variant at seed 1 with its trace.
func runBuiltin(t *testing.T, name, variant string) *Result {
	t.Helper()
	s, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, variant, Options{Seed: 1, KeepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Mismatches) > 0 {
		t.Fatalf("%s/%s: mismatches %v", name, variant, res.Mismatches)
	}
	return res
}

// traced returns the trace records of kind.
func traced(res *Result, kind string) []sim.Record {
	var out []sim.Record
	for _, r := range res.World.Trace().Records() {
		if r.Kind == kind {
			out = append(out, r)
		}
	}
	return out
}

// TestMessageTooLargeFailsTheRecord: a batch above the topic's
// max.message.bytes is refused (MESSAGE_TOO_LARGE, certainly not
// written), for the scripted client and for the Kafka producer, which
// fails it after one attempt; a limit lowered at run time applies at once;
// a follower that returns still replicates a batch accepted before.
func TestMessageTooLargeFailsTheRecord(t *testing.T) {
	res := runBuiltin(t, "message-too-large", "limit")
	refused := map[string]bool{}
	for _, op := range res.History.Ops {
		if op.Kind == checkers.Send && op.Outcome == checkers.Fail && strings.Contains(op.Error, "MESSAGE_TOO_LARGE") {
			refused[op.Value] = true
		}
	}
	for _, v := range []string{"this-value-makes-the-batch-larger-than-the-topic-max-message-bytes-of-120", "a-value-of-forty-bytes-or-so-refused-now", "p1-2"} {
		if !refused[v] {
			t.Errorf("%s: not failed with MESSAGE_TOO_LARGE (refused: %v)", v, refused)
		}
	}
	for _, r := range traced(res, "produce-retry") {
		t.Errorf("the producer retried: %s", r.String())
	}
	var forty int64 = -1
	acked := 0
	for _, op := range res.History.Ops {
		if op.Kind == checkers.Send && op.Outcome == checkers.OK && op.Value == "a-value-of-forty-bytes-or-so-for-the-log" {
			forty = op.Offset
		}
		if op.Kind == checkers.Send && op.Process == "p2" && op.Outcome == checkers.OK {
			acked++
		}
	}
	if acked != 8 || len(traced(res, "produce-split")) != 1 {
		t.Errorf("p2: %d of 8 records acknowledged, %d splits: want its refused batch split once and every record appended", acked, len(traced(res, "produce-split")))
	}
	b2 := false
	for _, r := range traced(res, "follower-append") {
		if r.Name == "b2" && strings.Contains(r.String(), fmt.Sprintf("first=%d last=%d", forty, forty)) {
			b2 = true
		}
	}
	if forty < 0 || !b2 {
		t.Errorf("b2 did not replicate offset %d (a 108-byte batch, above the lowered limit of 70) after its restart", forty)
	}
}

// TestAlterConfigEnablesUncleanElection: unclean.leader.election.enable
// turned on while the partition is offline makes the controller elect the
// replica outside the ISR at once from 2.1; at 2.0 nothing happens until
// the next election, which the returning ISR member wins.
func TestAlterConfigEnablesUncleanElection(t *testing.T) {
	res := runBuiltin(t, "unclean-alter-config", "enable")
	el := traced(res, "controller-unclean-election")
	if len(el) != 1 {
		t.Fatalf("unclean elections %v: want one, right after the alter-config step at 31s", el)
	}
	if el[0].Time < sim.Time(31*sim.Second) || el[0].Time > sim.Time(32*sim.Second) {
		t.Errorf("unclean election at %v: want it right after the alter-config step at 31s", el[0].Time)
	}
	for _, v := range []string{"enable-2.0", "keep"} {
		if el := traced(runBuiltin(t, "unclean-alter-config", v), "controller-unclean-election"); len(el) != 0 {
			t.Errorf("%s: unclean elections %v, want none", v, el)
		}
	}
}

// TestAlterConfigAndKeySyntax: the alter-config step and key= arguments
// are checked at parse time as file:line, naming what is allowed.
func TestAlterConfigAndKeySyntax(t *testing.T) {
	h := "brokers 3\ntopic t partitions=1 rf=2\n"
	for src, want := range map[string]string{
		h + "alter-config broker 0 min.insync.replicas=2\n":               "f.txt:3: alter-config: want 'alter-config topic NAME property=value ...'",
		h + "alter-config topic t\n":                                      "f.txt:3: alter-config: want",
		h + "alter-config topic u min.insync.replicas=2\n":                `f.txt:3: alter-config: no topic "u" (the script's topics: t)`,
		h + "alter-config topic t min.insync.replica=2\n":                 `unknown argument "min.insync.replica"; did you mean "min.insync.replicas"?`,
		h + "alter-config topic t max.message.bytes=lots\n":               `f.txt:3: alter-config: topic t: config: max.message.bytes = "lots": not an integer`,
		h + "produce c1 t/0 m1 keys=k\n":                                  `unknown argument "keys"; did you mean "key"?`,
		h + "producer p1\nsend p1 t/0 3 kye=k\n":                          `unknown argument "kye"`,
		h + "alter-config topic t unclean.leader.election.enable=maybe\n": "not a boolean",
	} {
		_, err := scenarios.Parse("f.txt", "f", strings.NewReader(src))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("script %q:\n got %v\nwant it to contain %q", src, err, want)
		}
	}
	ok := h + "producer p1\nsend p1 t/0 3 key=k1\nproduce c1 t/0 m1 key=k2\nalter-config topic t min.insync.replicas=2 cleanup.policy=compact\n"
	if _, err := scenarios.Parse("f.txt", "f", strings.NewReader(ok)); err != nil {
		t.Errorf("valid script: %v", err)
	}
}

// TestAlterConfigRefusedAtRunTime: what depends on the run (the topic's
// replication factor) is refused when the step runs, naming the limit.
func TestAlterConfigRefusedAtRunTime(t *testing.T) {
	s, err := scenarios.Parse("f.txt", "f", strings.NewReader("brokers 3\ntopic t partitions=1 rf=2\nrun 1s\nalter-config topic t min.insync.replicas=3\n"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, s.Variants[0].Name, Options{Seed: 1})
	if err == nil && res != nil {
		err = fmt.Errorf("%s", res.Failed)
	}
	if !strings.Contains(fmt.Sprint(err), "min.insync.replicas 3 above its replication factor 2") {
		t.Fatalf("got %v", err)
	}
}

// TestMinISRPerTopic: each topic's own min.insync.replicas (topic line,
// then alter-config) decides its acks=all produces.
func TestMinISRPerTopic(t *testing.T) {
	res := runBuiltin(t, "min-isr-per-topic", "per-topic")
	got := map[string]string{}
	for _, op := range res.History.Ops {
		if op.Kind == checkers.Send && op.Process == "c1" {
			got[op.Value] = op.Outcome.String() + " " + op.Error
		}
	}
	for v, want := range map[string]string{"s0": "ok", "l0": "ok", "s1": "fail NOT_ENOUGH_REPLICAS", "l1": "ok", "s2": "ok"} {
		if !strings.HasPrefix(got[v], want) {
			t.Errorf("%s: %q, want %q", v, got[v], want)
		}
	}
}

// TestCompactedTopicIsNotLoss: on a compacted topic the cleaner removes
// superseded keyed records (traced as log-cleaned); acked-loss counts
// them as compaction's, not as losses, and the consumer that reads the
// compacted log is not said to skip them.
func TestCompactedTopicIsNotLoss(t *testing.T) {
	res := runBuiltin(t, "compacted-topic", "compact")
	if len(traced(res, "log-cleaned")) == 0 {
		t.Fatal("the cleaner removed nothing: the scenario shows nothing")
	}
	for _, v := range res.Verdicts {
		if v.Checker == checkers.NameAckedLoss && !strings.Contains(strings.Join(v.Notes, "\n"), "removed by log compaction") {
			t.Errorf("acked-loss notes %q: want the records compaction removed counted", v.Notes)
		}
		if v.Result != checkers.ResultOK {
			t.Errorf("%s", v)
		}
	}
	if noKey := len(traced(res, "no-key-on-compacted-topic")); noKey != 0 {
		t.Errorf("%d records without key reached the compacted topic (the liveness probe must carry a key)", noKey)
	}
}

// TestCompressionTypeShapesTheLog: under compression.type=producer the
// log keeps the producer's gzip batch; a topic codec recompresses it
// (zstd); an uncompressed topic stores it decompressed, judged against
// max.message.bytes as stored (MESSAGE_TOO_LARGE).
func TestCompressionTypeShapesTheLog(t *testing.T) {
	res := runBuiltin(t, "compression", "gzip")
	codecs := func(topic string) []int16 {
		var out []int16
		for i := 0; i < 3; i++ {
			id, _ := res.World.Lookup(server.NodeName(int32(i)))
			b, _ := res.World.Node(id).(*server.Broker)
			if b == nil {
				continue
			}
			p, ok := b.Partition(storage.TopicPartition{Topic: topic, Partition: 0})
			if !ok {
				continue
			}
			if err := p.Log().Batches(0, func(bi storage.BatchInfo) { out = append(out, bi.Attributes&storage.CompressionCodecMask) }); err != nil {
				t.Fatal(err)
			}
			return out
		}
		return nil
	}
	if got := codecs("z"); len(got) == 0 || got[0] != storage.CodecGzip {
		t.Errorf("z (compression.type=producer): codecs %v, want the producer's gzip first", got)
	}
	if got := codecs("r"); len(got) == 0 || got[0] != storage.CodecZstd {
		t.Errorf("r (compression.type=zstd): codecs %v, want zstd", got)
	}
	refused := 0
	for _, op := range res.History.Ops {
		if op.Kind == checkers.Send && op.Topic == "u" && op.Process == "p1" {
			if op.Outcome != checkers.Fail || !strings.Contains(op.Error, "MESSAGE_TOO_LARGE") {
				t.Errorf("u: %s %s %s, want MESSAGE_TOO_LARGE", op.Value, op.Outcome, op.Error)
			}
			refused++
		}
	}
	if refused != 20 {
		t.Errorf("u: %d sends refused, want 20", refused)
	}
}

// TestAlterConfigEnablesUncleanElectionKRaft: in KRaft (3.9+) the changed
// value reaches the controller's next periodic unclean check.
func TestAlterConfigEnablesUncleanElectionKRaft(t *testing.T) {
	res := runBuiltin(t, "unclean-alter-config-kraft", "enable")
	var at []sim.Time
	for _, r := range traced(res, "controller-unclean-check") {
		if strings.Contains(r.String(), "elected=1") {
			at = append(at, r.Time)
		}
	}
	if len(at) != 1 || at[0] < sim.Time(31*sim.Second) || at[0] > sim.Time(33*sim.Second) {
		t.Fatalf("unclean elections at %v: want one at the first check after the alter-config step at 31s", at)
	}
	for _, r := range traced(runBuiltin(t, "unclean-alter-config-kraft", "keep"), "controller-unclean-check") {
		if strings.Contains(r.String(), "elected=1") {
			t.Fatalf("keep: %s", r.String())
		}
	}
}
