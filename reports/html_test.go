package reports

import (
	"bytes"
	"html"
	"regexp"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// hostile acknowledges records whose values are markup, then loses one of
// them (acks=1 and a leader crash).
const hostile = `
controller manual
brokers 2
topic t partitions=1 rf=2 assignment=0,1
set min.insync.replicas=1
leader-and-isr t/0 leader=b0 epoch=0 isr=b0,b1
run 10ms
produce p1 t/0 <script>alert(1)</script> acks=all
await p1 ack <script>alert(1)</script>
run 2s
cut b0 -> b1
produce p1 t/0 <i>x&amp;y</i> acks=1 timeout=500ms
await p1 ack <i>x&amp;y</i>
crash b0
leader-and-isr t/0 leader=b1 epoch=1 isr=b1 to=b1
run 10ms
heal
restart b0
leader-and-isr t/0 leader=b1 epoch=1 isr=b1 to=b0
run 5s
`

// external matches a reference to anything outside the page.
var external = regexp.MustCompile(`(?i)(\bsrc\s*=\s*["']?[a-z]+:|\bhref\s*=\s*["']?(https?:|//)|<link\b|@import|url\(\s*["']?(https?:|//)|<script[^>]+src)`)

func TestHTMLReportEscapesValuesAndIsSelfContained(t *testing.T) {
	s, err := scenarios.Parse("hostile.txt", "hostile", strings.NewReader(hostile))
	if err != nil {
		t.Fatal(err)
	}
	res, err := harness.Run(s, "", harness.Options{Seed: 1, Timeline: true})
	if err != nil || res.Failed != "" {
		t.Fatal(err, res.Failed)
	}
	if res.Stats.AckedLost != 1 {
		t.Fatalf("the hostile run lost %d records, want 1", res.Stats.AckedLost)
	}
	var b bytes.Buffer
	if err := WriteHTMLReport(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, bad := range []string{"<script>alert(1)", "<i>x&amp;y</i>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page holds %q unescaped", bad)
		}
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)&lt;/script&gt;") || !strings.Contains(page, "&lt;i&gt;x&amp;amp;y&lt;/i&gt;") {
		t.Error("the page does not show the hostile values as text")
	}
	// The porcupine document sits, escaped, in an iframe's srcdoc: look
	// inside it too.
	for _, text := range []string{page, html.UnescapeString(page)} {
		if m := external.FindString(text); m != "" {
			t.Errorf("the page references an external resource: %q", m)
		}
	}
	docs := regexp.MustCompile(`srcdoc="([^"]*)"`).FindAllStringSubmatch(page, -1)
	if len(docs) == 0 {
		t.Fatal("no porcupine visualization embedded")
	}
	for _, d := range docs {
		inner := html.UnescapeString(d[1])
		if !strings.Contains(inner, "<script>") || strings.Contains(inner, "<script>alert(1)") {
			t.Error("the porcupine document lacks its script, or holds the hostile value unescaped")
		}
	}
	for _, want := range []string{"<svg", "b0</text>", "b1</text>", "class=\"mark fault\"", "class=\"mark leader\"", "td class=\"mono lost\"", "srcdoc=", res.Replay, "acked-loss"} {
		if !strings.Contains(page, html.EscapeString(want)) && !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
}

// TestHTMLReportShowsLogsAtTruncation: KIP-101 scenario 1 under hw: the
// report shows b0's log losing m2 at its truncation.
func TestHTMLReportShowsLogsAtTruncation(t *testing.T) {
	s, err := scenarios.Load("kip101-hw-lag")
	if err != nil {
		t.Fatal(err)
	}
	res, err := harness.Run(s, "hw", harness.Options{Seed: 1, Timeline: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Truncations) == 0 {
		t.Fatal("no truncation recorded")
	}
	var b strings.Builder
	if err := WriteHTMLReport(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	i := strings.Index(page, "Replica logs at each truncation")
	if i < 0 || !strings.Contains(page[i:], "1:m2") {
		t.Fatalf("the report does not show the log before the truncation")
	}
}
