package serve

// This file is serve -faults on serve's side: it starts the fault schedule
// (harness/faults.go: the swarm's faults, drawn through the world's chooser
// on a seeded schedule of virtual time) once the cluster is ready, prints
// each fault as it is injected, and keeps them for status and the summary
// at stop. The schedule runs inside the world; the tape names the profile
// (TapeHeader.Faults), so a replay draws the same faults at the same
// points.

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

// faultLog is a served run's fault schedule and what it injected so far.
// It is used on the world's goroutine only (and read once the run ended).
type faultLog struct {
	// profile is the schedule asked for (nil: none); drawn the one the
	// run draws at, from the moment from.
	profile *harness.FaultProfile
	drawn   harness.FaultProfile
	from    sim.Time
	started bool
	faults  []harness.InjectedFault
	// print receives the schedule's line and each fault's (nil: none).
	print func(string)
}

// start starts the schedule, if any, and reports whether it did.
func (l *faultLog) start(r *harness.Runner) bool {
	if l.profile == nil || l.started {
		return false
	}
	l.started, l.from = true, r.World.Now()
	l.drawn = r.StartFaults(*l.profile, func(f harness.InjectedFault) {
		l.faults = append(l.faults, f)
		l.say(f.String())
	})
	l.say(fmt.Sprintf("faults from %v: %s (a draw every %v of virtual time, about a fault every %v)", l.from, l.drawn, l.drawn.Every, l.drawn.MeanInterval()))
	return true
}

func (l *faultLog) say(line string) {
	if l.print != nil && line != "" {
		l.print(line)
	}
}

// counts renders how many faults of each kind were injected: "crash 3,
// restart 2, pause 1".
func (l *faultLog) counts() string {
	n := map[string]int{}
	for _, f := range l.faults {
		n[f.Op]++
	}
	var parts []string
	for _, op := range []string{"crash", "power-loss", "restart", "pause", "partition", "heal"} {
		if n[op] > 0 {
			parts = append(parts, op+" "+strconv.Itoa(n[op]))
		}
	}
	return strings.Join(parts, ", ")
}

// status is the line status adds: the faults so far and the last one.
func (l *faultLog) status() string {
	if l.profile == nil {
		return ""
	}
	if !l.started {
		return "\nfaults: none yet (the schedule starts once the cluster is ready)"
	}
	if len(l.faults) == 0 {
		return fmt.Sprintf("\nfaults: none yet (a draw every %v since %v)", l.drawn.Every, l.from)
	}
	last := l.faults[len(l.faults)-1]
	return fmt.Sprintf("\nfaults: %d so far (%s); the last: %s", len(l.faults), l.counts(), last)
}

// summary is the line printed at stop ("" without -faults).
func (l *faultLog) summary() string {
	switch {
	case l.profile == nil:
		return ""
	case len(l.faults) == 0:
		return "faults: none injected while serving"
	}
	return fmt.Sprintf("faults: %d injected while serving (%s); the end phase healed and restarted what they left before the checkers judged", len(l.faults), l.counts())
}
