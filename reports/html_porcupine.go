package reports

// This file embeds porcupine's visualization of the linearizability check
// in the run report, each partition's as an iframe sized to its rows,
// rendered on its first paint so its labels measure (and show) whole.
//
// NB: porcupine's page sets the tooltip's innerHTML from the model's
// DescribeState and DescribeOperationMetadata (an operation's Description
// only ever goes to textContent), so a record value such as
// <img src=x onerror=alert(1)> would run in the tooltip. The report wraps
// those two in html.EscapeString; the model's own plain-text output
// (checker evidence, golden files) stays as it is. Escaping Description
// too would show "&lt;" in the boxes.

import (
	"bytes"
	"encoding/json"
	"html"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

// escapingModel returns m with the descriptions porcupine writes as HTML
// escaped.
func escapingModel(m porcupine.Model) porcupine.Model {
	if state := m.DescribeState; state != nil {
		m.DescribeState = func(s any) string { return html.EscapeString(state(s)) }
	}
	if meta := m.DescribeOperationMetadata; meta != nil {
		m.DescribeOperationMetadata = func(x any) string { return html.EscapeString(meta(x)) }
	}
	return m
}

// porcupineHeight returns the height in pixels of a porcupine page: its
// legend, and a 30 px row (15 px apart) per client and annotation tag, as
// porcupine's index.js lays them out, read from the page's data.
func porcupineHeight(doc string) int {
	const marker = "const data = "
	rows := 1
	if i := strings.Index(doc, marker); i >= 0 {
		rest := doc[i+len(marker):]
		if j := strings.IndexByte(rest, '\n'); j >= 0 {
			var data struct {
				Partitions []struct {
					History []struct{ ClientId int }
				}
				Annotations []struct{ Tag string }
			}
			if json.Unmarshal([]byte(rest[:j]), &data) == nil {
				clients := 0
				for _, p := range data.Partitions {
					for _, h := range p.History {
						clients = max(clients, h.ClientId+1)
					}
				}
				tags := map[string]bool{}
				for _, a := range data.Annotations {
					tags[a.Tag] = true
				}
				rows = max(clients+len(tags), 1)
			}
		}
	}
	// body margin 8 + legend 45 + padding 2×10 + rows + a scroll bar.
	return 8 + 45 + 20 + 30*rows + 15*(rows-1) + 24
}

// maxPorcupineOps bounds the size of a partition drawn when nothing is
// wrong with it.
const maxPorcupineOps = 400

// porcupine embeds porcupine's visualization of each affected partition
// (a partition some checker found an anomaly in, or porcupine could not
// linearize); when none is affected, of the partitions small enough to
// draw.
func (d *htmlReport) porcupine(r *harness.Result) error {
	var ev *checkers.PorcupineEvidence
	affected := map[string]bool{}
	for _, v := range r.Verdicts {
		if v.Porcupine != nil {
			ev = v.Porcupine
		}
		for _, a := range v.Anomalies {
			if a.Topic != "" {
				affected[a.Topic+"-"+strconv.Itoa(int(a.Partition))] = true
			}
		}
	}
	if ev == nil {
		d.PorcupineNote = "The linearizability checker left no porcupine evidence (skipped or no history)."
		return nil
	}
	for _, p := range ev.Partitions {
		if p.Result != checkers.ResultOK {
			affected[p.Topic+"-"+strconv.Itoa(int(p.Partition))] = true
		}
	}
	for i := range ev.Partitions {
		p := &ev.Partitions[i]
		tp := p.Topic + "-" + strconv.Itoa(int(p.Partition))
		if len(affected) > 0 && !affected[tp] || len(affected) == 0 && p.Ops > maxPorcupineOps {
			continue
		}
		var b bytes.Buffer
		if err := porcupine.Visualize(escapingModel(ev.Model), p.Info(checkers.DefaultBudget), &b); err != nil {
			return err
		}
		// NB: porcupine measures each label (getBBox) as it renders; in a
		// frame the browser has not laid out yet (a sandboxed frame below
		// the fold is throttled) every label measures 0 and the boxes
		// collapse onto each other. Render on the frame's first paint.
		doc := strings.Replace(b.String(), "\n      render(data)\n", "\n      requestAnimationFrame(function () { render(data) })\n", 1)
		d.Porcupine = append(d.Porcupine, htmlPorcupine{Partition: tp, Result: p.Result.String(), Ops: p.Ops, Doc: doc, Height: porcupineHeight(doc)})
	}
	if len(d.Porcupine) == 0 {
		d.PorcupineNote = "No partition is affected, and every partition's history is too long to draw here."
	}
	return nil
}
