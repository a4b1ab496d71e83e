package serve

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// startServer serves the built-in cluster on ephemeral ports and stops it
// at the end of the test.
func startServer(t *testing.T, speed float64, tape io.Writer, set map[string]string) *Server {
	t.Helper()
	return startConfig(t, Config{Script: ClusterScenario(), Seed: 1, Speed: speed, Set: set, Log: testLog{t}, Tape: tape})
}

// startConfig starts cfg, stops it at the end of the test and waits until
// it is ready.
func startConfig(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Command("stop")
		s.Wait()
	})
	select {
	case <-s.Ready():
	case <-time.After(30 * time.Second):
		t.Fatal("not ready within 30s")
	}
	return s
}

// stopAndWait stops the served run and returns its result, which must not
// have failed.
func stopAndWait(t *testing.T, s *Server) *harness.Result {
	t.Helper()
	if a := s.Command("stop"); a != "stopping" {
		t.Fatalf("stop: %q", a)
	}
	res, err := s.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if res.Failed != "" {
		t.Fatalf("run failed: %s", res.Failed)
	}
	return res
}

// ackedSends counts the acknowledged sends of processes named prefix...
func ackedSends(res *harness.Result, prefix string) int {
	n := 0
	for _, op := range res.History.Ops {
		if op.Kind == checkers.Send && op.Outcome == checkers.OK && strings.HasPrefix(op.Process, prefix) {
			n++
		}
	}
	return n
}

// readBackAll fails unless got holds prefix0 .. prefix(n-1), each once.
func readBackAll(t *testing.T, client string, got []string, prefix string, n int) {
	t.Helper()
	var want []string
	for i := 0; i < n; i++ {
		want = append(want, fmt.Sprintf("%s%d", prefix, i))
	}
	got = slices.Clone(got)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s read back %d records, want the %d produced:\n%v", client, len(got), n, got)
	}
}

type testLog struct{ t *testing.T }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

// leaderOf asks b0's metadata for the leader of t/p.
func leaderOf(t *testing.T, s *Server, p int32) string {
	t.Helper()
	c := dial(t, s.Addrs()[0])
	resp, err := c.do(metadataReq())
	if err != nil {
		t.Fatal(err)
	}
	md := resp.(*kmsg.MetadataResponse)
	for _, tp := range md.Topics {
		if *tp.Topic != "t" {
			continue
		}
		for _, pp := range tp.Partitions {
			if pp.Partition == p {
				for _, b := range md.Brokers {
					if b.NodeID == pp.Leader {
						return fmt.Sprintf("%s:%d", b.Host, b.Port)
					}
				}
			}
		}
	}
	t.Fatalf("no leader for t/%d in %+v", p, md)
	return ""
}

func TestServeProduceFetchStop(t *testing.T) {
	var tape bytes.Buffer
	s := startServer(t, 20, &tape, nil)
	addr := leaderOf(t, s, 0)
	found := false
	for _, a := range s.Addrs() {
		found = found || a == addr
	}
	if !found {
		t.Fatalf("metadata advertises %s, not one of the listeners %v", addr, s.Addrs())
	}
	c := dial(t, addr)
	for i := 0; i < 5; i++ {
		resp, err := c.do(produceReq("t", 0, -1, fmt.Sprintf("v%d", i)))
		if err != nil {
			t.Fatal(err)
		}
		pr := resp.(*kmsg.ProduceResponse)
		if code := pr.Topics[0].Partitions[0].ErrorCode; code != 0 || pr.Topics[0].Partitions[0].BaseOffset != int64(i) {
			t.Fatalf("produce v%d: error %d offset %d", i, code, pr.Topics[0].Partitions[0].BaseOffset)
		}
	}
	resp, err := c.do(fetchReq("t", 0, 0))
	if err != nil {
		t.Fatal(err)
	}
	fr := resp.(*kmsg.FetchResponse)
	var got []string
	eachRecord(fr.Topics[0].Partitions[0].RecordBatches, func(_ *kmsg.RecordBatch, r *kmsg.Record) { got = append(got, string(r.Value)) })
	if strings.Join(got, ",") != "v0,v1,v2,v3,v4" {
		t.Fatalf("fetched %v", got)
	}
	if a := s.Command("status"); !strings.Contains(a, "t/0 leader=") {
		t.Fatalf("status: %q", a)
	}
	if a := s.Command("crash-leader t/1"); !strings.HasPrefix(a, "ok: crashed b") {
		t.Fatalf("crash-leader: %q", a)
	}
	// At once, before the controller elects another, t/1 has no live
	// leader: status says so with the last high watermark, never hw=-1.
	if a := s.Command("status"); strings.Contains(a, "hw=-1") || !regexp.MustCompile(`t/1 leader=\d+ epoch=\d+ isr=\[[0-9,]*\] (hw=\d+|offline since [0-9.]+m?s simulated \(no live leader\), last known hw=\d+)`).MatchString(a) {
		t.Fatalf("status after crash-leader t/1: %q", a)
	}
	if a := s.Command("explode b0"); !strings.Contains(a, "unknown command") || !strings.Contains(a, "crash bN") {
		t.Fatalf("unknown command answered %q", a)
	}
	res := stopAndWait(t, s)
	if acked := ackedSends(res, ""); acked < 5 {
		t.Fatalf("history has %d acknowledged sends, want at least 5:\n%v", ackedSends(res, ""), res.History.Ops)
	}
	for _, v := range res.Verdicts {
		if v.Checker == "acked-loss" && v.Result != checkers.ResultOK {
			t.Fatalf("acked-loss: %v", v)
		}
	}

	// The tape replays to the same trace, twice.
	replaysTo(t, tape.String(), res, 2)
}

// replaysTo replays tape times and fails unless each replay ends with the
// served run's trace hash and event count.
func replaysTo(t *testing.T, tape string, res *harness.Result, times int) {
	t.Helper()
	h, entries, err := ReadTape(strings.NewReader(tape))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < times; i++ {
		rep, err := Replay(h, entries, ReplayOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.TraceHash != res.TraceHash || rep.Events != res.Events {
			t.Fatalf("replay %d: trace %016x after %d events, served %016x after %d", i+1, rep.TraceHash, rep.Events, res.TraceHash, res.Events)
		}
	}
}

// TestCrashedBrokerRefusesConnections: a crashed broker's listener is
// closed, so a client's connect is refused (as with a Kafka process that
// is gone) rather than accepted and dropped; a restart opens it again on
// the same address once the broker has started up (registered: its old
// ZooKeeper session expires first), and the new connection is served.
func TestCrashedBrokerRefusesConnections(t *testing.T) {
	s := startServer(t, 20, nil, nil)
	addr := s.Addrs()[1]
	before := dial(t, addr)
	if a := s.Command("crash b1"); a != "ok" {
		t.Fatalf("crash b1: %q", a)
	}
	if _, err := before.do(metadataReq()); err == nil {
		t.Fatal("a connection to the crashed b1 still answers")
	}
	if nc, err := net.DialTimeout("tcp", addr, 5*time.Second); err == nil {
		nc.Close()
		t.Fatalf("dialing the crashed b1 at %s connected", addr)
	} else if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dialing the crashed b1: %v, want connection refused", err)
	}
	if a := s.Command("restart b1"); a != "ok" {
		t.Fatalf("restart b1: %q", a)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err == nil {
			nc.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("b1 restarted but refuses connections: %v\n%s", err, s.Command("status"))
		}
		time.Sleep(20 * time.Millisecond)
	}
	after := dial(t, addr)
	if _, err := after.do(metadataReq()); err != nil {
		t.Fatalf("after restart b1, a new connection: %v", err)
	}
	stopAndWait(t, s)
}
