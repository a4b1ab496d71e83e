package sim

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// Kind names the sort of decision a choice point makes. The explorer and the
// shrinker treat kinds differently (a fault is worth branching on; a latency
// often is not), and replay checks that the recorded kind matches.
type Kind uint8

// The kinds of choice point. Index 0 of every choice is its default: the
// first simultaneous event, the minimum latency, no fault.
const (
	KindOrder     Kind = iota // which of several events due at the same instant runs first
	KindLatency               // a message's latency, as a step within the link's range
	KindDrop                  // whether the network drops a message
	KindDuplicate             // whether the network duplicates a message
	KindReorder               // whether a message skips the link's FIFO order
	KindDelay                 // whether a message is delayed by the link's extra delay
	KindCrashKeep             // how many unsynced writes a power loss keeps
	KindTear                  // whether, and where, a power loss tears the last kept write
	KindCorrupt               // whether, and where, a read returns a flipped bit
	KindFault                 // fault timing and placement chosen by a schedule
	KindWorkload              // workload randomness drawn by a node through its context
	KindProfile               // a swarm profile: which fault kinds a run enables, at which rates
	numKinds
)

var kindNames = [numKinds]string{"order", "latency", "drop", "duplicate", "reorder", "delay", "crash-keep", "tear", "corrupt", "fault", "workload", "profile"}

// String returns the kind's name as used in traces and choice files.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// ParseKind is the inverse of Kind.String.
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("unknown choice kind %q (allowed: %v)", s, kindNames)
}

// Chooser makes every nondeterministic decision of a world. A seeded Random
// chooser gives random simulation; a Replay chooser gives exact replay; a
// Prefix chooser lets an explorer or a shrinker drive the run.
//
// Choose returns an index in [0, n) for n >= 1. Chance returns whether an
// event of probability p happens; it is recorded as a choice with n = 2
// (index 1 = it happened). The world never calls Chance with p <= 0 and
// never calls Choose with n == 1, so recorded choice lists hold only real
// decisions.
type Chooser interface {
	Choose(k Kind, n int) int
	Chance(k Kind, p float64) bool
}

// Choice is one recorded decision.
type Choice struct {
	Kind  Kind
	N     int // number of alternatives
	Index int // the alternative taken, in [0, N)
}

// String renders c as "kind:index/n".
func (c Choice) String() string { return fmt.Sprintf("%s:%d/%d", c.Kind, c.Index, c.N) }

// splitmix64 is the finalizer of SplitMix64; it derives independent seeds.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// DeriveSeed returns a seed for the named sub-stream of seed; the same
// inputs always give the same output.
func DeriveSeed(seed uint64, stream uint64) uint64 {
	return splitmix64(splitmix64(seed) ^ splitmix64(stream+0x632be59bd9b4e019))
}

// Random is the seeded chooser. Each kind draws from its own PCG stream
// derived from the seed, so that, say, an extra latency draw does not shift
// every later fault decision: runs that differ in one place stay alike
// elsewhere, which keeps shrinking and comparisons meaningful.
type Random struct {
	seed    uint64
	streams [numKinds]rand.PCG
}

// NewRandom returns a chooser seeded with seed.
func NewRandom(seed uint64) *Random {
	r := &Random{seed: seed}
	for k := range r.streams {
		r.streams[k].Seed(DeriveSeed(seed, uint64(k)), DeriveSeed(seed, uint64(k)+1<<32))
	}
	return r
}

// Seed returns the seed r was made with.
func (r *Random) Seed() uint64 { return r.seed }

// Choose implements Chooser.
func (r *Random) Choose(k Kind, n int) int {
	if n <= 1 {
		return 0
	}
	// Lemire's nearly divisionless bounded draw, as math/rand/v2 does.
	s := &r.streams[k%numKinds]
	bound := uint64(n)
	hi, lo := bits.Mul64(s.Uint64(), bound)
	if lo < bound {
		thresh := -bound % bound
		for lo < thresh {
			hi, lo = bits.Mul64(s.Uint64(), bound)
		}
	}
	return int(hi)
}

// Chance implements Chooser.
func (r *Random) Chance(k Kind, p float64) bool {
	if p <= 0 {
		return false
	}
	if p >= 1 {
		return true
	}
	s := &r.streams[k%numKinds]
	return float64(s.Uint64()>>11)*(1.0/(1<<53)) < p
}

// Recorder wraps a chooser and keeps every decision it makes, so that any
// run can be replayed or handed to the shrinker.
type Recorder struct {
	Inner   Chooser
	Choices []Choice
}

// Choose implements Chooser.
func (r *Recorder) Choose(k Kind, n int) int {
	i := r.Inner.Choose(k, n)
	r.Choices = append(r.Choices, Choice{k, n, i})
	return i
}

// Chance implements Chooser.
func (r *Recorder) Chance(k Kind, p float64) bool {
	ok := r.Inner.Chance(k, p)
	i := 0
	if ok {
		i = 1
	}
	r.Choices = append(r.Choices, Choice{k, 2, i})
	return ok
}

// DivergenceError reports that a replayed run asked for a different decision
// than the one recorded at that point: the code or the inputs changed.
type DivergenceError struct {
	At      int
	Want    Choice
	GotKind Kind
	GotN    int
}

func (e *DivergenceError) Error() string {
	return fmt.Sprintf("replay diverged at choice %d: recorded %v, run asked for %s with %d alternatives", e.At, e.Want, e.GotKind, e.GotN)
}

// Prefix replays a list of choices and then hands every later decision to
// Then (the default chooser, which takes alternative 0, when Then is nil).
// It is the hook for exhaustive exploration and shrinking: each branch is a
// new run with a longer or different prefix. A recorded choice whose kind or
// arity does not match the run's request panics with a *DivergenceError,
// which the world turns into a failed run.
type Prefix struct {
	Choices []Choice
	Then    Chooser
	pos     int
}

// Replay returns a chooser that reproduces a recorded run exactly.
func Replay(choices []Choice) *Prefix { return &Prefix{Choices: choices} }

// Pos returns how many recorded choices have been consumed.
func (p *Prefix) Pos() int { return p.pos }

func (p *Prefix) next(k Kind, n int) (int, bool) {
	if p.pos >= len(p.Choices) {
		return 0, false
	}
	c := p.Choices[p.pos]
	if c.Kind != k || c.N != n || c.Index < 0 || c.Index >= n {
		panic(&DivergenceError{At: p.pos, Want: c, GotKind: k, GotN: n})
	}
	p.pos++
	return c.Index, true
}

// Choose implements Chooser.
func (p *Prefix) Choose(k Kind, n int) int {
	if i, ok := p.next(k, n); ok {
		return i
	}
	if p.Then != nil {
		return p.Then.Choose(k, n)
	}
	return 0
}

// Chance implements Chooser.
func (p *Prefix) Chance(k Kind, prob float64) bool {
	if i, ok := p.next(k, 2); ok {
		return i == 1
	}
	if p.Then != nil {
		return p.Then.Chance(k, prob)
	}
	return false
}
