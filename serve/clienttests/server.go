package clienttests

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Target is a cluster a client suite runs against: kafkasim serve in one
// mode, or franz-go's kfake advertising one release.
type Target struct {
	// Name is the table's column: "serve zk", "serve kraft", "kfake 3.9".
	Name string
	// Kfake is true for kfake, false for kafkasim serve.
	Kfake bool
	// Release is the Kafka release the cluster advertises: serve's
	// inter.broker.protocol.version (4.x is KRaft), kfake's -as-version.
	Release string
	// Faults is serve's -faults profile ("" for none): the client's
	// suite under faults kfake cannot inject, judged by serve's checkers.
	Faults string
}

// Targets are the four clusters of a full run: serve in ZooKeeper mode
// (its default release, 3.9) and in KRaft mode (4.1), and kfake as 3.9
// and 4.1 for comparison.
var Targets = []Target{
	{Name: "serve zk", Release: "3.9"},
	{Name: "serve kraft", Release: "4.1"},
	{Name: "kfake 3.9", Kfake: true, Release: "3.9"},
	{Name: "kfake 4.1", Kfake: true, Release: "4.1"},
}

// FaultTargets are serve under -faults, run when -targets names them: a
// client's tests are not written for a cluster that fails under them (a
// test that waits 10 s for a record may fail), so their column says what
// survives, and serve's verdicts say whether anything the clients were
// told was written broke Kafka's contract.
var FaultTargets = []Target{
	{Name: "serve zk faults", Release: "3.9", Faults: "failover fault-every=5s"},
	{Name: "serve kraft faults", Release: "4.1", Faults: "failover fault-every=5s"},
}

// ReleaseTargets are serve at the KRaft releases past the full run's
// 4.1, run when -targets names them: 4.2 and 4.3 serve share groups
// (KIP-932), whose tests kgo skips against 4.1.
var ReleaseTargets = []Target{
	{Name: "serve 4.2", Release: "4.2"},
	{Name: "serve 4.3", Release: "4.3"},
}

// args are the command line of t's server for client c: its base port,
// its release and c's settings.
func (t Target) args(c Client, speed float64) []string {
	port := strconv.Itoa(c.Port)
	if t.Kfake {
		args := []string{"-port", port, "-as-version", t.Release}
		return append(args, c.KfakeArgs...)
	}
	args := []string{"serve", "-listen", "127.0.0.1:" + port, "-speed", strconv.FormatFloat(speed, 'g', -1, 64)}
	if t.Release != "" && t.Release != "3.9" {
		args = append(args, "-set", "inter.broker.protocol.version="+t.Release)
	}
	if t.Faults != "" {
		args = append(args, "-faults", t.Faults)
	}
	for _, s := range c.ServeSet {
		args = append(args, "-set", s)
	}
	return args
}

// server is a running serve or kfake process.
type server struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	ready chan struct{}
	// mu guards lines, stopping and overRSS.
	mu       sync.Mutex
	lines    []string // standard output after "stopping": the verdicts
	stopping bool
	overRSS  int64         // the resident set it was killed at, 0 if not
	done     chan struct{} // closed when standard output is read to EOF
}

// startServer starts bin with args, logging its standard error to logPath,
// and waits for its "ready" line. A server whose resident set passes
// maxRSS bytes (0: no limit) is killed, so that a leak cannot take the
// machine's memory from everything else on it.
func startServer(ctx context.Context, bin string, args []string, logPath string, wait time.Duration, maxRSS int64) (*server, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, args...)
	cmd.Stderr = logf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		logf.Close()
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return nil, err
	}
	logf.Close() // the child holds its own descriptor
	s := &server{cmd: cmd, stdin: stdin, ready: make(chan struct{}), done: make(chan struct{})}
	go s.read(stdout)
	if maxRSS > 0 {
		go s.guard(maxRSS)
	}
	select {
	case <-s.ready:
		return s, nil
	case <-s.done:
		s.cmd.Wait()
		return nil, fmt.Errorf("%s %s exited before ready (%v); its log: %s", bin, strings.Join(args, " "), s.cmd.ProcessState, logPath)
	case <-time.After(wait):
	case <-ctx.Done():
	}
	s.cmd.Process.Kill()
	s.cmd.Wait()
	return nil, fmt.Errorf("%s %s: no ready line within %v; its log: %s", bin, strings.Join(args, " "), wait, logPath)
}

func (s *server) read(stdout io.Reader) {
	defer close(s.done)
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		l := sc.Text()
		s.mu.Lock()
		switch {
		case l == "ready":
			close(s.ready)
		case l == "stopping":
			s.stopping = true
		case s.stopping:
			s.lines = append(s.lines, l)
		}
		s.mu.Unlock()
	}
}

// guard polls the server's resident set (VmRSS of /proc/PID/status) and
// kills it above max.
func (s *server) guard(max int64) {
	path := "/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/status"
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-tick.C:
		}
		rss, err := vmRSS(path)
		if err != nil || rss <= max {
			continue
		}
		s.mu.Lock()
		s.overRSS = rss
		s.mu.Unlock()
		s.cmd.Process.Kill()
		return
	}
}

// vmRSS reads the VmRSS line of a /proc/PID/status file, in bytes.
func vmRSS(path string) (int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(l, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, fmt.Errorf("%s: no VmRSS line", path)
}

// stopped is what a server left when it stopped.
type stopped struct {
	Verdicts []string // its standard output after "stopping"
	Exit     int      // its exit code; -1 when killed
	PeakRSS  int64    // its peak resident set, in bytes (getrusage's ru_maxrss)
	// OverRSS is the resident set the guard killed it at (0: it was not).
	OverRSS int64
}

// exited reports whether the server's standard output has ended: it
// exited (or was killed) on its own, before stop.
func (s *server) exited() <-chan struct{} { return s.done }

// stop sends "stop" on the server's standard input and waits for it to
// print its verdicts and exit, killing it after wait.
func (s *server) stop(wait time.Duration) stopped {
	fmt.Fprintln(s.stdin, "stop")
	s.stdin.Close()
	select {
	case <-s.done:
	case <-time.After(wait):
		s.cmd.Process.Kill()
	}
	s.cmd.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	st := stopped{Verdicts: s.lines, Exit: s.cmd.ProcessState.ExitCode(), OverRSS: s.overRSS}
	if ru, ok := s.cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		st.PeakRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	return st
}

// portsFree reports an error naming the first of n ports from base on
// 127.0.0.1 that something already listens on.
func portsFree(base, n int) error {
	for p := base; p < base+n; p++ {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			return fmt.Errorf("port %d is in use (%v): another serve or Kafka runs here; stop it or wait", p, err)
		}
		l.Close()
	}
	return nil
}
