package harness

// This file stops every run in the process when a resource bound is
// crossed (cmd/kafkasim's -max-memory guard calls StopAll): a run that
// outgrows the machine ends with a named reason (Result.Failed, exit 4)
// instead of an OOM kill. It is the one input to a run that is not a
// function of its scenario, configuration and seed, and it never makes a
// verdict: a stopped run is a failed run, judged on nothing.

import (
	"errors"
	"sync/atomic"
)

// stopAll holds why every run must stop now; nil while none must.
var stopAll atomic.Pointer[string]

// stopCheckEvery is how many events a run takes between two looks at
// stopAll (a power of two: a mask).
const stopCheckEvery = 1 << 12

// StopAll makes every run of this process fail at its next check, with
// reason as its Result.Failed.
func StopAll(reason string) { stopAll.Store(&reason) }

// ResumeAll undoes StopAll (tests; a command that starts over).
func ResumeAll() { stopAll.Store(nil) }

// stopped returns StopAll's reason as an error, checked every
// stopCheckEvery events of w.
func stoppedAt(events uint64) error {
	if events&(stopCheckEvery-1) != 0 {
		return nil
	}
	if p := stopAll.Load(); p != nil {
		return errors.New(*p)
	}
	return nil
}
