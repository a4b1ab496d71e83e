package workload

// This file writes the schedule of an exploration run as a scenario script:
// the scenario's header (cluster, configuration, variants) with
// 'controller manual', and the steps the explorer took — its LeaderAndIsr
// decisions, produces, crashes, power losses, restarts, cuts and heals —
// at the virtual times it took them, as 'run DUR' gaps between them, then
// its settling. 'kafkasim run -scenario FILE' runs that schedule under
// every variant, so "does kip279 survive the schedule that broke hw?" is
// one command even where the choice file does not fit kip279.
//
// What a script cannot say, the script's opening comment says: the order
// of events due at the same instant (a script run draws it from its seed;
// the explorer took the default order), where within one instant an action
// fell (a script's step runs after every event due by then; the explorer
// acted right after the event that changed the state), and an unclean
// election as such (a leader-and-isr step is clean to the checkers).
// Message latency is the explorer's one fixed latency
// (kafkasim.link.latency.ms=1), and the run ends with a script's end phase
// (heal, liveness, final reads), which an exploration does not have.

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/harness"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/sim"
)

// opUnclean marks an unclean election in a schedule: a comment in the
// written script, not a step.
const opUnclean = "#unclean"

// exec records a step in the schedule and takes it.
func (e *explorer) exec(st scenarios.Step) error {
	if !e.search {
		e.sched = append(e.sched, harness.TimedStep{At: e.r.World.Now(), Step: st})
	}
	if st.Op == "leader-and-isr" {
		return e.r.LeaderAndISR(st)
	}
	return e.r.Step(st)
}

// ScheduleGaps is the opening comment of a written schedule script: what
// of the explored run it does not express.
const ScheduleGaps = `# What this script does not express (it reproduces the faults, the
# controller's decisions and the produces, at their times):
#  - the order of events due at the same instant: a script run draws it
#    from its seed, the explorer took the default order;
#  - where within one instant an action fell: a step runs after every event
#    due by then, the explorer acted right after the event that changed the
#    state (so a step may see one more message delivered);
#  - an unclean election as such: a leader-and-isr step is clean to the
#    checkers (marked by a comment where the explorer elected uncleanly).
# Every link has the explorer's one latency (kafkasim.link.latency.ms=1);
# after the last step the end phase heals, checks liveness and reads back,
# which an exploration does not. No expect lines: the scenario's
# expectations are about its own steps; each checker's verdict is reported.`

// WriteScheduleScript writes res, an exploration run of s, as a scenario
// script (see the file comment). origin is the command that found the run
// and checker the checker it violated, for the opening comment.
func WriteScheduleScript(w io.Writer, s *scenarios.Script, res *harness.Result, origin, checker string) error {
	if res.Schedule == nil {
		return fmt.Errorf("run of %s/%s is not an exploration run: its schedule is the script's own steps", res.Scenario, res.Variant)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# kafkasim schedule script: the run of %s under variant %s (seed %d) that violated %s,\n", res.Scenario, res.Variant, res.Seed, checker)
	fmt.Fprintf(bw, "# found by: %s\n", origin)
	fmt.Fprintf(bw, "# Run it under every variant: kafkasim run -scenario FILE [-variant V]\n#\n%s\n\n", ScheduleGaps)
	fmt.Fprintf(bw, "name %s-schedule\n", s.Name)
	fmt.Fprintf(bw, "describe the explored schedule of %s/%s that violated %s: %s\n", res.Scenario, res.Variant, checker, commentFree(strings.Join(ExploreActions(res), "; ")))
	if s.Source != "" {
		fmt.Fprintf(bw, "source %s\n", commentFree(s.Source))
	}
	fmt.Fprintln(bw, "controller manual")
	fmt.Fprintf(bw, "brokers %d", s.Brokers)
	if len(s.Racks) > 0 {
		fmt.Fprintf(bw, " racks=%s", strings.Join(s.Racks, ","))
	}
	fmt.Fprintln(bw)
	for _, t := range s.Topics {
		fmt.Fprintf(bw, "topic %s partitions=%d rf=%d", t.Name, t.Partitions, t.ReplicationFactor)
		if len(t.Assignment) > 0 {
			parts := make([]string, len(t.Assignment))
			for i, rs := range t.Assignment {
				ids := make([]string, len(rs))
				for j, id := range rs {
					ids[j] = strconv.Itoa(int(id))
				}
				parts[i] = strings.Join(ids, ",")
			}
			fmt.Fprintf(bw, " assignment=%s", strings.Join(parts, ";"))
		}
		fmt.Fprintln(bw)
	}
	props := map[string]string{}
	for k, v := range s.Props {
		props[k] = v
	}
	props[scenarios.PropLinkLatency] = strconv.FormatInt(int64(exploreLatency/sim.Millisecond), 10)
	fmt.Fprintf(bw, "set %s\n", kvLine(props))
	if end := sim.Duration(res.ScheduleEnd) + 5*sim.Minute; end > s.Limit {
		fmt.Fprintf(bw, "limit %dm\n", (end+sim.Minute-1)/sim.Minute)
	} else if s.Limit != 10*sim.Minute {
		fmt.Fprintf(bw, "limit %s\n", scriptDuration(s.Limit))
	}
	if s.NoFinalRead {
		fmt.Fprintln(bw, "final-read off")
	}
	switch {
	case s.KeepCuts && len(s.KeepCutsBetween) > 0:
		fmt.Fprintf(bw, "end-phase keep-cuts=%s\n", strings.Join(s.KeepCutsBetween, ","))
	case s.KeepCuts:
		fmt.Fprintln(bw, "end-phase keep-cuts")
	}
	for _, v := range s.Variants {
		fmt.Fprintf(bw, "variant %s", v.Name)
		if len(v.Props) > 0 {
			fmt.Fprintf(bw, " %s", kvLine(v.Props))
		}
		fmt.Fprintln(bw)
	}
	fmt.Fprintln(bw)
	var now sim.Time
	for _, ts := range res.Schedule {
		if ts.At > now {
			fmt.Fprintf(bw, "run %s\n", scriptDuration(sim.Duration(ts.At-now)))
			now = ts.At
		}
		if ts.Step.Op == opUnclean {
			fmt.Fprintf(bw, "# the explorer elects %s uncleanly (from outside the ISR) with the next step\n", ts.Step.Args[0])
			continue
		}
		fmt.Fprintln(bw, stepLine(ts.Step))
	}
	if res.ScheduleEnd > now {
		fmt.Fprintf(bw, "run %s   # the explorer's settling, then the checkers\n", scriptDuration(sim.Duration(res.ScheduleEnd-now)))
	}
	return bw.Flush()
}

// SaveScheduleScript writes the script to path whole or not at all
// (through a temporary file renamed into place).
func SaveScheduleScript(path string, s *scenarios.Script, res *harness.Result, origin, checker string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	err = WriteScheduleScript(tmp, s, res, origin, checker)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		os.Remove(tmp.Name())
	}
	return err
}

// stepLine renders a step as a script line: the op, the positional
// arguments, then key=value pairs in key order.
func stepLine(st scenarios.Step) string {
	parts := append([]string{st.Op}, st.Args...)
	if len(st.KV) > 0 {
		parts = append(parts, kvLine(st.KV))
	}
	return strings.Join(parts, " ")
}

// kvLine renders key=value pairs in key order.
func kvLine(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for i, k := range keys {
		keys[i] = k + "=" + m[k]
	}
	return strings.Join(keys, " ")
}

// scriptDuration renders d in the largest unit that divides it (a script's
// durations are integers of us, ms, s, m or h); NB: an exploration's times
// are whole microseconds (its latency and timers are milliseconds), and a
// remainder below a microsecond is rounded up.
func scriptDuration(d sim.Duration) string {
	for _, u := range []struct {
		unit   sim.Duration
		suffix string
	}{{sim.Hour, "h"}, {sim.Minute, "m"}, {sim.Second, "s"}, {sim.Millisecond, "ms"}} {
		if d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64((d+sim.Microsecond-1)/sim.Microsecond), 10) + "us"
}

// commentFree keeps free text from starting a comment in a script line.
func commentFree(s string) string { return strings.ReplaceAll(s, "#", "no.") }
