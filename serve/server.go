package serve

// This file starts and stops a served run: it validates the inputs, opens
// the listeners, runs the world on its own goroutine until a stop, and
// hands back the judged result. Replay reruns a tape.

import (
	_ "embed"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

//go:embed cluster.txt
var clusterScript string

// ClusterScenario is the built-in scenario served without -scenario.
func ClusterScenario() *scenarios.Script {
	s, err := scenarios.Parse("cluster.txt", "cluster", strings.NewReader(clusterScript))
	if err != nil {
		panic(fmt.Sprintf("serve: the built-in cluster scenario: %v", err))
	}
	return s
}

// LoadScenario loads a scenario by name or path; "" is the built-in
// cluster.
func LoadScenario(name string) (*scenarios.Script, error) {
	if name == "" || name == "cluster" {
		return ClusterScenario(), nil
	}
	return scenarios.Load(name)
}

// Config is a served run's configuration.
type Config struct {
	// Scenario is the scenario as named (a name, a path, or "" for the
	// built-in cluster); Script is it loaded.
	Scenario string
	Script   *scenarios.Script
	Variant  string
	Seed     uint64
	Set      map[string]string
	// Host and Port: broker bN listens on Host:Port+N (Port 0: each on a
	// port of its own, for tests).
	Host string
	Port int
	// Speed is virtual seconds per wall second (1: real time).
	Speed float64
	// Tape, if set, receives the run's tape.
	Tape io.Writer
	// Replay is the command that replays the run, for the verdicts'
	// evidence: ReplayCommand of the tape's file ("": the scenario's own
	// replay command, which replays none of the clients' inputs).
	Replay string
	// Log receives what clients did wrong (malformed frames).
	Log io.Writer
	// Budget bounds the linearizability check (0: 10s).
	Budget time.Duration
	// Timeline keeps the replicas' changes and the whole trace, for an
	// HTML report.
	Timeline bool
	// Faults, if set, is the fault schedule injected while clients run
	// (serve -faults, faults.go), from the moment the cluster is ready.
	Faults *harness.FaultProfile
	// Print, if set, receives the lines a run prints as it goes, in order,
	// on the world's goroutine: "ready", the fault schedule's line and
	// each injected fault's.
	Print func(line string)
}

// Server is a running served world.
type Server struct {
	cfg       Config
	listeners []net.Listener
	addrs     []*net.TCPAddr
	inbox     chan input
	done      chan struct{}
	ready     chan struct{}
	finished  chan struct{}
	logMu     sync.Mutex

	mu      sync.Mutex
	sockets map[int]*socket

	result  *harness.Result
	err     error
	tapeErr error
	// faults is the world's fault log, read once the run ended.
	faults *faultLog
}

// Start validates cfg, opens the listeners and starts the world. Errors
// are bad input (a bad speed, variant or property, a port in use).
func Start(cfg Config) (*Server, error) {
	if !(cfg.Speed > 0) {
		return nil, fmt.Errorf("-speed %v: must be above 0 (1 = real time, 10 = ten times faster)", cfg.Speed)
	}
	if cfg.Script == nil {
		return nil, fmt.Errorf("no scenario")
	}
	v, _, err := harness.Prepare(cfg.Script, cfg.Variant, cfg.Set)
	if err != nil {
		return nil, err
	}
	cfg.Variant = v.Name
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	ls, err := listen(cfg.Host, cfg.Port, cfg.Script.Brokers)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, listeners: ls, inbox: make(chan input, 1024), done: make(chan struct{}),
		ready: make(chan struct{}), finished: make(chan struct{}), sockets: map[int]*socket{}}
	for _, l := range ls {
		s.addrs = append(s.addrs, l.Addr().(*net.TCPAddr))
	}
	var tape *tapeWriter
	if cfg.Tape != nil {
		h := TapeHeader{Version: TapeVersion, Scenario: cfg.Scenario, Variant: cfg.Variant, Seed: cfg.Seed, Set: cfg.Set}
		if cfg.Faults != nil {
			h.Faults = cfg.Faults.String()
		}
		tape = newTapeWriter(cfg.Tape, h)
	}
	g := &gateway{addrs: s.addrs, logf: s.logf}
	p := &livePacer{driver: driver{g: g, onReady: func(_ *harness.Runner, missing string) {
		if missing != "" {
			s.logf("some partitions have no leader after %v of the cluster's start; serving anyway:\n%s", readyWithin, missing)
		}
		if cfg.Print != nil {
			cfg.Print("ready")
		}
		close(s.ready)
	}, faults: faultLog{profile: cfg.Faults, print: cfg.Print}}, speed: cfg.Speed, inbox: s.inbox, tape: tape, flush: s.flushOut, relisten: s.relisten}
	s.faults = &p.faults
	for i, l := range ls {
		go s.acceptLoop(l, int32(i))
	}
	go func() {
		defer close(s.finished)
		s.result, s.err = harness.Run(cfg.Script, cfg.Variant, harness.Options{Seed: cfg.Seed, Set: cfg.Set, Budget: cfg.Budget, Timeline: cfg.Timeline,
			Pacer: p, Replay: cfg.Replay})
		s.tapeErr = tape.flush()
		s.shutdown()
	}()
	return s, nil
}

// Addrs returns the brokers' listener addresses, b0 first.
func (s *Server) Addrs() []string {
	var out []string
	for _, a := range s.addrs {
		out = append(out, a.String())
	}
	return out
}

// Ready is closed once every partition has a leader.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Done is closed once the run has ended and been judged.
func (s *Server) Done() <-chan struct{} { return s.finished }

// Command runs a live command and returns its answer ("" once the run is
// over).
func (s *Server) Command(line string) string {
	reply := make(chan string, 1)
	if !s.send(input{TapeEntry: TapeEntry{Kind: kindCommand, Line: strings.TrimSpace(line)}, wall: time.Now(), reply: reply}) {
		return ""
	}
	select {
	case a := <-reply:
		return a
	case <-s.finished:
		return ""
	}
}

// Faults returns the faults the schedule injected, once the run has ended
// (nil without Config.Faults).
func (s *Server) Faults() []harness.InjectedFault {
	<-s.finished
	return s.faults.faults
}

// FaultSummary is the line that says, once the run has ended, how many
// faults of each kind the schedule injected ("" without Config.Faults).
func (s *Server) FaultSummary() string {
	<-s.finished
	return s.faults.summary()
}

// Wait waits for the run to end (a stop command) and returns its result.
// The error is bad input only; a tape that could not be written is
// TapeErr's, the result judged all the same.
func (s *Server) Wait() (*harness.Result, error) {
	<-s.finished
	return s.result, s.err
}

// TapeErr returns the error that stopped the tape's writing, once the run
// has ended (nil when it was written whole, or not asked for).
func (s *Server) TapeErr() error {
	<-s.finished
	return s.tapeErr
}

// ReplayCommand is the command that replays the served run whose tape is
// at path.
func ReplayCommand(path string) string {
	return "kafkasim replay -tape " + harness.ShellQuote(path)
}

// shutdown closes the listeners and every connection.
func (s *Server) shutdown() {
	close(s.done)
	s.mu.Lock()
	for i, l := range s.listeners {
		if l != nil {
			l.Close()
			s.listeners[i] = nil
		}
	}
	for _, sk := range s.sockets {
		sk.nc.Close()
	}
	s.mu.Unlock()
}

// relisten closes the listeners of brokers that went down and opens those
// of brokers that came back, on their addresses. A port another process
// took meanwhile is logged: that broker then takes no new connections.
func (s *Server) relisten(changes []listenerChange) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ch := range changes {
		l := s.listeners[ch.broker]
		switch {
		case !ch.open && l != nil:
			l.Close()
			s.listeners[ch.broker] = nil
		case ch.open && l == nil:
			nl, err := net.Listen("tcp", s.addrs[ch.broker].String())
			if err != nil {
				s.logf("b%d restarted, but its listener could not open again: %v", ch.broker, err)
				continue
			}
			s.listeners[ch.broker] = nl
			go s.acceptLoop(nl, ch.broker)
		}
	}
}

// flushOut hands the world's frames and closes to the sockets.
func (s *Server) flushOut(out []frameOut) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range out {
		if sk := s.sockets[f.conn]; sk != nil {
			sk.push(f.frame)
			if f.frame == nil {
				delete(s.sockets, f.conn)
			}
		}
	}
}

func (s *Server) logf(format string, args ...any) {
	if s.cfg.Log == nil {
		return
	}
	s.logMu.Lock()
	defer s.logMu.Unlock()
	fmt.Fprintf(s.cfg.Log, format+"\n", args...)
}

// ReplayOptions configure Replay.
type ReplayOptions struct {
	// Budget bounds the linearizability check (0: 10s).
	Budget time.Duration
	// Timeline keeps the replicas' changes and the whole trace.
	Timeline bool
	// Command is the replay command the result names (ReplayCommand of
	// the tape's file; "": the scenario's own).
	Command string
	// Print, if set, receives the fault schedule's lines, as the served
	// run printed them (Config.Print), and at the end the summary a
	// served run prints at stop (Server.FaultSummary).
	Print func(line string)
}

// Replay reruns a tape: the served run's world, without its clients.
func Replay(h TapeHeader, entries []TapeEntry, o ReplayOptions) (*harness.Result, error) {
	s, err := LoadScenario(h.Scenario)
	if err != nil {
		return nil, err
	}
	if _, _, err := harness.Prepare(s, h.Variant, h.Set); err != nil {
		return nil, err
	}
	var faults *harness.FaultProfile
	if h.Faults != "" {
		f, err := harness.ParseFaultProfile(h.Faults)
		if err != nil {
			return nil, fmt.Errorf("the tape's faults: %w", err)
		}
		faults = &f
	}
	g := &gateway{logf: func(string, ...any) {}}
	p := &tapePacer{driver: driver{g: g, faults: faultLog{profile: faults, print: o.Print}}, entries: entries}
	res, err := harness.Run(s, h.Variant, harness.Options{Seed: h.Seed, Set: h.Set, Budget: o.Budget, Timeline: o.Timeline, Pacer: p, Replay: o.Command})
	if err == nil {
		p.faults.say(p.faults.summary())
	}
	return res, err
}
