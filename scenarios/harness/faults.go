package harness

// This file is the fault schedule of a paced run (kafkasim serve -faults):
// the swarm's faults (swarm.go) — crashes, power losses, pauses,
// partitions, heals, and restarts of the brokers they took down — drawn
// through the world's chooser at the rates of a profile, one draw every
// fault-every of virtual time, while real clients run. The draws are
// events of the world (At), so that a tape replays the schedule exactly:
// it is a function of the seed, the profile and the inputs (the live
// commands that crash or restart a broker change what a later draw meets).
// The schedule stops once the pacer stopped the run: the end phase then
// heals everything, as in every run, before the checkers judge.
//
// The profile is written in the swarm step's vocabulary: a named profile
// and/or key=value rates (ParseFaultProfile).
//
// Simplification: a partition cuts its broker off from the other brokers
// and the metadata store, as the swarm's does, but not from the clients'
// connections (they are the paced run's nodes, not the script's): the
// clients still reach it, as they reach a broker that lost its ZooKeeper
// session or its controllers — a zombie leader until the heal.

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/sim"
)

// FaultProfile is a paced run's fault schedule: a draw every Every, at
// Rates.
type FaultProfile struct {
	// Name is the named profile the rates start from ("" for none).
	Name string
	// Mode is scenarios.ProfileFixed (the rates as given, the default
	// here) or scenarios.ProfileSwarm (each rate scaled by a factor the
	// seed draws, as a swarm step's profile is: profile.go).
	Mode string
	// Every is the virtual time between two draws (fault-every).
	Every sim.Duration
	// Rates are the chances of crash, power-loss, pause, partition and
	// heal in one draw, as the swarm tries them; a kind left out is 0.
	Rates map[string]float64
	// Restart is the chance that a draw which picked a broker that is
	// down restarts it; -1 (not given): the swarm's rule, the crash and
	// power-loss rates.
	Restart float64
}

// FaultKinds are the fault kinds of a profile, in the order a draw tries
// them; consumer-crash stays the swarm's (a paced run's consumers are
// real clients, outside the world).
var FaultKinds = []string{"crash", "power-loss", "pause", "partition", "heal"}

// minFaultEvery bounds fault-every from below: a draw per virtual
// millisecond would keep every broker restarting and the world busy with
// nothing else.
const minFaultEvery = 10 * sim.Millisecond

// FaultKeys are the keys a fault profile takes besides the fault kinds.
var FaultKeys = []string{"fault-every", "restart", "profile"}

// NamedFaultProfile is a profile a name stands for.
type NamedFaultProfile struct {
	Name, Text string
}

// NamedFaultProfiles are the named profiles, as ParseFaultProfile reads
// them: default is the built-in swarm scenario's step (every fault kind),
// failover crashes and restarts only (leader failovers, a down broker
// restarted at its next draw), network pauses and partitions only (no
// broker goes down).
var NamedFaultProfiles = []NamedFaultProfile{
	{"default", "fault-every=2s crash=0.3 power-loss=0.1 pause=0.1 partition=0.2 heal=0.3"},
	{"failover", "fault-every=2s crash=0.5 restart=1"},
	{"network", "fault-every=2s pause=0.2 partition=0.4 heal=0.4"},
}

// FaultProfileSyntax says what a fault profile may be, for errors and
// help.
func FaultProfileSyntax() string {
	var names []string
	for _, n := range NamedFaultProfiles {
		names = append(names, n.Name)
	}
	return fmt.Sprintf("a named profile (%s) and/or KEY=VALUE words separated by spaces or commas; keys: %s (chances in [0,1]), fault-every (virtual time between draws, 10ms or more, e.g. 2s or 500ms), restart (chance in [0,1]), profile (fixed or swarm)",
		strings.Join(names, ", "), strings.Join(FaultKinds, ", "))
}

// ParseFaultProfile reads a fault profile: an optional named profile
// first, then KEY=VALUE words (each at most once) over it, e.g. "default",
// "crash=0.6 partition=0.4 heal=0.3", "failover,fault-every=1s". Without a
// name a kind not given is 0 and fault-every is 2s. Errors are bad input
// and name what is allowed.
func ParseFaultProfile(text string) (FaultProfile, error) {
	p := FaultProfile{Mode: scenarios.ProfileFixed, Every: 2 * sim.Second, Rates: map[string]float64{}, Restart: -1}
	words := strings.FieldsFunc(text, func(c rune) bool { return c == ' ' || c == ',' || c == '\t' })
	if len(words) == 0 {
		return p, fmt.Errorf("empty: want %s", FaultProfileSyntax())
	}
	if !strings.Contains(words[0], "=") {
		i := slices.IndexFunc(NamedFaultProfiles, func(n NamedFaultProfile) bool { return n.Name == words[0] })
		if i < 0 {
			return p, fmt.Errorf("%q is no named profile: want %s", words[0], FaultProfileSyntax())
		}
		named, err := ParseFaultProfile(NamedFaultProfiles[i].Text)
		if err != nil {
			panic(fmt.Sprintf("harness: named fault profile %s: %v", words[0], err))
		}
		p, words = named, words[1:]
		p.Name = NamedFaultProfiles[i].Name
	}
	seen := map[string]bool{}
	for _, word := range words {
		k, v, ok := strings.Cut(word, "=")
		if !ok {
			return p, fmt.Errorf("%q: a named profile comes first, once; then KEY=VALUE words: want %s", word, FaultProfileSyntax())
		}
		if seen[k] {
			return p, fmt.Errorf("%s given twice", k)
		}
		seen[k] = true
		switch {
		case slices.Contains(FaultKinds, k) || k == "restart":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || !(f >= 0 && f <= 1) {
				return p, fmt.Errorf("%s=%q: want a chance in [0,1]", k, v)
			}
			if k == "restart" {
				p.Restart = f
			} else {
				p.Rates[k] = f
			}
		case k == "fault-every":
			d, err := scenarios.ParseDuration(v)
			if err != nil || d < minFaultEvery {
				return p, fmt.Errorf("fault-every=%q: want a duration of virtual time of %v or more, e.g. 2s or 500ms", v, minFaultEvery)
			}
			p.Every = d
		case k == "profile":
			if err := scenarios.CheckProfileMode("profile", v); err != nil {
				return p, err
			}
			p.Mode = v
		case k == "consumer-crash", k == "consumer-pause", k == "consumer-stall":
			return p, fmt.Errorf("%s: a swarm step's, for the script's consumers; a served run's consumers are real clients (allowed keys: %s, %s)", k, strings.Join(FaultKinds, ", "), strings.Join(FaultKeys, ", "))
		default:
			return p, fmt.Errorf("unknown key %q: want %s", k, FaultProfileSyntax())
		}
	}
	if !slices.ContainsFunc([]string{"crash", "power-loss", "pause", "partition"}, func(k string) bool { return p.Rates[k] > 0 }) {
		return p, fmt.Errorf("%q injects nothing: give crash, power-loss, pause or partition a chance above 0", text)
	}
	return p, nil
}

// String renders p as ParseFaultProfile reads it back to p (the name
// dropped, every key given): "fault-every=2s crash=0.3 power-loss=0.1
// pause=0.1 partition=0.2 heal=0.3 profile=fixed", with restart=P when
// given.
func (p FaultProfile) String() string {
	parts := []string{"fault-every=" + durationText(p.Every)}
	for _, k := range FaultKinds {
		parts = append(parts, k+"="+rateText(p.Rates[k]))
	}
	if p.Restart >= 0 {
		parts = append(parts, "restart="+rateText(p.Restart))
	}
	return strings.Join(append(parts, "profile="+p.Mode), " ")
}

// MeanInterval is about how much virtual time passes between two faults:
// Every over the chance that a draw injects one (a draw tries the kinds in
// order and injects the first that comes up; a pause drawn for a broker
// that is down injects nothing, which this leaves out).
func (p FaultProfile) MeanInterval() sim.Duration {
	none := 1.0
	for _, k := range FaultKinds {
		none *= 1 - p.Rates[k]
	}
	if none >= 1 {
		return 0
	}
	return sim.Duration(float64(p.Every) / (1 - none))
}

func rateText(f float64) string {
	return strconv.FormatFloat(math.Round(f*1e6)/1e6, 'f', -1, 64)
}

// durationText renders d in the largest unit scenarios.ParseDuration reads
// it back exactly in.
func durationText(d sim.Duration) string {
	for _, u := range []struct {
		unit sim.Duration
		name string
	}{{sim.Hour, "h"}, {sim.Minute, "m"}, {sim.Second, "s"}, {sim.Millisecond, "ms"}} {
		if d%u.unit == 0 {
			return strconv.FormatInt(int64(d/u.unit), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(d/sim.Microsecond), 10) + "us"
}

// InjectedFault is one fault a paced run's schedule injected.
type InjectedFault struct {
	At sim.Time
	// Op is the step's: crash, power-loss, restart, pause, partition or
	// heal; Step the step as a live command says it ("pause b2 3s").
	Op, Step string
	// Leads are the partitions the target led when it was drawn ("t/0"),
	// and Controller whether it was the active controller.
	Leads      []string
	Controller bool
	// NoCut is set on a heal that found no link cut.
	NoCut bool
	// Err is why the step could not be applied ("" when it was).
	Err string
}

// String renders f as serve prints it: "fault 12.000s: crash b1 (leader
// of t/0, t/2)".
func (f InjectedFault) String() string {
	var notes []string
	if f.Controller {
		notes = append(notes, "the active controller")
	}
	if len(f.Leads) > 0 {
		notes = append(notes, "leader of "+strings.Join(f.Leads, ", "))
	}
	if f.NoCut {
		notes = append(notes, "nothing was cut")
	}
	s := fmt.Sprintf("fault %v: %s", f.At, f.Step)
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, "; ") + ")"
	}
	if f.Err != "" {
		s += ": error: " + f.Err
	}
	return s
}

// faultAction names the schedule's draws in the trace.
const faultAction = "fault-draw"

// StartFaults starts p's schedule in a paced run, the first draw p.Every
// from now, the next every p.Every until the pacer stops the run; report
// (if not nil) is told of each fault as it is injected, on the world's
// goroutine. It returns the profile the schedule draws at: p, with the
// rates the seed drew in swarm mode. The result's Profile names it too.
func (r *Runner) StartFaults(p FaultProfile, report func(InjectedFault)) FaultProfile {
	w := r.World
	q := p
	q.Rates = drawProfile(w, p.Mode, p.Rates).rates
	// base are the rates a down broker drawn is restarted at: the given
	// crash and power-loss rates, as the swarm's, or restart.
	base := map[string]float64{"crash": p.Rates["crash"], "power-loss": p.Rates["power-loss"]}
	if p.Restart >= 0 {
		base = map[string]float64{"crash": p.Restart}
	}
	r.profiles = append(r.profiles, "faults "+q.String())
	var draw func(*sim.World)
	draw = func(w *sim.World) {
		if r.Pacer == nil || r.stopped {
			return // the run is ending: the end phase heals
		}
		if st, ok := r.drawSwarmFault(q.Rates, base); ok {
			f := InjectedFault{At: w.Now(), Op: st.Op, Step: faultStepText(st)}
			f.Leads, f.Controller = r.leads(st)
			f.NoCut = st.Op == "heal" && !r.anyCut()
			if err := r.Step(st); err != nil {
				f.Err = err.Error()
			}
			if report != nil {
				report(f)
			}
		}
		w.At(w.Now().Add(q.Every), faultAction, draw)
	}
	w.At(w.Now().Add(q.Every), faultAction, draw)
	return q
}

// faultStepText renders a drawn fault's step as the live command that
// injects it.
func faultStepText(st scenarios.Step) string {
	words := append([]string{st.Op}, st.Args...)
	if st.Op == "pause" {
		words = append(words, durationText(st.Dur))
	}
	return strings.Join(words, " ")
}

// leads returns the partitions the target of st leads (as its replicas
// say) and whether it is the active controller (nothing for a heal, or a
// restart: its target is down).
func (r *Runner) leads(st scenarios.Step) ([]string, bool) {
	if len(st.Args) == 0 || st.Op == "restart" {
		return nil, false
	}
	name := st.Args[0]
	var out []string
	ctl := false
	if _, b, err := r.broker(name); err == nil {
		// NB: the broker's own view, not the controller's: a broker that
		// believes it leads is where the clients send (the controller may
		// be the one down).
		for _, tp := range r.Observer.Partitions {
			if r.leaderPartition(b, tp) != nil {
				out = append(out, tp.Topic+"/"+strconv.Itoa(int(tp.Partition)))
			}
		}
		if r.Cluster.Spec.KRaft() {
			ctl = r.Cluster.ActiveQuorumController() == name
		} else if i := r.Cluster.ActiveController(); i >= 0 {
			ctl = "b"+strconv.Itoa(i) == name
		}
	}
	return out, ctl
}

// anyCut reports whether some link of the world is cut.
func (r *Runner) anyCut() bool {
	w := r.World
	for from := range w.Nodes() {
		for to := range w.Nodes() {
			if from != to && w.Cut(sim.NodeID(from), sim.NodeID(to)) {
				return true
			}
		}
	}
	return false
}
