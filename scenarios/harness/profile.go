package harness

// This file is the swarm profile, swarm testing as FoundationDB's and
// TigerBeetle's simulators mean it (Groce et al., "Swarm Testing", ISSTA
// 2012): besides the schedule, each seed draws which fault kinds are
// enabled and at which rates, so that across seeds some runs see only
// pauses, others crashes and partitions at twice the script's rate, and a
// bug that one fault kind hides behind another is still reached.
//
// With $profile=swarm (the default) each rate the script gives (crash,
// power-loss, pause, partition, consumer-crash, consumer-stall,
// consumer-pause, wipe-disk) is scaled by a factor drawn
// through the world's chooser (sim.KindProfile) from {1, 0, 0.5, 2},
// clipped to [0, 1]; heal is scaled by one of {1, 0.5, 2}, never off, so
// partitions do not pile up for the whole run. When every drawn fault kind
// is off, one of them (drawn too) keeps the script's rate: a profile
// always injects something. With $profile=fixed the script's rates are
// used as given.
//
// Simplification: the factors are a small fixed menu rather than a
// continuous draw; index 0 of every draw is factor 1 (the script's rate),
// so a replay or a shrink that runs past its recorded choices falls back
// to the script as written.

import (
	"math"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/scenarios"

	"github.com/kafkasim/kafkasim/sim"
)

// swarmFaultKinds are the swarm's fault rates, in the order the profile
// draws them and a fault draw tries them.
// wipe-disk is last: a script without it draws what it drew before.
var swarmFaultKinds = []string{"crash", "power-loss", "pause", "partition", "heal", "consumer-crash", "consumer-stall", "consumer-pause", "wipe-disk"}

// profileScales are the factors a swarm profile applies to a fault kind's
// rate; healScales those it applies to heal's.
var (
	profileScales = []float64{1, 0, 0.5, 2}
	healScales    = []float64{1, 0.5, 2}
)

// swarmProfile is the fault kinds of one swarm step and their rates.
type swarmProfile struct {
	mode  string
	rates map[string]float64 // by fault kind; kinds the script does not give are absent
}

// drawProfile returns the profile of a swarm step whose script rates are
// base: base itself when mode is fixed, else drawn through w's chooser.
func drawProfile(w *sim.World, mode string, base map[string]float64) swarmProfile {
	p := swarmProfile{mode: mode, rates: map[string]float64{}}
	for k, f := range base {
		p.rates[k] = f
	}
	if mode == scenarios.ProfileFixed {
		return p
	}
	var offered, on []string // fault kinds (heal apart) the script gives; those left on
	for _, k := range swarmFaultKinds {
		f := base[k]
		if f <= 0 {
			continue // a kind the script leaves out stays out, and costs no choice
		}
		scales := profileScales
		if k == "heal" {
			scales = healScales
		}
		p.rates[k] = math.Min(1, f*scales[w.Choose(sim.KindProfile, len(scales))])
		if k != "heal" {
			offered = append(offered, k)
			if p.rates[k] > 0 {
				on = append(on, k)
			}
		}
	}
	if len(on) == 0 && len(offered) > 0 {
		k := offered[w.Choose(sim.KindProfile, len(offered))]
		p.rates[k] = base[k]
	}
	return p
}

// String renders the profile as "swarm: crash=0.6 power-loss=0 pause=0.1
// partition=0.2 heal=0.3" (the mode, then every rate in draw order; the
// consumer-crash, consumer-stall and consumer-pause rates only when the script gives them).
func (p swarmProfile) String() string {
	var parts []string
	for _, k := range swarmFaultKinds {
		f, ok := p.rates[k]
		if !ok && (k == "consumer-crash" || k == "consumer-stall" || k == "consumer-pause" || k == "wipe-disk") {
			continue
		}
		parts = append(parts, k+"="+strconv.FormatFloat(math.Round(f*1e6)/1e6, 'f', -1, 64))
	}
	return p.mode + ": " + strings.Join(parts, " ")
}
