package harness

// This file lets something outside the world set its pace: serve mode
// (package serve) runs a script's world on the wall clock and feeds in
// what real clients send. Every way the runner moves the world forward
// (StepOne, Advance, the awaits) asks the Pacer first, so the script's
// steps run at their virtual times while the pacer holds each event back
// until the wall clock reaches it.

import (
	"errors"
	"math"

	"github.com/kafkasim/kafkasim/sim"
)

// Pacer decides when the world may go on. Before is called each time the
// runner is about to run the world up to t: the next event's time, or a
// deadline with no event before it. It either waits until the world may
// reach t and returns false, or acts on the world (at a time before t:
// the world's own time, after RunUntil of an earlier time) and returns
// true, and the runner looks at the next event again, since what it did
// may have queued an earlier one. An error ends the run's steps:
// ErrStopped for a stop that the end phase and the checkers follow.
type Pacer interface {
	Before(r *Runner, t sim.Time) (acted bool, err error)
}

// ErrStopped is a Pacer's stop: the served run ends and is judged.
var ErrStopped = errors.New("stopped")

// Forever is the deadline a paced run serves to after its script's steps:
// it ends with the pacer's stop.
const Forever = sim.Time(math.MaxInt64 / 4)

// pace asks the pacer, if any, whether the world may go on to t.
func (r *Runner) pace(t sim.Time) (bool, error) {
	if r.Pacer == nil {
		return false, nil
	}
	acted, err := r.Pacer.Before(r, t)
	if errors.Is(err, ErrStopped) {
		r.stopped = true
	}
	return acted, err
}

// idleUntil runs the world to t, where no event is due before t; it
// returns false when the pacer acted instead (the caller looks again).
func (r *Runner) idleUntil(t sim.Time) (bool, error) {
	acted, err := r.pace(t)
	if err != nil || acted {
		return false, err
	}
	r.World.RunUntil(t)
	return true, nil
}
