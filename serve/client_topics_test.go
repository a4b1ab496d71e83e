package serve

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestClientTopicsJudged: the topics clients create are judged as the
// scenario's own. franz-go creates x (2 partitions) and y (1) with
// CreateTopics, RF 3, and has "auto" auto-created (RF 1, Kafka's
// default.replication.factor). An idempotent acks=all producer writes 40
// records to x: the verdicts count them and find them all. An acks=1
// producer writes 10 records to auto, then 5 to y after y's leader was cut
// off from its followers, and the leader loses them in a power loss: the
// acked-loss checker reports those 5 lost (and auto's 10 when its one
// replica is on that broker), permitted under acks=1, and nothing else.
// The tape replays to the same trace.
func TestClientTopicsJudged(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	var tape strings.Builder
	s := startServer(t, 5, &tape, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	admin, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ClientID("admin"))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	create := kmsg.NewPtrCreateTopicsRequest()
	create.TimeoutMillis = 10000
	for _, tp := range []struct {
		name  string
		parts int32
	}{{"x", 2}, {"y", 1}} {
		ct := kmsg.NewCreateTopicsRequestTopic()
		ct.Topic, ct.NumPartitions, ct.ReplicationFactor = tp.name, tp.parts, 3
		create.Topics = append(create.Topics, ct)
	}
	resp, err := admin.Request(ctx, create)
	if err != nil {
		t.Fatal(err)
	}
	for _, ct := range resp.(*kmsg.CreateTopicsResponse).Topics {
		if ct.ErrorCode != 0 {
			t.Fatalf("CreateTopics %s: error %d", ct.Topic, ct.ErrorCode)
		}
	}

	idem, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ClientID("idem"), kgo.DefaultProduceTopic("x"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer idem.Close()
	for i := 0; i < 40; i++ {
		if err := idem.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("x%d", i))}).FirstErr(); err != nil {
			t.Fatalf("produce x%d: %v", i, err)
		}
	}
	idem.Close()

	one, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ClientID("one"), kgo.RequiredAcks(kgo.LeaderAck()),
		kgo.DisableIdempotentWrite(), kgo.AllowAutoTopicCreation(), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer one.Close()
	for i := 0; i < 10; i++ {
		if err := one.ProduceSync(ctx, &kgo.Record{Topic: "auto", Value: []byte(fmt.Sprintf("a%d", i))}).FirstErr(); err != nil {
			t.Fatalf("produce a%d: %v", i, err)
		}
	}
	status := s.Command("status")
	m := regexp.MustCompile(`\ny/0 leader=(\d)`).FindStringSubmatch(status)
	if m == nil || !strings.Contains(status, "\nx/1 leader=") || !strings.Contains(status, "\nauto/0 leader=") {
		t.Fatalf("status does not list the clients' topics:\n%s", status)
	}
	leader := "b" + m[1]
	want := map[string]int{"y": 5} // what the power loss takes
	if regexp.MustCompile(`\nauto/0 leader=` + m[1]).MatchString(status) {
		want["auto"] = 10
	}
	for b := 0; b < 3; b++ {
		if f := fmt.Sprintf("b%d", b); f != leader {
			if a := s.Command("cut " + leader + " <-> " + f); a != "ok" {
				t.Fatalf("cut %s <-> %s: %s", leader, f, a)
			}
		}
	}
	for i := 0; i < 5; i++ {
		if err := one.ProduceSync(ctx, &kgo.Record{Topic: "y", Value: []byte(fmt.Sprintf("y%d", i))}).FirstErr(); err != nil {
			t.Fatalf("produce y%d: %v", i, err)
		}
	}
	one.Close()
	if a := s.Command("power-loss " + leader + " keep=none"); a != "ok" {
		t.Fatalf("power-loss %s: %s", leader, a)
	}

	res := stopAndWait(t, s)
	for _, p := range []struct {
		topic string
		part  int32
	}{{"x", 0}, {"x", 1}, {"y", 0}, {"auto", 0}} {
		if _, ok := res.Final.Partition(p.topic, p.part); !ok {
			t.Errorf("the final state has no %s-%d", p.topic, p.part)
		}
	}
	acked := map[string]int{}
	for _, a := range res.Stats.AckedBy {
		acked[a.Topic] += a.Acked
	}
	if acked["x"] != 40 || acked["auto"] != 10 || acked["y"] != 5 || res.Stats.Acked != 55 {
		t.Errorf("acknowledged %d: %+v, want x 40, auto 10, y 5", res.Stats.Acked, res.Stats.AckedBy)
	}
	var loss checkers.Verdict
	for _, v := range res.Verdicts {
		if v.Checker == checkers.NameAckedLoss {
			loss = v
		}
		if v.ContractBroken() {
			t.Errorf("%s breaks the contract: %v", v.Checker, v)
		}
	}
	lost := map[string]int{}
	for _, a := range loss.Anomalies {
		lost[a.Topic]++
	}
	if loss.Result != checkers.ResultViolation || fmt.Sprint(lost) != fmt.Sprint(want) || res.Stats.AckedLost != want["y"]+want["auto"] {
		t.Fatalf("acked-loss %v with lost records %v (stats %d), want %v: what the power loss took\n%v", loss.Result, lost, res.Stats.AckedLost, want, loss)
	}
	if !strings.Contains(harness.Outcome(loss), "permitted") {
		t.Errorf("acked-loss is %s, want permitted (acks=1)", harness.Outcome(loss))
	}
	// The count says what it counts.
	var out strings.Builder
	reports.WriteRunText(&out, res)
	if !regexp.MustCompile(`\n  acknowledged by client and topic: idem/pid\d+ on x 40, one on auto 10, one on y 5; not counted: the end phase's \d+ probes\n`).MatchString(out.String()) {
		t.Errorf("no breakdown of the acknowledged count in\n%s", out.String())
	}
	replaysTo(t, tape.String(), res, 1)
}

// TestClientTopicsJudgedKRaft: in KRaft mode a client's topic is read off
// the active controller's image: created, produced to and judged.
func TestClientTopicsJudgedKRaft(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	s := startServer(t, 5, nil, map[string]string{"inter.broker.protocol.version": "4.1"})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ClientID("k"), kgo.DefaultProduceTopic("k"), kgo.ProducerLinger(0))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	create := kmsg.NewPtrCreateTopicsRequest()
	create.TimeoutMillis = 10000
	ct := kmsg.NewCreateTopicsRequestTopic()
	ct.Topic, ct.NumPartitions, ct.ReplicationFactor = "k", 1, 3
	create.Topics = append(create.Topics, ct)
	if resp, err := p.Request(ctx, create); err != nil || resp.(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode != 0 {
		t.Fatalf("CreateTopics k: %v %+v", err, resp)
	}
	for i := 0; i < 10; i++ {
		if err := p.ProduceSync(ctx, &kgo.Record{Value: []byte(fmt.Sprintf("k%d", i))}).FirstErr(); err != nil {
			t.Fatalf("produce k%d: %v", i, err)
		}
	}
	p.Close()
	res := stopAndWait(t, s)
	if _, ok := res.Final.Partition("k", 0); !ok {
		t.Fatal("the final state has no k-0")
	}
	if len(res.Stats.AckedBy) != 1 || res.Stats.AckedBy[0].Topic != "k" || res.Stats.AckedBy[0].Acked != 10 {
		t.Fatalf("acknowledged by %+v, want 10 on k", res.Stats.AckedBy)
	}
	for _, v := range res.Verdicts {
		if v.Checker == checkers.NameAckedLoss && v.Result != checkers.ResultOK || v.ContractBroken() {
			t.Errorf("%s: %v", v.Checker, v)
		}
	}
}
