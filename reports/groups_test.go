package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// outage loses 300 acknowledged records when every broker loses power.
const outage = `
describe every broker loses power with 300 acknowledged records unflushed
brokers 3
topic audit partitions=1 rf=3
set min.insync.replicas=2 zookeeper.session.timeout.ms=6000
run 5s
producer rec acks=all enable.idempotence=true
send rec audit/0 300 interval=5ms
run 2s
power-loss b0 keep=none
power-loss b1 keep=none
power-loss b2 keep=none
run 2s
restart-all
run 30s
`

func runOutage(t *testing.T) *harness.Result {
	t.Helper()
	s, err := scenarios.Parse("outage.txt", "outage", strings.NewReader(outage))
	if err != nil {
		t.Fatal(err)
	}
	res, err := harness.Run(s, "", harness.Options{Seed: 1, Timeline: true})
	if err != nil || res.Failed != "" {
		t.Fatal(err, res.Failed)
	}
	if res.Stats.AckedLost != 300 {
		t.Fatalf("the outage lost %d records, want 300", res.Stats.AckedLost)
	}
	return res
}

// TestGroupedEvidence: 300 records lost to one power loss are one line in
// run's text, one group counting all 300 in -json (beside the 200 listed
// records), and one expandable group in the HTML report listing each
// record without repeating the reason.
func TestGroupedEvidence(t *testing.T) {
	res := runOutage(t)
	var text strings.Builder
	WriteRunText(&text, res)
	out := text.String()
	if n := strings.Count(out, "300 records lost, offsets 0–299 of audit-0, acknowledged "); n != 1 {
		t.Errorf("the group line appears %d times, want 1:\n%s", n, out)
	}
	if strings.Contains(out, "lost audit-0 rec-") {
		t.Errorf("the text lists records one by one under a group:\n%s", out)
	}
	var js bytes.Buffer
	if err := WriteRunJSON(&js, res); err != nil {
		t.Fatal(err)
	}
	var run RunJSON
	if err := json.Unmarshal(js.Bytes(), &run); err != nil {
		t.Fatal(err)
	}
	for _, v := range run.Verdicts {
		if v.Checker != "acked-loss" {
			continue
		}
		if len(v.Groups) != 1 || v.Groups[0].Count != 300 || v.Groups[0].Listed != len(v.Anomalies) || !v.Groups[0].Permitted ||
			!strings.Contains(v.Groups[0].Reason, "were down at once") {
			t.Errorf("groups = %+v (anomalies listed %d)", v.Groups, len(v.Anomalies))
		}
	}
	// The timeline marks the 100 records the verdict does not list too: a
	// box over the group's offsets and acknowledgement times.
	var d htmlReport
	d.timeline(res)
	if boxes := shapesWith(d.timelineDrawing, "acked-lost-group", "300 records lost"); len(boxes) != 1 {
		t.Errorf("the timeline has %d boxes for the group of 300, want 1", len(boxes))
	}
	var page bytes.Buffer
	if err := WriteHTMLReport(&page, res); err != nil {
		t.Fatal(err)
	}
	p := page.String()
	i := strings.Index(p, `<details class="group"><summary class="permitted">300 records lost`)
	if i < 0 {
		t.Fatal("the report has no expandable group of the 300 records")
	}
	body := p[i : i+strings.Index(p[i:], "</details>")]
	if n := strings.Count(body, "<li>"); n != 200 {
		t.Errorf("the group lists %d records, want the 200 the verdict keeps", n)
	}
	if !strings.Contains(body, "… and 100 more records") {
		t.Error("the group does not say how many records it counts but does not list")
	}
	if n := strings.Count(body, "were down at once"); n != 1 {
		t.Errorf("the reason appears %d times in the group, want once (in its summary)", n)
	}
}
