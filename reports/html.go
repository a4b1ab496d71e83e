package reports

// This file writes a run report: one self-contained HTML page (no external
// script, style sheet, font or image; it opens from disk) with the run's
// configuration and replay command, the verdicts with their evidence, a
// timeline with one lane per broker (faults, leader and ISR changes,
// truncations), the replicas' logs at the end with lost and divergent
// records highlighted, the truncations the brokers made, and porcupine's
// visualization of the linearizability check of the affected partitions.
//
// Every value from the run goes through html/template, so a record value
// such as <script> is shown as text. The timeline needs the run's trace:
// run with scenarios.Options{Timeline: true} (replay does).
//
// Simplification: a replica's log is shown at the end of the run; at each
// truncation the report lists the offsets cut (from the broker's trace
// record), not the log's content at that moment.

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// markKinds are the trace kinds the timeline draws, with their class.
var markKinds = map[string]string{
	"crash": "fault", "pause": "fault", "halt": "fault", "cut": "fault", "partition": "fault", "heal": "heal", "start": "heal",
	"become-leader": "leader", "become-follower": "follower", "controller-elected": "leader", "controller-unclean-election": "fault",
	"isr": "isr", "isr-expand": "isr", "isr-shrink": "isr", "truncate": "truncate",
}

type htmlVerdict struct {
	Checker, Result, Class string
	Notes, Anomalies       []string
	Groups                 []htmlGroup
	Omitted                int
}

// htmlMark is a tick or a break of the timeline's axis.
type htmlMark struct {
	X, Y float64
	Text string
}

type htmlEvent struct {
	Time, Node, Kind, Fields, Class string
	Event                           uint64
}

type htmlCell struct {
	Text, Class string
}

type htmlRow struct {
	Offset string
	Cells  []htmlCell
	Gap    bool
	Note   string
}

type htmlLog struct {
	Partition string
	Replicas  []string
	Rows      []htmlRow
	Lost      []string
}

// htmlCut is a replica's log around one shortening.
type htmlCut struct {
	Time, Partition, Broker, Before, After string
}

// maxCutEntries bounds the entries a truncation shows on each side.
const maxCutEntries = 12

// cutText renders the tail of a log (from the first offset that differs
// between before and after, minus a little context).
func cutText(es []checkers.Entry, from int64) string {
	var parts []string
	start := 0
	for i, e := range es {
		if e.Offset >= from {
			start = max(i-2, 0)
			break
		}
		start = max(len(es)-2, 0)
	}
	if start > 0 {
		parts = append(parts, "…")
	}
	for i := start; i < len(es) && len(parts) <= maxCutEntries; i++ {
		e := es[i]
		parts = append(parts, strconv.FormatInt(e.Offset, 10)+":"+e.Value+"(e"+strconv.Itoa(int(e.LeaderEpoch))+")")
	}
	if len(parts) == 0 {
		return "(empty)"
	}
	return strings.Join(parts, " ")
}

// cuts renders the logs around each truncation the run recorded.
func (d *htmlReport) cuts(r *harness.Result) {
	for _, t := range r.Truncations {
		// The first offset where the logs differ: where the cut happened.
		from := int64(len(t.After))
		for i := range t.Before {
			if i >= len(t.After) || t.After[i] != t.Before[i] {
				from = t.Before[i].Offset
				break
			}
		}
		if len(t.After) < len(t.Before) && from == int64(len(t.After)) && len(t.After) > 0 {
			from = t.After[len(t.After)-1].Offset + 1
		}
		d.LogCuts = append(d.LogCuts, htmlCut{Time: t.Time.String(), Partition: t.Partition, Broker: "b" + strconv.Itoa(int(t.Broker)),
			Before: cutText(t.Before, from), After: cutText(t.After, from)})
	}
}

type htmlPorcupine struct {
	Partition, Result string
	Ops, Height       int
	Doc               string
}

// htmlExpect is one checker's expectation in the variant, and the verdict.
type htmlExpect struct {
	Checker, Expected, Got string
	Met                    bool
}

// htmlStep is one line of the script's body.
type htmlStep struct {
	Line int
	Text string
}

type htmlReport struct {
	Title, Scenario, Variant, Replay, TraceHash, SimTime, Failed string
	Seed, NumEvents                                              uint64
	Config, Mismatches, NotModelled, ConfigNotes                 []string
	Verdicts                                                     []htmlVerdict
	Timeline                                                     template.HTML
	TimelineNote                                                 string
	ZoomScript                                                   template.JS
	HasQuorum                                                    bool
	timelineDrawing                                              *drawing
	FailedProduces                                               []htmlProduce
	FailedOmitted                                                int
	Description                                                  string
	Steps                                                        []htmlStep
	Expect                                                       []htmlExpect
	Events                                                       []htmlEvent
	Changes                                                      []harness.StateChange
	ChangesOmitted                                               int
	Truncations                                                  []htmlEvent
	LogCuts                                                      []htmlCut
	Logs                                                         []htmlLog
	Porcupine                                                    []htmlPorcupine
	PorcupineNote                                                string
	NoTrace                                                      bool
}

// maxChanges bounds the state changes the report lists. NB: the timeline
// draws every change (LEO, HW, leadership, ISR); the list keeps the first
// ones' exact values, and replay prints them all.
const maxChanges = 500

// WriteHTMLReport writes the run report of r.
func WriteHTMLReport(w io.Writer, r *harness.Result) error {
	d := htmlReport{Title: fmt.Sprintf("kafkasim: %s / %s, seed %d", r.Scenario, r.Variant, r.Seed), Scenario: r.Scenario, Variant: r.Variant,
		Seed: r.Seed, Replay: r.Replay, TraceHash: fmt.Sprintf("%016x", r.TraceHash), NumEvents: r.Events, SimTime: r.SimTime.String(),
		Failed: r.Failed, Config: r.Config, Mismatches: r.Mismatches, NotModelled: r.NotModelled, ConfigNotes: append(append([]string(nil), r.ConfigNotes...), r.ProducerNotes...)}
	for _, v := range r.Verdicts {
		hv := htmlVerdict{Checker: v.Checker, Result: v.Mark(), Class: harness.Outcome(v), Notes: v.Notes, Omitted: v.Omitted}
		if hv.Class == "permitted" {
			hv.Result += " (permitted by Kafka's contract)"
		}
		if len(v.Groups) > 0 {
			hv.Groups, hv.Anomalies = htmlGroups(v)
			hv.Omitted = 0 // each group counts its records not listed
		} else {
			for _, a := range v.Anomalies {
				hv.Anomalies = append(hv.Anomalies, a.String())
			}
		}
		d.Verdicts = append(d.Verdicts, hv)
	}
	d.ZoomScript = zoomScript
	d.script(r)
	d.failedProduces(r.History)
	d.timeline(r)
	d.Changes = r.Changes
	if len(d.Changes) > maxChanges {
		d.ChangesOmitted = len(d.Changes) - maxChanges
		d.Changes = d.Changes[:maxChanges]
	}
	d.logs(r)
	d.cuts(r)
	if err := d.porcupine(r); err != nil {
		return err
	}
	return reportTemplate.Execute(w, d)
}

// script lists the script's steps and the variant's expectations beside
// the verdicts.
func (d *htmlReport) script(r *harness.Result) {
	s := r.Script
	if s == nil {
		return
	}
	d.Description = s.Description
	for _, st := range s.Steps {
		d.Steps = append(d.Steps, htmlStep{Line: st.Line, Text: stepText(st)})
	}
	var expect map[string]scenarios.Expectation
	for _, v := range s.Variants {
		if v.Name == r.Variant {
			expect = v.Expect
		}
	}
	got := map[string]string{}
	for _, v := range r.Verdicts {
		got[v.Checker] = harness.Outcome(v)
	}
	missed := map[string]bool{}
	for _, m := range r.Mismatches {
		missed[strings.SplitN(m, ":", 2)[0]] = true
	}
	for _, c := range scenarios.Checkers {
		if e, ok := expect[c]; ok {
			g := got[c]
			if g == "" {
				g = "not run"
			}
			d.Expect = append(d.Expect, htmlExpect{Checker: c, Expected: string(e), Got: g, Met: !missed[c]})
		}
	}
}

// stepText renders a step as the script writes it: the command, its
// arguments, then its key=value pairs in key order.
func stepText(st scenarios.Step) string {
	parts := append([]string{st.Op}, st.Args...)
	keys := make([]string, 0, len(st.KV))
	for k := range st.KV {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, k+"="+st.KV[k])
	}
	return strings.Join(parts, " ")
}

type tpOffset struct {
	tp     string
	offset int64
}

// logs renders each partition's replica logs, highlighting the offsets of
// lost and divergent records.
func (d *htmlReport) logs(r *harness.Result) {
	lost := map[tpOffset]string{}
	lostList := map[string][]string{}
	div := map[tpOffset]bool{}
	for _, v := range r.Verdicts {
		if v.Checker == checkers.NameAckedLoss {
			// NB: the groups, not each record again: the verdicts table
			// lists the records under them.
			for _, g := range v.Groups {
				tp := g.Topic + "-" + strconv.Itoa(int(g.Partition))
				lostList[tp] = append(lostList[tp], g.String())
			}
		}
		for _, a := range v.Anomalies {
			tp := a.Topic + "-" + strconv.Itoa(int(a.Partition))
			switch {
			case v.Checker == checkers.NameAckedLoss:
				for _, o := range a.Offsets {
					lost[tpOffset{tp, o}] = a.Value
				}
				if len(v.Groups) == 0 {
					lostList[tp] = append(lostList[tp], a.String())
				}
			case v.Checker == checkers.NameDivergence:
				for _, o := range a.Offsets {
					div[tpOffset{tp, o}] = true
				}
			}
		}
	}
	for _, p := range r.Final.Partitions {
		tp := p.Topic + "-" + strconv.Itoa(int(p.Partition))
		hl := htmlLog{Partition: tp, Lost: lostList[tp]}
		offsets := map[int64]bool{}
		for _, rep := range p.Replicas {
			hl.Replicas = append(hl.Replicas, rep.ReplicaState.String())
			for _, e := range rep.Log {
				offsets[e.Offset] = true
			}
		}
		for k := range lost {
			if k.tp == tp {
				offsets[k.offset] = true
			}
		}
		all := make([]int64, 0, len(offsets))
		for o := range offsets {
			all = append(all, o)
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		show := showOffsets(all, func(o int64) bool { return div[tpOffset{tp, o}] || lost[tpOffset{tp, o}] != "" })
		prev := int64(-2)
		for _, o := range show {
			if prev >= -1 && o != next(all, prev) {
				hl.Rows = append(hl.Rows, htmlRow{Gap: true})
			}
			prev = o
			row := htmlRow{Offset: strconv.FormatInt(o, 10)}
			key := tpOffset{tp, o}
			if v := lost[key]; v != "" {
				row.Note = "acknowledged " + v + " here: lost"
			} else if div[key] {
				row.Note = "replicas diverge"
			}
			for _, rep := range p.Replicas {
				c := htmlCell{Text: "—"}
				if e, ok := rep.At(o); ok {
					c.Text = e.Value + " (e" + strconv.Itoa(int(e.LeaderEpoch)) + ")"
				}
				switch {
				case lost[key] != "":
					c.Class = "lost"
				case div[key]:
					c.Class = "div"
				case o >= rep.HW && rep.Alive:
					c.Class = "uncommitted"
				}
				row.Cells = append(row.Cells, c)
			}
			hl.Rows = append(hl.Rows, row)
		}
		d.Logs = append(d.Logs, hl)
	}
}

func next(all []int64, o int64) int64 {
	i := sort.Search(len(all), func(i int) bool { return all[i] > o })
	if i < len(all) {
		return all[i]
	}
	return -1
}

// showOffsets picks the offsets a long log shows: all of a short log; of
// a long one the first and last 10 and 3 around each highlighted offset.
func showOffsets(all []int64, marked func(int64) bool) []int64 {
	if len(all) <= 300 {
		return all
	}
	keep := make([]bool, len(all))
	for i := range all {
		if i < 10 || i >= len(all)-10 {
			keep[i] = true
		}
		if marked(all[i]) {
			for j := max(0, i-3); j <= min(len(all)-1, i+3); j++ {
				keep[j] = true
			}
		}
	}
	var out []int64
	for i, k := range keep {
		if k {
			out = append(out, all[i])
		}
	}
	return out
}

var reportTemplate = template.Must(template.New("report").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em; color: #222; }
code, pre, td.mono { font-family: ui-monospace, monospace; font-size: 0.85em; }
pre { background: #f4f4f4; padding: 0.5em; overflow-x: auto; }
table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #ccc; padding: 2px 6px; text-align: left; vertical-align: top; }
.ok { color: #1a7f37; } .permitted { color: #9a6700; } .bug { color: #cf222e; font-weight: bold; } .unknown, .not-judged { color: #6e7781; }
td.lost { background: #ffcdd2; } td.div { background: #ffe0b2; } td.uncommitted { color: #888; }
tr.gap td { text-align: center; color: #888; border: none; }
svg text { font-size: 11px; font-family: ui-monospace, monospace; }
.mark.fault { fill: #cf222e; } .mark.heal { fill: #1a7f37; } .mark.leader { fill: #0969da; } .mark.follower { fill: #8c959f; }
.mark.isr { fill: #8250df; } .mark.truncate { fill: #bf8700; } .mark.failed { fill: #e36209; }
.break { fill: #fff; stroke: #999; stroke-dasharray: 3 3; }
iframe { width: 100%; border: 1px solid #ccc; }
details.group summary { cursor: pointer; } .timeline svg { max-width: 100%; height: auto; cursor: grab; } ol.records { margin: 0.2em 0; padding-left: 2em; font-size: 0.95em; }
ol.steps { font-family: ui-monospace, monospace; font-size: 0.85em; columns: 2; }
</style>
</head>
<body>
<h1>{{.Scenario}} / {{.Variant}}, seed {{.Seed}}</h1>
{{if .Description}}<p>{{.Description}}</p>{{end}}
<p>{{.NumEvents}} events, {{.SimTime}} simulated, trace hash <code>{{.TraceHash}}</code></p>
<h2>Configuration</h2>
{{if .Config}}<ul>{{range .Config}}<li><code>{{.}}</code></li>{{end}}</ul>{{else}}<p>Kafka's defaults.</p>{{end}}
{{if .NotModelled}}<p>Accepted, not modelled (these change nothing in the run):</p><ul>{{range .NotModelled}}<li><code>{{.}}</code></li>{{end}}</ul>{{end}}
{{if .ConfigNotes}}<p>Given but not in effect as given:</p><ul>{{range .ConfigNotes}}<li>{{.}}</li>{{end}}</ul>{{end}}
<p>Replay: <code>{{.Replay}}</code></p>
{{if .Failed}}<p class="bug">Run failed: {{.Failed}}</p>{{end}}
{{if .Mismatches}}<p class="bug">Not as the scenario expects: {{range .Mismatches}}{{.}}; {{end}}</p>{{end}}
{{if .Expect}}<h2>What the scenario expects</h2>
<table><tr><th>checker</th><th>expected</th><th>verdict</th><th></th></tr>
{{range .Expect}}<tr><td>{{.Checker}}</td><td>{{.Expected}}</td><td class="{{.Got}}">{{.Got}}</td><td>{{if .Met}}<span class="ok">as expected</span>{{else}}<span class="bug">not as expected</span>{{end}}</td></tr>
{{end}}</table>{{end}}
{{if .Steps}}<details open><summary>{{len .Steps}} steps of the script</summary>
<ol class="steps">{{range .Steps}}<li value="{{.Line}}">{{.Text}}</li>{{end}}</ol>
<p>Numbers are the script's line numbers.</p></details>{{end}}
<h2>Verdicts</h2>
<table id="verdicts">
<tr><th>checker</th><th>verdict</th><th>evidence</th></tr>
{{range .Verdicts}}<tr><td>{{.Checker}}</td><td class="{{.Class}}">{{.Result}}</td><td class="mono">{{range .Notes}}note: {{.}}<br>{{end}}{{range .Groups}}<details class="group"><summary class="{{.Class}}">{{.Text}}</summary>{{if .Records}}<ol class="records">{{range .Records}}<li>{{.}}</li>{{end}}</ol>{{end}}{{if .Unlisted}}<p>… and {{.Unlisted}} more records, counted but not listed (a verdict keeps the first 200).</p>{{end}}</details>{{end}}{{range .Anomalies}}{{.}}<br>{{end}}{{if .Omitted}}… {{.Omitted}} more{{end}}</td></tr>
{{end}}</table>
<h2>Timeline</h2>
{{if .NoTrace}}<p>The run kept no trace (run it with replay to see the timeline).</p>{{else}}
<p>First, one lane per replica of each judged partition: its LEO (solid) and HW (dashed) over simulated time, scaled to the partition's offsets; a blue band while it leads, with its leader epoch; a purple bar while it is in the leader's ISR; grey while its broker is down. A red dot is an acknowledged record that was later lost, where it was acknowledged; a red bar is where a replica's log was first seen without such records (a truncation, or a log a power loss cut short, once its broker loads it). Faults are bands over the lanes they hit (crash and power loss red, pause amber, a network partition blue across every lane). {{if .HasQuorum}}The KRaft lane shows the controller quorum's leader and epoch. {{end}}Then one lane per broker with the trace's events: <span class="bug">faults</span> (crash, power loss, pause, partition, cut, unclean election), <span class="ok">restarts and heals</span>, leader elections (blue), ISR changes (purple), truncations (amber); <span style="color:#e36209">produces that failed or timed out</span> in the last lane. The axis spans the first to the last mark; a dashed band is a quiet stretch cut out (its length above it). Hover a mark for the record.</p>
<p class="zoom"><button type="button" data-zoom="in">zoom in</button> <button type="button" data-zoom="out">zoom out</button> <button type="button" data-zoom="reset">reset</button> (or scroll over the picture to zoom, drag to move)</p>
<div class="timeline">{{.Timeline}}</div>
{{if .TimelineNote}}<p>{{.TimelineNote}}</p>{{end}}
<script>{{.ZoomScript}}</script>
<details><summary>{{len .Events}} events drawn</summary>
<table><tr><th>time</th><th>event</th><th>node</th><th>kind</th><th>fields</th></tr>
{{range .Events}}<tr><td class="mono">{{.Time}}</td><td class="mono">{{.Event}}</td><td>{{.Node}}</td><td class="{{.Class}}">{{.Kind}}</td><td class="mono">{{.Fields}}</td></tr>
{{end}}</table></details>
<details><summary>{{len .Changes}} replica state changes{{if .ChangesOmitted}} (and {{.ChangesOmitted}} more not shown: the timeline draws them, replay prints them){{end}}</summary>
<pre>{{range .Changes}}{{.Time}} #{{.Event}} {{.State}}
{{end}}</pre></details>
{{end}}
{{if .FailedProduces}}<details><summary>{{len .FailedProduces}} produces failed or timed out{{if .FailedOmitted}} (and {{.FailedOmitted}} more not shown){{end}}</summary>
<p>failed: Kafka refused the record (it was certainly not written); unknown: it timed out, and may or may not be in the log.</p>
<table><tr><th>time</th><th>client</th><th>partition</th><th>value</th><th>outcome</th><th>error</th></tr>
{{range .FailedProduces}}<tr><td class="mono">{{.Time}}</td><td>{{.Process}}</td><td>{{.Partition}}</td><td class="mono">{{.Value}}</td><td>{{.Outcome}}</td><td class="mono">{{.Error}}</td></tr>
{{end}}</table></details>{{end}}
<h2>Replica logs at the end</h2>
<p><span style="background:#ffcdd2">lost</span>: an acknowledged record's offset, <span style="background:#ffe0b2">divergent</span>: replicas disagree; grey: above the replica's HW.</p>
{{range .Logs}}<h3>{{.Partition}}</h3>
{{range .Lost}}<p class="mono bug">{{.}}</p>{{end}}
<table><tr><th>offset</th>{{range .Replicas}}<th>{{.}}</th>{{end}}<th></th></tr>
{{range .Rows}}{{if .Gap}}<tr class="gap"><td colspan="99">…</td></tr>{{else}}<tr><td class="mono">{{.Offset}}</td>{{range .Cells}}<td class="mono {{.Class}}">{{.Text}}</td>{{end}}<td>{{.Note}}</td></tr>{{end}}
{{end}}</table>
{{end}}
{{if .Truncations}}<h2>Truncations</h2>
<table><tr><th>time</th><th>broker</th><th>what</th></tr>
{{range .Truncations}}<tr><td class="mono">{{.Time}}</td><td>{{.Node}}</td><td class="mono">{{.Fields}}</td></tr>
{{end}}</table>{{end}}
{{if .LogCuts}}<h2>Replica logs at each truncation</h2>
<p>Each time a replica's log got shorter (a truncation, or a restart after losing unsynced data): its log just before and just after, from a little before the cut.</p>
<table><tr><th>time</th><th>partition</th><th>broker</th><th>before</th><th>after</th></tr>
{{range .LogCuts}}<tr><td class="mono">{{.Time}}</td><td>{{.Partition}}</td><td>{{.Broker}}</td><td class="mono">{{.Before}}</td><td class="mono">{{.After}}</td></tr>
{{end}}</table>{{end}}
<h2>Linearizability (porcupine)</h2>
{{if .PorcupineNote}}<p>{{.PorcupineNote}}</p>{{end}}
{{range .Porcupine}}<h3>{{.Partition}}: {{.Result}}, {{.Ops}} operations</h3>
<iframe title="porcupine {{.Partition}}" sandbox="allow-scripts" style="height: {{.Height}}px" srcdoc="{{.Doc}}"></iframe>
{{end}}
</body>
</html>
`))
