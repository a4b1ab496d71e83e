package reports

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/google/go-cmp/cmp"

	"github.com/kafkasim/kafkasim/model"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

const xss = "<img src=x onerror=alert(1)>"

// porcupineData decodes the data a porcupine page renders.
func porcupineData(t *testing.T, doc string) (states, metadata []string) {
	t.Helper()
	i := strings.Index(doc, "const data = ")
	if i < 0 {
		t.Fatal("no data in the porcupine page")
	}
	rest := doc[i+len("const data = "):]
	var data struct {
		Partitions []struct {
			History               []struct{ Metadata string }
			PartialLinearizations [][]struct{ StateDescription string }
		}
	}
	if err := json.Unmarshal([]byte(rest[:strings.IndexByte(rest, '\n')]), &data); err != nil {
		t.Fatal(err)
	}
	for _, p := range data.Partitions {
		for _, h := range p.History {
			metadata = append(metadata, h.Metadata)
		}
		for _, l := range p.PartialLinearizations {
			for _, s := range l {
				states = append(states, s.StateDescription)
			}
		}
	}
	return states, metadata
}

// TestPorcupineTooltipEscapesValues: porcupine puts state descriptions and
// metadata into the tooltip's innerHTML, so the report escapes them; the
// model's plain text stays raw.
func TestPorcupineTooltipEscapesValues(t *testing.T) {
	k := model.Key{Topic: "t", Partition: 0}
	ops := []porcupine.Operation{
		{ClientId: 0, Call: 0, Return: 10, Input: model.Input{Key: k, Kind: model.Append, Value: xss}, Output: model.Output{Offset: 0}, Metadata: xss},
		{ClientId: 1, Call: 20, Return: 30, Input: model.Input{Key: k, Kind: model.Read, Offset: 0}, Output: model.Output{Records: []model.Record{{Offset: 0, Value: xss}}}},
	}
	res, info := porcupine.CheckOperationsVerbose(model.Model(), ops, time.Second)
	if res != porcupine.Ok {
		t.Fatalf("porcupine: %v", res)
	}
	for _, c := range []struct {
		m   porcupine.Model
		raw bool
	}{{model.Model(), true}, {escapingModel(model.Model()), false}} {
		var b bytes.Buffer
		if err := porcupine.Visualize(c.m, info, &b); err != nil {
			t.Fatal(err)
		}
		states, meta := porcupineData(t, b.String())
		got := strings.Join(append(states, meta...), "|")
		if strings.Contains(got, "<img") != c.raw || !c.raw && !strings.Contains(got, "&lt;img src=x onerror=alert(1)&gt;") {
			t.Errorf("raw model %v: tooltip HTML %q", c.raw, got)
		}
	}
	if got := model.DescribeState(model.Log{}.Append(xss)); !strings.Contains(got, xss) {
		t.Errorf("model.DescribeState changed: %q", got)
	}
}

// failing produces a record that times out (no leader), then two that are
// acknowledged, 15 s apart.
const failing = `
describe a produce with no leader times out
controller manual
brokers 2
topic t partitions=1 rf=2 assignment=0,1
set min.insync.replicas=1
variant v
expect v acked-loss=ok
leader-and-isr t/0 leader=b0 epoch=0 isr=b0,b1
run 10ms
crash b0
produce p1 t/0 <img/src/onerror> acks=all timeout=500ms
run 2s
restart b0
leader-and-isr t/0 leader=b0 epoch=1 isr=b0,b1
run 1s
produce p1 t/0 <b>ok</b> acks=all
await p1 ack <b>ok</b>
run 15s
produce p1 t/0 late acks=all
run 1s
`

// TestHTMLReportShowsScriptExpectationsAndFailedProduces: the report
// lists the script's steps, the variant's expectations beside the
// verdicts, and the produce that failed (on the timeline too), escaped;
// the porcupine frame is as tall as its rows and renders on first paint.
func TestHTMLReportShowsScriptExpectationsAndFailedProduces(t *testing.T) {
	s, err := scenarios.Parse("failing.txt", "failing", strings.NewReader(failing))
	if err != nil {
		t.Fatal(err)
	}
	res, err := harness.Run(s, "", harness.Options{Seed: 1, Timeline: true})
	if err != nil || res.Failed != "" {
		t.Fatal(err, res.Failed)
	}
	var b bytes.Buffer
	if err := WriteHTMLReport(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		"a produce with no leader times out",
		"<h2>What the scenario expects</h2>",
		"<tr><td>acked-loss</td><td>ok</td><td class=\"ok\">ok</td><td><span class=\"ok\">as expected</span></td></tr>",
		"<li value=\"12\">produce p1 t/0 &lt;img/src/onerror&gt; acks=all timeout=500ms</li>",
		"1 produces failed or timed out",
		"<td class=\"mono\">&lt;img/src/onerror&gt;</td><td>failed</td>",
		"produce failed</text>",
		"requestAnimationFrame(function () { render(data) })",
		"style=\"height: 217px\"", // three rows (p1 and the end phase's readers)
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<img/src") {
		t.Error("the page holds a value unescaped")
	}
}

// TestTimelineAxisZooms: the axis spans the marks, not the run; a quiet
// stretch longer than a fifth of the span is a break labelled with its
// length; ticks are round, at least 60 px apart, inside the frame.
func TestTimelineAxisZooms(t *testing.T) {
	ms := func(n int64) sim.Time { return sim.Time(n * int64(sim.Millisecond)) }
	a := newTimeAxis([]sim.Time{ms(10), ms(20), ms(200), ms(10000), ms(10100)}, 110, 1080)
	ticks, breaks := a.ticks()
	var labels, gaps []string
	last := 0.0
	for _, tk := range ticks {
		labels = append(labels, tk.Text)
		if tk.X < 110 || tk.X > 1080 || tk.X-last < 60 {
			t.Errorf("tick %s at x=%v (previous at %v)", tk.Text, tk.X, last)
		}
		last = tk.X
	}
	for _, b := range breaks {
		gaps = append(gaps, b.Text)
	}
	want := []string{"0ms", "50ms", "100ms", "150ms", "200ms", "10.00s", "10.05s", "10.10s", "10.15s"}
	if d := cmp.Diff(want, labels); d != "" {
		t.Errorf("tick labels (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"+9.699s"}, gaps); d != "" {
		t.Errorf("breaks (-want +got):\n%s", d)
	}
	if x0, x1 := a.x(ms(10)), a.x(ms(10100)); x0 <= 110 || x1 >= 1080 {
		t.Errorf("first and last marks at %v and %v: on the frame", x0, x1)
	}
}
