package harness

import (
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/google/go-cmp/cmp"
)

// refusedScript produces m1 to a leader whose ISR is below
// min.insync.replicas: Kafka refuses it with NOT_ENOUGH_REPLICAS.
const refusedScript = `controller manual
brokers 2
topic t partitions=1 rf=2 assignment=0,1
set min.insync.replicas=2
crash b1
leader-and-isr t/0 leader=b0 epoch=0 isr=b0
run 10ms
produce p1 t/0 m1 acks=all
await p1 %s m1
run 1s
`

func runRefused(t *testing.T, await string) *Result {
	t.Helper()
	s, err := scenarios.Parse("refused.txt", "refused", strings.NewReader(strings.Replace(refusedScript, "%s", await, 1)))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, "", Options{Seed: 1, KeepTrace: true})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// clientOutcomes are the trace's records of the scripted clients' outcomes.
func clientOutcomes(r *Result) []string {
	var out []string
	for _, rec := range r.World.Trace().Records() {
		if strings.HasPrefix(rec.Kind, "client-") && rec.Kind != "client-produce" && rec.Name != CheckerClient {
			out = append(out, rec.Kind+" "+strings.Join(strings.Fields(rec.String())[4:], " "))
		}
	}
	return out
}

// TestAwaitAckFailsOnRefusedProduce: 'await p1 ack m1' is an expectation
// that m1 is acknowledged; a produce refused with NOT_ENOUGH_REPLICAS
// breaks the run, naming the record and the error.
func TestAwaitAckFailsOnRefusedProduce(t *testing.T) {
	res := runRefused(t, "ack")
	for _, want := range []string{"refused.txt:9", "m1 was not acknowledged", "NOT_ENOUGH_REPLICAS"} {
		if !strings.Contains(res.Failed, want) {
			t.Errorf("Failed = %q, want it to contain %q", res.Failed, want)
		}
	}
	if res.OK() {
		t.Error("the run is OK; want it failed")
	}
}

// TestAwaitDoneAcceptsAnyOutcome: 'await p1 done m1' waits for m1's
// outcome, whatever it is; the refusal is in the trace with its error.
func TestAwaitDoneAcceptsAnyOutcome(t *testing.T) {
	res := runRefused(t, "done")
	if res.Failed != "" {
		t.Fatalf("run failed: %s", res.Failed)
	}
	want := []string{"client-fail client=p1 value=m1 error=NOT_ENOUGH_REPLICAS"}
	if d := cmp.Diff(want, clientOutcomes(res)); d != "" {
		t.Errorf("client outcomes in the trace (-want +got):\n%s", d)
	}
	story := strings.Join(Story(res), "\n")
	if !strings.Contains(story, "m1 is refused (NOT_ENOUGH_REPLICAS)") {
		t.Errorf("the story does not tell the refusal:\n%s", story)
	}
}

// TestAwaitAckFailsOnTimeout: a produce the leader cannot replicate in
// time is answered REQUEST_TIMED_OUT: unknown, not an acknowledgement.
func TestAwaitAckFailsOnTimeout(t *testing.T) {
	src := `controller manual
brokers 2
topic t partitions=1 rf=2 assignment=0,1
set min.insync.replicas=1
leader-and-isr t/0 leader=b0 epoch=0 isr=b0,b1
run 10ms
cut b0 -> b1
produce p1 t/0 m1 acks=all timeout=500ms
await p1 ack m1
`
	s, err := scenarios.Parse("timeout.txt", "timeout", strings.NewReader(src))
	if err != nil {
		t.Fatal(err)
	}
	res, err := Run(s, "", Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"m1 was not acknowledged", "unknown: REQUEST_TIMED_OUT"} {
		if !strings.Contains(res.Failed, want) {
			t.Errorf("Failed = %q, want it to contain %q", res.Failed, want)
		}
	}
}

func TestAwaitDoneSyntax(t *testing.T) {
	_, err := scenarios.Parse("f.txt", "f", strings.NewReader("brokers 1\ntopic t\nawait p1 done\n"))
	if err == nil || !strings.Contains(err.Error(), "await CLIENT done VALUE") {
		t.Errorf("err = %v, want the await done syntax", err)
	}
}
