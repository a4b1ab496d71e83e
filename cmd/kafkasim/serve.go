package main

// kafkasim serve: a simulated cluster on real sockets (package serve).
// This file parses the flags, prints the listeners, relays the live
// commands from standard input and the signals, and prints the verdicts.

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
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
	tapePath := fs.String("tape", "", "record the arrival order of every input to FILE, for kafkasim replay -tape")
	strict := fs.Bool("strict", false, "exit 1 on a violation Kafka's contract permits, too")
	set := setFlags{}
	fs.Var(set, "set", "override a configuration property, key=value (repeatable)")
	cf := addConfigFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
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
		Speed: *speed, Log: stderr, Timeline: *report != ""}
	var tape *os.File
	if *tapePath != "" {
		if tape, err = os.CreateTemp(filepath.Dir(*tapePath), "."+filepath.Base(*tapePath)+".tmp*"); err != nil {
			return err
		}
		defer os.Remove(tape.Name()) // after the rename, a no-op
		cfg.Tape = tape
	}
	srv, err := serve.Start(cfg)
	if err != nil {
		return lc.blame(err)
	}
	for i, a := range srv.Addrs() {
		fmt.Fprintf(stdout, "b%d listening on %s\n", i, a)
	}
	go func() {
		select {
		case <-srv.Ready():
			fmt.Fprintln(stdout, "ready")
		case <-srv.Done():
		}
	}()
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(signals)
	go func() {
		select {
		case <-signals:
			fmt.Fprintln(stdout, srv.Command("stop"))
		case <-srv.Done():
		}
	}()
	go func() {
		sc := bufio.NewScanner(stdin)
		for sc.Scan() {
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
	if tape != nil {
		if err := tape.Sync(); err != nil {
			return err
		}
		if err := tape.Close(); err != nil {
			return err
		}
		if err := os.Rename(tape.Name(), *tapePath); err != nil {
			return err
		}
		fmt.Fprintf(stderr, "saved the tape to %s (kafkasim replay -tape %s)\n", *tapePath, *tapePath)
	}
	reports.WriteRunText(stdout, res)
	if err := writeRunFiles(res, *report, *history, stderr); err != nil {
		return err
	}
	return runExit(res.Exit())
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
	res, err := serve.Replay(h, entries, 0, true)
	if err != nil {
		return usagef("-tape %s: %v", path, err)
	}
	res.Strict = strict
	writeTimeline(stdout, res, all)
	reports.WriteRunText(stdout, res)
	if err := writeRunFiles(res, report, history, stderr); err != nil {
		return err
	}
	return runExit(res.Exit())
}
