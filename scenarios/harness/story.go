package harness

// This file tells a run as a short list of steps that read like the KIP
// traces ("b0 fetches m2; b0 restarts and truncates to HW=1; b1 crashes;
// b0 becomes leader in epoch 1; m2 is lost"), built from the trace (the run
// must keep it: Options.KeepTrace) and the checkers' evidence. In a run with
// many records, appends, fetches and HW changes are told only for the
// records the evidence names.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/sim"
)

// storyDetailLimit is the number of produced records up to which every
// append and fetch is told.
const storyDetailLimit = 12

// Story returns the run's steps, in order.
func Story(res *Result) []string {
	recs := res.World.Trace().Records()
	involved := map[string]bool{}
	for _, v := range res.Verdicts {
		if v.Checker != checkers.NameAckedLoss && v.Checker != checkers.NameDivergence {
			continue
		}
		for _, a := range v.Anomalies {
			if a.Value != "" {
				involved[a.Value] = true
			}
		}
	}
	produced := 0 // records appended by leaders (Kafka's producer logs no client-produce)
	for _, r := range recs {
		if r.Kind == "append" {
			first, _ := r.Get("first")
			last, _ := r.Get("last")
			a, _ := strconv.Atoi(first)
			z, err := strconv.Atoi(last)
			if err != nil || z < a {
				z = a
			}
			produced += z - a + 1
		}
	}
	detail := func(value string) bool { return produced <= storyDetailLimit || involved[value] }
	logs := map[string]map[int64]string{} // broker -> offset -> value
	pending := map[string][]string{}      // leader broker -> values sent to it
	valueAt := func(b string, off int64) string {
		if v, ok := logs[b][off]; ok {
			return v
		}
		return "offset " + strconv.FormatInt(off, 10)
	}
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for _, r := range recs {
		get := func(k string) string { v, _ := r.Get(k); return v }
		num := func(k string) int64 { n, _ := strconv.ParseInt(get(k), 10, 64); return n }
		b := r.Name
		switch r.Kind {
		case "client-produce":
			leader := "b" + get("leader")
			pending[leader] = append(pending[leader], get("value"))
		case "append":
			if logs[b] == nil {
				logs[b] = map[int64]string{}
			}
			first, last := num("first"), max(num("last"), num("first"))
			var vals []string
			for off := first; off <= last; off++ {
				v := "offset " + strconv.FormatInt(off, 10)
				if q := pending[b]; len(q) > 0 {
					v, pending[b] = q[0], q[1:]
				}
				logs[b][off] = v
				if detail(v) {
					vals = append(vals, v)
				}
			}
			switch {
			case len(vals) == 1 && first == last:
				add("%s appends %s at offset %d in epoch %s", b, storyValue(vals[0]), first, get("epoch"))
			case len(vals) > 0:
				add("%s appends %s in epoch %s", b, summarize(vals), get("epoch"))
			}
		case "follower-append":
			if logs[b] == nil {
				logs[b] = map[int64]string{}
			}
			var vals []string
			for off := num("first"); off <= num("last"); off++ {
				v := "offset " + strconv.FormatInt(off, 10)
				for src, l := range sortedLogs(logs) {
					if src != b {
						if x, ok := l[off]; ok {
							v = x
						}
					}
				}
				logs[b][off] = v
				if detail(v) {
					vals = append(vals, v)
				}
			}
			if len(vals) > 0 {
				add("%s fetches %s", b, summarize(vals))
			}
		case "truncate", "truncate-fully":
			to := num("to")
			if get("leo-before") != "" && num("leo-before") <= to {
				continue
			}
			var gone []string
			for off := to; off < num("leo-before"); off++ {
				gone = append(gone, valueAt(b, off))
				delete(logs[b], off)
			}
			rule := get("rule")
			if rule == "hw" {
				rule = "HW"
			}
			what := ""
			if len(gone) > 0 {
				what = " (drops " + strings.Join(gone, ", ") + ")"
			}
			if rule != "" {
				add("%s truncates to %s=%d%s", b, rule, to, what)
			} else {
				add("%s truncates to %d%s", b, to, what)
			}
		case "hw":
			if produced <= storyDetailLimit {
				add("%s (leader) advances HW to %s", b, get("hw"))
			}
		case "follower-hw":
			if produced <= storyDetailLimit {
				add("%s learns HW=%s", b, get("hw"))
			}
		case "client-ack":
			if detail(get("value")) {
				add("%s is acknowledged at offset %s", get("value"), get("offset"))
			}
		case "client-fail":
			if detail(get("value")) {
				add("%s is refused (%s)", get("value"), get("error"))
			}
		case "client-unknown":
			if detail(get("value")) {
				add("%s's outcome is unknown (%s)", get("value"), get("error"))
			}
		case "become-leader":
			add("%s becomes leader in epoch %s (ISR %s, LEO %s)", b, get("epoch"), get("isr"), get("leo"))
		case "become-follower":
			add("%s follows b%s in epoch %s", b, get("leader"), get("epoch"))
		case "crash":
			if get("lose-unsynced") == "true" {
				add("%s loses power (unsynced writes lost)", b)
			} else {
				add("%s crashes", b)
			}
		case "start":
			if num("incarnation") > 0 && strings.HasPrefix(b, "b") {
				add("%s restarts", b)
			}
		case "log-loaded":
			if len(out) > 0 && strings.HasSuffix(out[len(out)-1], b+" restarts") {
				out[len(out)-1] += fmt.Sprintf(" with LEO=%s, HW checkpoint %s", get("leo"), get("hw-checkpoint"))
			}
		case "isr-shrink":
			add("%s shrinks the ISR to %s", b, get("new-isr"))
		case "controller-unclean-election":
			add("the controller elects b%s from outside the ISR (unclean)", get("leader"))
		case "pause":
			if u := num("until"); u > 0 {
				add("%s pauses until %s", b, sim.Time(u))
			} else {
				add("%s", strings.TrimSpace(r.Kind+" "+fieldsText(r)))
			}
		case "cut", "partition", "heal":
			if r.Name == "world" {
				add("%s", strings.TrimSpace(r.Kind+" "+fieldsText(r)))
			}
		}
	}
	for _, v := range res.Verdicts {
		if v.Result != checkers.ResultViolation {
			continue
		}
		// The contract breaks tell the story; a checker with only
		// permitted anomalies is told by its first one.
		broken := v.Broken()
		if len(broken) == 0 {
			broken = v.Anomalies[:1]
		}
		for _, a := range broken {
			switch {
			case v.Checker == checkers.NameAckedLoss:
				add("%s is lost", a.Value)
			case v.Checker == checkers.NameDivergence:
				add("the replicas diverge: %s", a.Description)
			default:
				add("%s: %s", v.Checker, a.Description)
			}
		}
	}
	return out
}

func fieldsText(r sim.Record) string {
	var parts []string
	for _, f := range r.Fields {
		if f.IsInt {
			parts = append(parts, f.Key+"="+strconv.FormatInt(f.Int, 10))
		} else {
			parts = append(parts, f.Key+"="+f.Str)
		}
	}
	return strings.Join(parts, " ")
}

// sortedLogs iterates logs in broker-name order (no map order reaches the
// output).
func sortedLogs(logs map[string]map[int64]string) func(func(string, map[int64]string) bool) {
	return func(yield func(string, map[int64]string) bool) {
		names := make([]string, 0, len(logs))
		for n := range logs {
			names = append(names, n)
		}
		sortStrings(names)
		for _, n := range names {
			if !yield(n, logs[n]) {
				return
			}
		}
	}
}

// storyValue names a record: its value, or "a record" when only its offset
// is known.
func storyValue(v string) string {
	if strings.HasPrefix(v, "offset ") {
		return "a record"
	}
	return v
}

// summarize lists values, runs of records known only by offset folded
// into "offsets 87-240": a fetch of a whole batch is one line, not 150.
func summarize(vals []string) string {
	var out []string
	for i := 0; i < len(vals); {
		off, ok := strings.CutPrefix(vals[i], "offset ")
		if !ok {
			out = append(out, vals[i])
			i++
			continue
		}
		j := i + 1
		for j < len(vals) && strings.HasPrefix(vals[j], "offset ") {
			j++
		}
		if j-i == 1 {
			out = append(out, "a record at offset "+off)
		} else {
			out = append(out, strconv.Itoa(j-i)+" records at offsets "+off+"-"+strings.TrimPrefix(vals[j-1], "offset "))
		}
		i = j
	}
	return strings.Join(out, ", ")
}
