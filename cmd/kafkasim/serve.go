package main

// kafkasim serve: a simulated cluster on real sockets (package serve).
// This file parses the flags, prints the listeners, relays the live
// commands from standard input and the signals, and prints the verdicts.

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/kafkasim/kafkasim/reports"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/serve"
)

func init() {
	commands["serve"] = command{"serve a simulated cluster to real Kafka clients on TCP, with scripted and live faults, judged at stop", runServe}
}

// stdin is where serve reads its live commands (a test replaces it).
var stdin io.Reader = os.Stdin

// lockedWriter serializes the lines serve's goroutines print.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func runServe(args []string, stdoutW, stderrW io.Writer) error {
	stdout, stderr := &lockedWriter{w: stdoutW}, &lockedWriter{w: stderrW}
	fs := newFlags("serve", stderr)
	scenario := fs.String("scenario", "", "scenario name (kafkasim list) or script file to serve (default: the built-in cluster: 3 brokers, topic t with 3 partitions, RF 3, min.insync.replicas=2)")
	variant := fs.String("variant", "", "variant of the scenario (default: its first)")
	seedText := fs.String("seed", "1", "seed of the run")
	listenAddr := fs.String("listen", "127.0.0.1:9092", "HOST:PORT of b0; broker bN listens on PORT+N")
	speed := fs.Float64("speed", 1, "virtual seconds per wall second (1 = real time)")
	report := fs.String("report", "", "write the run's HTML report into DIR at stop")
	history := fs.String("history", "", "save the history (JSON lines, for kafkasim check) to FILE at stop")
	tapePath := fs.String("tape", "", "record the arrival order of every input to FILE, for kafkasim replay -tape (default: a temporary file, named on stderr)")
	strict := fs.Bool("strict", false, "exit 1 on a violation Kafka's contract permits, too")
	faultsText := fs.String("faults", "", "inject the swarm's faults while clients run, on a schedule drawn from the seed: `PROFILE` is "+harness.FaultProfileSyntax()+" (docs/serve.md, \"Faults while your clients run\")")
	maxMemoryText := fs.String("max-memory", "8GiB", "bound the server's memory to `SIZE` (KiB, MiB, GiB; a bare number is MiB; 0: none): the collector's soft limit; once three quarters of it stay live, or the process holds more, the run stops, judged, with exit 4 (docs/serve.md, \"Memory\")")
	set := setFlags{}
	fs.Var(set, "set", "override a configuration property, key=value (repeatable)")
	cf := addConfigFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	maxMemory, err := parseMemory(*maxMemoryText)
	if err != nil {
		return usagef("-max-memory %q: %v", *maxMemoryText, err)
	}
	lc, err := cf.load("serve", set, stderr)
	if err != nil {
		return err
	}
	seed, err := strconv.ParseUint(*seedText, 10, 64)
	if err != nil {
		return usagef("-seed %q: want a non-negative integer", *seedText)
	}
	if !(*speed > 0) {
		return usagef("-speed %v: must be above 0 (1 = real time, 10 = ten times faster)", *speed)
	}
	var faults *harness.FaultProfile
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == "faults" })
	if given {
		p, err := harness.ParseFaultProfile(*faultsText)
		if err != nil {
			return usagef("-faults %q: %v", *faultsText, err)
		}
		faults = &p
	}
	host, portText, err := net.SplitHostPort(*listenAddr)
	port, perr := strconv.Atoi(portText)
	if err != nil || perr != nil || port < 0 || port > 65535 {
		return usagef("-listen %q: want HOST:PORT, e.g. 127.0.0.1:9092", *listenAddr)
	}
	for _, f := range []string{*history, *tapePath} {
		if f == "" {
			continue
		}
		if st, err := os.Stat(filepath.Dir(f)); err != nil || !st.IsDir() {
			return usagef("%s: the directory %s does not exist", f, filepath.Dir(f))
		}
		if st, err := os.Stat(f); err == nil && st.IsDir() {
			return usagef("%s is a directory: name a file", f)
		}
	}
	s, err := serve.LoadScenario(*scenario)
	if err != nil {
		return usageError{err.Error()}
	}
	name := *scenario
	if name != "" {
		name = s.ReplayName()
	}
	// The configuration is validated before the tape's file is made.
	if _, _, err := harness.Prepare(s, *variant, set); err != nil {
		return lc.blame(err)
	}
	cfg := serve.Config{Scenario: name, Script: s, Variant: *variant, Seed: seed, Set: set, Host: host, Port: port,
		Speed: *speed, Log: stderr, Timeline: *report != "", Faults: faults,
		Print: func(line string) { fmt.Fprintln(stdout, line) }}
	tape, tapeName, err := openTape(*tapePath, stderr)
	if err != nil {
		return err
	}
	saved := false
	defer func() {
		if !saved {
			os.Remove(tape.Name()) // a run that never ran, or an incomplete tape
		}
	}()
	cfg.Tape, cfg.Replay = tape, serve.ReplayCommand(tapeName)
	defer tuneServeGC(maxMemory)()
	srv, err := serve.Start(cfg)
	if err != nil {
		return lc.blame(err)
	}
	guard := &memoryGuard{max: maxMemory, read: processMemory}
	go guard.watch(srv, stdout)
	for i, a := range srv.Addrs() {
		fmt.Fprintf(stdout, "b%d listening on %s\n", i, a)
	}
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		select {
		case <-signals:
			guard.stopped.Store(true)
			fmt.Fprintln(stdout, srv.Command("stop"))
		case <-srv.Done():
		}
	}()
	go func() {
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "stop" {
				guard.stopped.Store(true) // the judgement's memory is not the bound's
			}
			if a := srv.Command(sc.Text()); a != "" {
				fmt.Fprintln(stdout, a)
			}
		}
	}()
	res, err := srv.Wait()
	if err != nil {
		return err
	}
	res.Strict = *strict
	if why := guard.reason(); why != "" && res.Failed == "" {
		// NB: after the judgement, which it does not change: the run was
		// cut short by this process's bound, not by the cluster.
		res.Failed = why
	}
	if line := srv.FaultSummary(); line != "" {
		fmt.Fprintln(stdout, line)
	}
	// NB: the verdicts first: a file that cannot be written takes nothing
	// from the run's judgement, and is reported after it.
	reports.WriteRunText(stdout, res)
	var failed []string
	if err := saveTape(tape, tapeName, srv.TapeErr()); err != nil {
		failed = append(failed, err.Error())
	} else {
		saved = true
		fmt.Fprintf(stderr, "saved the tape to %s (%s)\n", tapeName, cfg.Replay)
	}
	failed = append(failed, writeEachRunFile(res, *report, *history, stderr)...)
	return filesExit(failed, res.Exit())
}

// openTape opens the file the tape is written to: a temporary file beside
// path, renamed to it at the end, or, without -tape, a temporary file of
// its own (os.CreateTemp), which it names on stderr. It returns the file
// and the name the tape ends up under.
func openTape(path string, stderr io.Writer) (*os.File, string, error) {
	if path != "" {
		f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
		if err != nil {
			return nil, "", usagef("-tape %s: %v", path, err)
		}
		return f, path, nil
	}
	f, err := os.CreateTemp("", "kafkasim-serve-*.tape")
	if err != nil {
		return nil, "", usagef("no temporary file for the tape (%v): name one with -tape FILE", err)
	}
	fmt.Fprintf(stderr, "recording the tape to %s (-tape FILE names another)\n", f.Name())
	return f, f.Name(), nil
}

// saveTape completes the tape: it syncs and closes f and gives it its
// name. writeErr is the error that stopped the tape's writing during the
// run; with one, the incomplete file is removed.
func saveTape(f *os.File, name string, writeErr error) error {
	err := writeErr
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && f.Name() != name {
		err = os.Rename(f.Name(), name)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing the tape to %s: %v (the run cannot be replayed from it)", name, err)
	}
	return nil
}

// writeEachRunFile writes the HTML report and the history asked for, each
// whatever became of the other, and returns what failed.
func writeEachRunFile(res *harness.Result, report, history string, stderr io.Writer) []string {
	var failed []string
	if report != "" {
		if err := writeRunReport(report, res, stderr, false); err != nil {
			failed = append(failed, fmt.Sprintf("writing the report into %s: %v", report, err))
		}
	}
	if history != "" {
		if err := saveHistory(history, res); err != nil {
			failed = append(failed, fmt.Sprintf("writing the history to %s: %v", history, err))
		} else {
			fmt.Fprintf(stderr, "saved the history to %s\n", history)
		}
	}
	return failed
}

// filesExit is a served or replayed run's exit, once its verdicts are
// printed: exit 2 naming every file that could not be written, else the
// verdicts' exit code.
func filesExit(failed []string, code int) error {
	if len(failed) > 0 {
		return exitError{exitBadInput, strings.Join(failed, "; ") + " (the verdicts above stand)"}
	}
	return runExit(code)
}

// replayTape is replay -tape: the served run's world again, from its tape.
func replayTape(path string, stdout, stderr io.Writer, all bool, report, history string, strict bool) error {
	f, err := os.Open(path)
	if err != nil {
		return usagef("-tape: %v", err)
	}
	defer f.Close()
	h, entries, err := serve.ReadTape(f)
	if err != nil {
		return usagef("-tape %s: %v", path, err)
	}
	res, err := serve.Replay(h, entries, serve.ReplayOptions{Timeline: true, Command: serve.ReplayCommand(path),
		Print: func(line string) { fmt.Fprintln(stdout, line) }})
	if err != nil {
		return usagef("-tape %s: %v", path, err)
	}
	res.Strict = strict
	writeTimeline(stdout, res, all)
	reports.WriteRunText(stdout, res)
	return filesExit(writeEachRunFile(res, report, history, stderr), res.Exit())
}
