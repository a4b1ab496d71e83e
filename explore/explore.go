package explore

import (
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kafkasim/kafkasim/sim"
)

// RunFunc executes one run of the target with chooser c, which makes every
// decision of the run (pass it as sim.Config.Chooser). After setting up and
// after each step of its workload the run calls mark with a hash of the
// abstract state it reached. It returns a non-empty violation (a checker's
// name, or a short description) when the run failed; an error aborts the
// search (bad input).
//
// Invariant: a RunFunc is deterministic: the same choices give the same
// marks, the same requests for choices and the same verdict.
type RunFunc func(c sim.Chooser, mark func(hash uint64)) (violation string, err error)

// Options bound and steer a search.
type Options struct {
	// MaxRuns stops the search after that many runs (0 means no limit); a
	// search stopped early can be resumed from StateFile.
	MaxRuns int
	// Parallel is how many runs execute at once (0 or 1: one). It changes
	// the wall time only, never the result.
	Parallel int
	// Branch says which kinds of choice point are explored; nil explores
	// every kind. A kind not explored always takes its default.
	Branch func(sim.Kind) bool
	// StateFile, when set, is read at the start (if it exists) to resume a
	// search, and written when the search stops.
	StateFile string
	// DepthFirst runs the newest prefixes first (a stack) rather than the
	// oldest (a queue, breadth-first): deep violations come sooner, the
	// counterexamples found are longer (shrink them).
	DepthFirst bool
	// Key identifies the target and its bounds in StateFile: resuming a
	// file written for another key is an error.
	Key string
	// Progress, if set, is called after each batch with the search so far
	// (Elapsed and Violation unset). It reads no result back.
	Progress func(Report)
}

// batchSize is the number of queued prefixes run between two merges. It is
// a constant, not Parallel, so that the search order does not depend on
// the number of workers.
const batchSize = 32

// Violation is the first failing run found.
type Violation struct {
	What    string
	Choices []sim.Choice // every decision of the run, for replay
	Depth   int          // steps of the run
	Run     int          // its number (1-based) in the search
}

// Report is a search's outcome.
type Report struct {
	Runs      int           // runs executed (including those of resumed sessions)
	States    int           // distinct abstract states reached
	Depth     int           // the largest number of steps a run made
	Exhausted bool          // every branch up to the bound was explored
	Elapsed   time.Duration // wall time of this session
	Violation *Violation
}

// ErrDepth is returned when a run makes no step at all: nothing to explore.
var ErrDepth = errors.New("the target made no step: a depth of at least 1 is needed")

// mark is one state a run passed: Pos choices had been made when it was
// reached after Step steps.
type mark struct {
	pos  int
	hash uint64
}

// outcome is what one run reports back to the merge.
type outcome struct {
	prefix    []sim.Choice
	choices   []sim.Choice
	marks     []mark
	violation string
	err       error
}

// search is the state of a search: what is saved and resumed.
type search struct {
	queue   [][]sim.Choice
	visited map[uint64]int // state hash -> smallest depth it was reached at
	runs    int
	depth   int
}

// Search explores the target's choice tree breadth-first up to the bound
// the target's own depth sets, pruning states already reached.
func Search(run RunFunc, opts Options) (*Report, error) {
	start := time.Now()
	s := &search{visited: map[uint64]int{}, queue: [][]sim.Choice{nil}}
	if opts.StateFile != "" {
		loaded, err := load(opts.StateFile, opts.Key)
		if err != nil {
			return nil, err
		}
		if loaded != nil {
			s = loaded
		}
	}
	rep := &Report{}
	sessionRuns := 0
	for len(s.queue) > 0 {
		if opts.MaxRuns > 0 && sessionRuns >= opts.MaxRuns {
			break
		}
		n := min(batchSize, len(s.queue))
		if opts.MaxRuns > 0 {
			n = min(n, opts.MaxRuns-sessionRuns)
		}
		var batch [][]sim.Choice
		if opts.DepthFirst {
			// The newest prefixes first, newest at the batch's head.
			batch = slices.Clone(s.queue[len(s.queue)-n:])
			slices.Reverse(batch)
			s.queue = s.queue[:len(s.queue)-n]
		} else {
			batch = s.queue[:n]
			s.queue = s.queue[n:]
		}
		outs := runBatch(run, batch, opts.Parallel)
		for i, o := range outs {
			if o.err != nil {
				return nil, o.err
			}
			s.runs++
			sessionRuns++
			if len(o.marks) <= 1 {
				return nil, ErrDepth
			}
			s.depth = max(s.depth, len(o.marks)-2)
			if o.violation != "" {
				rep.Violation = &Violation{What: o.violation, Choices: o.choices, Depth: len(o.marks) - 2, Run: s.runs}
				// The rest of the batch goes back to the queue (a sequential
				// search would not have run it yet), so that a resumed
				// search continues past this violation.
				s.merge(o, opts.Branch)
				if opts.DepthFirst {
					rest := slices.Clone(batch[i+1:])
					slices.Reverse(rest)
					s.queue = append(s.queue, rest...)
				} else {
					s.queue = append(slices.Clone(batch[i+1:]), s.queue...)
				}
				break
			}
			s.merge(o, opts.Branch)
		}
		if rep.Violation != nil {
			break
		}
		if opts.Progress != nil {
			opts.Progress(Report{Runs: s.runs, States: len(s.visited), Depth: s.depth})
		}
	}
	rep.Runs, rep.States, rep.Depth = s.runs, len(s.visited), s.depth
	rep.Exhausted = len(s.queue) == 0 && rep.Violation == nil
	rep.Elapsed = time.Since(start)
	if opts.StateFile != "" {
		if err := s.save(opts.StateFile, opts.Key); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// runBatch executes prefixes on up to parallel goroutines and returns the
// outcomes in the prefixes' order. With one worker the runs execute in the
// caller: a run is short (a few hundred microseconds), and handing each to
// a goroutine cost a wake-up per run. With more, each worker takes the next
// index from a shared counter, not from a channel, for the same reason.
// Which worker ran a prefix never reaches its outcome.
func runBatch(run RunFunc, prefixes [][]sim.Choice, parallel int) []outcome {
	outs := make([]outcome, len(prefixes))
	parallel = max(1, min(parallel, len(prefixes)))
	if parallel == 1 {
		for i, p := range prefixes {
			outs[i] = runOne(run, p)
		}
		return outs
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < parallel; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1)) - 1
				if i >= len(prefixes) {
					return
				}
				outs[i] = runOne(run, prefixes[i])
			}
		}()
	}
	wg.Wait()
	return outs
}

// runOne executes one run: the prefix, then the default alternatives.
func runOne(run RunFunc, prefix []sim.Choice) (o outcome) {
	rec := &sim.Recorder{Inner: &sim.Prefix{Choices: prefix}}
	o.prefix = prefix
	// The virtual root: choices made before the first mark belong to the
	// setup, which has no state of its own.
	o.marks = []mark{{pos: 0}}
	defer func() {
		if v := recover(); v != nil {
			o.err = fmt.Errorf("explore: run with prefix of %d choices panicked: %v", len(prefix), v)
		}
	}()
	o.violation, o.err = run(rec, func(h uint64) { o.marks = append(o.marks, mark{pos: len(rec.Choices), hash: h}) })
	o.choices = rec.Choices
	// A run that ended between marks made its last choices after the last
	// state: they belong to no step, and are not branched.
	return o
}

// merge records the states a run reached and queues the alternatives of
// the choices it made in new territory.
func (s *search) merge(o outcome, branch func(sim.Kind) bool) {
	p := len(o.prefix)
	for k := 0; k+1 < len(o.marks); k++ {
		from, to := o.marks[k], o.marks[k+1]
		if to.pos < p {
			continue // the whole step replays the parent's path
		}
		if k > 0 && from.pos >= p {
			// A state past the branch point: expand it only if it was
			// never reached at this depth or a smaller one.
			if d, seen := s.visited[from.hash]; seen && d <= k {
				return
			}
			s.visited[from.hash] = k
		}
		for i := max(from.pos, p); i < to.pos; i++ {
			c := o.choices[i]
			if branch != nil && !branch(c.Kind) {
				continue
			}
			for a := 1; a < c.N; a++ {
				if a == c.Index {
					continue
				}
				alt := make([]sim.Choice, i+1)
				copy(alt, o.choices[:i])
				alt[i] = sim.Choice{Kind: c.Kind, N: c.N, Index: a}
				s.queue = append(s.queue, alt)
			}
		}
	}
	last := o.marks[len(o.marks)-1]
	k := len(o.marks) - 1
	if d, seen := s.visited[last.hash]; !seen || d > k {
		s.visited[last.hash] = k
	}
}
