package serve

// This file holds the two pacers of a served world (harness.Pacer). The
// live one paces virtual time to the wall clock and applies what the
// sockets and standard input deliver; the tape one applies a recorded
// tape's inputs at the same points, so a replay takes the same path.
//
// The rule both follow, which makes a tape replayable: an input is applied
// only inside Before(t), at the world's event count E and a virtual time T
// with T < t (no event due before T), after RunUntil(T). The live pacer
// stamps an input with the virtual time of its arrival on the wall clock
// (never before the world's own time), holds it while an event is due
// first, and tapes (E, T). The tape pacer applies an entry at the first
// Before whose E matches and whose t lies past T — where the live pacer
// applied it, since the two see the same world.
//
// Until every partition has a leader the world runs unpaced (a cluster's
// start takes a few virtual seconds); the wall clock is tied to the
// virtual one at that moment, the "ready" line.

import (
	"fmt"
	"strings"
	"time"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
)

// input is something from outside the world.
type input struct {
	TapeEntry
	wall  time.Time     // arrival on the wall clock (live only)
	sock  *socket       // the accepted connection (live accept only)
	reply chan<- string // a command's answer (live only)
	why   string        // a close's reason
}

// readyWithin bounds the unpaced start: a cluster whose partitions have
// no leader by then (a scenario that starts with a broker down, say) is
// served anyway, paced from that moment, and the log says what is missing.
const readyWithin = 60 * sim.Second

// driver is what both pacers share.
type driver struct {
	g     *gateway
	ready bool
	// onReady is told when the cluster is ready, or with what is missing
	// when readyWithin passed first.
	onReady func(r *harness.Runner, missing string)
	// faults is the fault schedule (-faults), started once ready.
	faults faultLog
}

// begin runs at the top of every Before: it closes the connections of
// brokers that went down and reports whether the cluster is ready (and
// notes the moment it first is), and whether it just started the fault
// schedule, which queued the schedule's first draw (the pacer then
// returns acted, so that the runner looks at the next event again).
func (d *driver) begin(r *harness.Runner) (ready, started bool) {
	if d.g.r == nil {
		d.g.r = r
		d.g.hist.rec, d.g.hist.r = r.Recorder, r
		d.g.hist.judged, d.g.hist.declared = map[string]bool{}, map[string]bool{}
		for i := range r.Cluster.Brokers {
			d.g.apis = append(d.g.apis, r.Cluster.SupportedAPIs(i))
		}
	}
	d.g.sync()
	if d.ready {
		return true, false
	}
	ready = r.Ready()
	if !ready && r.World.Now() < sim.Time(readyWithin) {
		return false, false
	}
	d.ready = true
	d.g.listen = true
	if d.onReady != nil {
		missing := ""
		if !ready {
			missing = status(r)
		}
		d.onReady(r, missing)
	}
	return true, d.faults.start(r)
}

// apply applies one input at the world's current time; a command's
// answer is returned.
func (d *driver) apply(r *harness.Runner, in input) (string, error) {
	switch in.Kind {
	case kindAccept:
		return "", d.g.accept(in.Conn, in.Broker)
	case kindFrame:
		d.g.request(in.Conn, in.Frame)
	case kindClose:
		if c := d.g.conn(in.Conn); c != nil {
			why := in.why
			if why == "" {
				why = "the client closed it"
			}
			d.g.close(c, why)
		}
	case kindCommand:
		answer, err := d.command(r, in.Line)
		// NB: a crash's sockets and listener close before its answer
		// leaves (the live pacer drains first), as they would at the next
		// step's sync: nothing runs in the world between the two.
		d.g.sync()
		return answer, err
	}
	return "", nil
}

// Commands are the live commands, as `help` lists them.
const Commands = "crash bN | restart bN | power-loss bN | shutdown bN | pause bN DUR | partition A,B | C | cut A -> B | cut A <-> B | heal | restart-all | crash-leader TOPIC/P | status | stop"

// readOnly reports whether a command line only reads the world (it is
// answered without being applied or taped).
func readOnly(line string) bool {
	w := strings.Fields(line)
	return len(w) == 0 || w[0] == "status" || w[0] == "help" || !changes(w[0])
}

// changes reports whether a command word is one that acts on the world.
func changes(word string) bool {
	switch word {
	case "crash", "restart", "power-loss", "shutdown", "pause", "partition", "cut", "heal", "restart-all", "crash-leader", "stop":
		return true
	}
	return false
}

// answerReadOnly answers status, help and unknown commands.
func answerReadOnly(r *harness.Runner, faults *faultLog, line string) string {
	w := strings.Fields(line)
	switch {
	case len(w) == 0:
		return ""
	case w[0] == "status":
		return status(r) + faults.status()
	case w[0] == "help":
		return "commands: " + Commands
	}
	return fmt.Sprintf("error: unknown command %q; commands: %s", w[0], Commands)
}

func status(r *harness.Runner) string {
	var b strings.Builder
	fmt.Fprintf(&b, "time %v simulated", r.World.Now())
	for i, id := range r.Cluster.Brokers {
		state := "up"
		if !r.World.Up(id) {
			state = "down"
		}
		fmt.Fprintf(&b, " b%d=%s", i, state)
	}
	for _, st := range r.Status() {
		isr := make([]string, len(st.ISR))
		for i, b := range st.ISR {
			isr[i] = fmt.Sprint(b)
		}
		fmt.Fprintf(&b, "\n%s/%d leader=%d epoch=%d isr=[%s] ", st.Topic, st.Partition, st.Leader, st.Epoch, strings.Join(isr, ","))
		switch {
		case st.HW >= 0:
			fmt.Fprintf(&b, "hw=%d", st.HW)
		case st.Offline:
			fmt.Fprintf(&b, "offline since %v simulated (no live leader), last known hw=%d", st.OfflineSince, st.LastHW)
		default:
			b.WriteString("hw=none (no live leader yet)")
		}
		if st.Why != "" {
			b.WriteString(" (" + st.Why + ")")
		}
	}
	return b.String()
}

// command applies a live command that acts on the world.
func (d *driver) command(r *harness.Runner, line string) (string, error) {
	w := strings.Fields(line)
	switch w[0] {
	case "stop":
		return "stopping", harness.ErrStopped
	case "crash-leader":
		if len(w) != 2 {
			return "error: want 'crash-leader TOPIC/P'", nil
		}
		for _, st := range r.Status() {
			if fmt.Sprintf("%s/%d", st.Topic, st.Partition) == w[1] {
				if st.Leader < 0 {
					return fmt.Sprintf("error: %s has no leader (%s)", w[1], st.Why), nil
				}
				line = fmt.Sprintf("crash b%d", st.Leader)
				if err := d.step(r, line); err != nil {
					return "error: " + err.Error(), nil
				}
				return fmt.Sprintf("ok: crashed b%d, the leader of %s", st.Leader, w[1]), nil
			}
		}
		return fmt.Sprintf("error: %q is not a partition of this run (status lists them)", w[1]), nil
	}
	if err := d.step(r, line); err != nil {
		return "error: " + err.Error(), nil
	}
	return "ok", nil
}

// step runs one script step now.
func (d *driver) step(r *harness.Runner, line string) error {
	st, err := scenarios.ParseStep(line)
	if err != nil {
		return err
	}
	return harness.Guard(func() error { return r.Step(st) })
}

// timerSlack is the shortest wait worth a timer: an event due sooner runs
// now (a Go timer wakes tens of microseconds late anyway, and running an
// event that early moves no answer before its time by more than that).
const timerSlack = 50 * time.Microsecond

// livePacer paces the world to the wall clock.
type livePacer struct {
	driver
	speed float64
	inbox <-chan input
	held  *input
	// base and vbase tie the clocks: virtual vbase was wall base.
	base  time.Time
	vbase sim.Time
	tape  *tapeWriter
	// flush hands what the gateway wrote to the sockets; relisten opens
	// and closes the listeners.
	flush    func([]frameOut)
	relisten func([]listenerChange)
}

func (p *livePacer) virtual(wall time.Time) sim.Time {
	return p.vbase + sim.Time(float64(wall.Sub(p.base))*p.speed)
}

func (p *livePacer) wall(t sim.Time) time.Time {
	return p.base.Add(time.Duration(float64(t-p.vbase) / p.speed))
}

func (p *livePacer) drain() {
	if len(p.g.relisten) > 0 {
		p.relisten(p.g.relisten)
		p.g.relisten = nil
	}
	if len(p.g.out) > 0 {
		p.flush(p.g.out)
		p.g.out = nil
	}
}

// Before implements harness.Pacer.
func (p *livePacer) Before(r *harness.Runner, t sim.Time) (bool, error) {
	wasReady := p.ready
	ready, started := p.begin(r)
	if !ready {
		return false, nil
	}
	if !wasReady {
		p.base, p.vbase = time.Now(), r.World.Now()
	}
	if started {
		return true, nil
	}
	p.drain()
	for {
		in := p.held
		p.held = nil
		if in == nil {
			select {
			case x := <-p.inbox:
				in = &x
			default:
			}
		}
		if in != nil {
			if in.Kind == kindCommand && readOnly(in.Line) {
				in.reply <- answerReadOnly(r, &p.faults, in.Line)
				continue
			}
			at := max(p.virtual(in.wall), r.World.Now())
			if at >= t {
				p.held = in // the event at t comes first
				return false, nil
			}
			r.World.RunUntil(at)
			in.Event, in.Time = r.World.Events(), r.World.Now()
			if in.sock != nil {
				in.Conn = p.g.accepted + 1
				in.sock.num = in.Conn
			}
			p.tape.write(in.TapeEntry)
			answer, err := p.apply(r, *in)
			if in.sock != nil {
				in.sock.start(p.g.conn(in.Conn) != nil)
			}
			p.drain()
			if in.reply != nil {
				in.reply <- answer
			}
			return true, err
		}
		wait := time.Hour
		if t < harness.Forever {
			wait = min(wait, time.Until(p.wall(t)))
		}
		if wait < timerSlack {
			return false, nil
		}
		timer := time.NewTimer(wait)
		select {
		case x := <-p.inbox:
			timer.Stop()
			p.held = &x
		case <-timer.C:
		}
	}
}

// tapePacer applies a tape's inputs where the live run applied them.
type tapePacer struct {
	driver
	entries []TapeEntry
	next    int
}

// Before implements harness.Pacer.
func (p *tapePacer) Before(r *harness.Runner, t sim.Time) (bool, error) {
	ready, started := p.begin(r)
	if !ready || started {
		return started, nil
	}
	p.g.out, p.g.relisten = nil, nil
	if p.next >= len(p.entries) {
		return false, fmt.Errorf("the tape ended at entry %d without a stop", len(p.entries))
	}
	e := p.entries[p.next]
	events, now := r.World.Events(), r.World.Now()
	if e.Event < events || (e.Event == events && e.Time < now) {
		return false, fmt.Errorf("tape entry %d (event %d at %v) does not fit this run, which is at event %d at %v: another scenario, seed, -set or kafkasim version", p.next+1, e.Event, e.Time, events, now)
	}
	if e.Event != events || e.Time >= t {
		return false, nil
	}
	p.next++
	r.World.RunUntil(e.Time)
	_, err := p.apply(r, input{TapeEntry: e})
	p.g.out, p.g.relisten = nil, nil
	return true, err
}
