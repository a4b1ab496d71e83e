package clienttests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options configure a Run.
type Options struct {
	// Repo is kafkasim's repository root: Run builds its cmd/kafkasim and
	// serve/clienttests/kfake.
	Repo string
	// Work is the scratch directory: the module cache the clients are
	// fetched into (GOMODCACHE), their writable copies, the binaries, the
	// logs and each suite's go test -json output.
	Work    string
	Clients []Client
	Targets []Target
	// Speed is serve's -speed (1 = real time).
	Speed float64
	// Short runs each client's Subset instead of all its integration tests.
	Short bool
	// Run, if set, keeps only the integration tests it matches.
	Run string
	// Records is kgo's KGO_TEST_RECORDS (0: its default, 500,000).
	Records int
	// Timeout is go test's -timeout for each package (0: 15 minutes).
	Timeout time.Duration
	// MaxRSS kills a server whose resident set passes it, in bytes (0:
	// no limit); its suite's remaining tests then fail.
	MaxRSS int64
	// Log receives progress lines.
	Log io.Writer
}

// Result is one client suite against one target.
type Result struct {
	Client, Version string
	Target          string
	Tests           []TestResult
	// Verdicts are the server's lines after "stopping" (serve's checkers).
	Verdicts []string
	// ServerExit is the server's exit code (serve: 0 ok, 1 violation,
	// 3 unknown, as kafkasim run).
	ServerExit int
	PeakRSS    int64 // the server's peak resident set, bytes
	Wall       time.Duration
	// Err is why the suite could not run at all (empty when it ran).
	Err string
}

// Counts returns how many of r's tests passed, failed (fail, no result,
// not run) and skipped.
func (r Result) Counts() (pass, fail, skip int) {
	for _, t := range r.Tests {
		switch t.Outcome {
		case Pass:
			pass++
		case Skip:
			skip++
		default:
			fail++
		}
	}
	return
}

// ErrModuleProxy wraps a failure to fetch a client module: the Go module
// proxy is unreachable or refuses it.
var ErrModuleProxy = errors.New("the Go module proxy did not serve the client module")

// Run fetches the clients, builds kafkasim and kfake, and runs each
// client's integration tests against each target, one at a time.
func Run(ctx context.Context, o Options) ([]Result, error) {
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Timeout == 0 {
		o.Timeout = 15 * time.Minute
	}
	if o.Speed == 0 {
		o.Speed = 1
	}
	var keep *regexp.Regexp
	if o.Run != "" {
		var err error
		if keep, err = regexp.Compile(o.Run); err != nil {
			return nil, fmt.Errorf("-run %q: %v", o.Run, err)
		}
	}
	for _, d := range []string{"gomod", "src", "bin", "out"} {
		if err := os.MkdirAll(filepath.Join(o.Work, d), 0o755); err != nil {
			return nil, err
		}
	}
	dirs := map[string]string{}
	for _, c := range o.Clients {
		start := time.Now()
		dir, err := o.fetch(ctx, c)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Log, "fetched %s@%s into %s (%.1fs)\n", c.Module, c.Version, dir, time.Since(start).Seconds())
		dirs[c.Name] = dir
	}
	bins := map[bool]string{}
	for _, t := range o.Targets {
		if _, ok := bins[t.Kfake]; ok {
			continue
		}
		start := time.Now()
		bin, err := o.build(ctx, t.Kfake)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(o.Log, "built %s (%.1fs)\n", bin, time.Since(start).Seconds())
		bins[t.Kfake] = bin
	}
	var results []Result
	for _, c := range o.Clients {
		tests := map[string][]string{}
		for _, p := range c.Packages {
			names, err := IntegrationTests(filepath.Join(dirs[c.Name], p), c.Markers)
			if err != nil {
				return nil, fmt.Errorf("%s %s: %v", c.Name, p, err)
			}
			tests[p] = filter(names, c, o.Short, keep)
		}
		if err := o.compile(ctx, c, dirs[c.Name], tests); err != nil {
			return nil, err
		}
		for _, t := range o.Targets {
			if err := ctx.Err(); err != nil {
				return results, err
			}
			r := o.suite(ctx, c, t, bins[t.Kfake], dirs[c.Name], tests)
			pass, fail, skip := r.Counts()
			fmt.Fprintf(o.Log, "%s against %s: %d passed, %d failed, %d skipped in %v, server peak RSS %d MiB %s\n",
				c.Name, t.Name, pass, fail, skip, r.Wall.Round(time.Second), r.PeakRSS>>20, r.Err)
			results = append(results, r)
		}
	}
	return results, nil
}

// filter keeps the tests of c that the run asks for.
func filter(names []string, c Client, short bool, keep *regexp.Regexp) []string {
	subset := regexp.MustCompile(c.Subset)
	var out []string
	for _, n := range names {
		if short && !subset.MatchString(n) || keep != nil && !keep.MatchString(n) {
			continue
		}
		out = append(out, n)
	}
	return out
}

// goEnv is the environment of the go commands run on a client module:
// the scratch module cache, go.sum updated as the module's own tests
// need, no workspace.
func (o Options) goEnv(extra ...string) []string {
	env := append(os.Environ(), "GOMODCACHE="+filepath.Join(o.Work, "gomod"), "GOFLAGS=-mod=mod", "GOWORK=off")
	return append(env, extra...)
}

// fetch downloads c through the module proxy and copies it into a
// writable directory, once.
func (o Options) fetch(ctx context.Context, c Client) (string, error) {
	dst := filepath.Join(o.Work, "src", filepath.Base(c.Module)+"@"+c.Version)
	if _, err := os.Stat(filepath.Join(dst, ".complete")); err == nil {
		return dst, nil
	}
	// A proxy that does not answer is as good as none: give up in time.
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", c.Module+"@"+c.Version)
	cmd.Env = o.goEnv()
	cmd.Dir = o.Work
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var info struct{ Dir, Error string }
	json.Unmarshal(stdout.Bytes(), &info)
	if err != nil || info.Dir == "" {
		return "", fmt.Errorf("%w: go mod download %s@%s: %v %s%s", ErrModuleProxy, c.Module, c.Version, err, info.Error, strings.TrimSpace(stderr.String()))
	}
	os.RemoveAll(dst)
	if err := os.CopyFS(dst, os.DirFS(info.Dir)); err != nil {
		return "", err
	}
	// The module cache's files are read-only; go test may update go.sum.
	filepath.WalkDir(dst, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			mode := os.FileMode(0o644)
			if d.IsDir() {
				mode = 0o755
			}
			os.Chmod(p, mode)
		}
		return nil
	})
	return dst, os.WriteFile(filepath.Join(dst, ".complete"), nil, 0o644)
}

// build builds kafkasim (kfake false) or the kfake server into Work/bin.
func (o Options) build(ctx context.Context, kfake bool) (string, error) {
	name, dir, env := "kafkasim", o.Repo, os.Environ()
	pkg := "./cmd/kafkasim"
	if kfake {
		name, dir, env, pkg = "kfake", filepath.Join(o.Repo, "serve", "clienttests", "kfake"), o.goEnv(), "."
	}
	bin := filepath.Join(o.Work, "bin", name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		if kfake && fetchFailed(out) {
			err = fmt.Errorf("%w: %v", ErrModuleProxy, err)
		}
		return "", fmt.Errorf("go build %s in %s: %w\n%s", pkg, dir, err, out)
	}
	return bin, nil
}

// fetchFailed reports whether a go command's output says it could not
// download a module: no network, no proxy, or GOPROXY=off.
func fetchFailed(out []byte) bool {
	for _, s := range []string{"dial tcp", "no such host", "i/o timeout", "GOPROXY", "proxy.golang.org", "module lookup disabled", "connection refused"} {
		if bytes.Contains(out, []byte(s)) {
			return true
		}
	}
	return false
}

// compile builds c's test binaries once, so that no suite's time or the
// server's idle wait includes the compiler (and a build failure says so
// before any server starts).
func (o Options) compile(ctx context.Context, c Client, dir string, tests map[string][]string) error {
	for _, p := range c.Packages {
		if len(tests[p]) == 0 {
			continue
		}
		start := time.Now()
		cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "^$", p)
		cmd.Dir, cmd.Env = dir, o.goEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			if fetchFailed(out) {
				err = fmt.Errorf("%w: %v", ErrModuleProxy, err)
			}
			return fmt.Errorf("building %s's tests %s: %w\n%s", c.Name, p, err, out)
		}
		fmt.Fprintf(o.Log, "built %s's tests %s (%.1fs)\n", c.Name, p, time.Since(start).Seconds())
	}
	return nil
}

// suite starts t's server for c, runs c's tests against it package by
// package, and stops it.
func (o Options) suite(ctx context.Context, c Client, t Target, bin, dir string, tests map[string][]string) Result {
	r := Result{Client: c.Name, Version: c.Version, Target: t.Name, ServerExit: -1}
	slug := strings.ReplaceAll(c.Name+"-"+t.Name, " ", "-")
	if err := portsFree(c.Port, 3); err != nil {
		r.Err = err.Error()
		return r
	}
	start := time.Now()
	srv, err := startServer(ctx, bin, t.args(c, o.Speed), filepath.Join(o.Work, "out", slug+".server.log"), time.Minute, o.MaxRSS)
	if err != nil {
		r.Err = err.Error()
		return r
	}
	// A server that dies mid-run ends the tests at once rather than at
	// their timeout: a client retries a dead cluster until then.
	testCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-srv.exited():
			cancel()
		case <-testCtx.Done():
		}
	}()
	env := c.Env(c, t.Release)
	if o.Records > 0 {
		env = append(env, "KGO_TEST_RECORDS="+strconv.Itoa(o.Records))
	}
	for _, p := range c.Packages {
		names := tests[p]
		if len(names) == 0 {
			continue
		}
		outPath := filepath.Join(o.Work, "out", slug+"."+strings.Trim(strings.ReplaceAll(p, "/", "_"), "._")+".json")
		if p == "." {
			outPath = filepath.Join(o.Work, "out", slug+".root.json")
		}
		res, err := o.goTest(testCtx, c, dir, p, names, env, outPath)
		if err != nil && r.Err == "" {
			r.Err = err.Error()
		}
		r.Tests = append(r.Tests, res...)
	}
	exitedEarly := false
	select {
	case <-srv.exited():
		exitedEarly = true
	default:
	}
	st := srv.stop(2 * time.Minute)
	r.Wall = time.Since(start)
	r.Verdicts, r.ServerExit, r.PeakRSS = st.Verdicts, st.Exit, st.PeakRSS
	switch {
	case st.OverRSS > 0:
		r.Err = fmt.Sprintf("the server was killed at %d MiB resident, above -max-rss %d MiB; the tests still running then fail", st.OverRSS>>20, o.MaxRSS>>20)
	case exitedEarly:
		r.Err = fmt.Sprintf("the server exited during the tests (exit %d; its log: %s)", st.Exit, filepath.Join(o.Work, "out", slug+".server.log"))
	}
	return r
}

// goTest runs go test -json on one package for the named tests, keeping
// its output in outPath, and parses it. When the test binary ends early
// (a test panics, or the package's -timeout ends a hung test), the tests
// it never started are run again in a binary of their own, as long as
// each round starts at least one of them: a client's crash costs only the
// tests it was running. A resumed round's output is outPath with ".2",
// ".3" before ".json".
func (o Options) goTest(ctx context.Context, c Client, dir, pkg string, names, env []string, outPath string) ([]TestResult, error) {
	done := map[string]TestResult{}
	todo := names
	for round := 1; len(todo) > 0 && ctx.Err() == nil; round++ {
		path := outPath
		if round > 1 {
			path = strings.TrimSuffix(outPath, ".json") + "." + strconv.Itoa(round) + ".json"
			fmt.Fprintf(o.Log, "%s: the test binary of %s ended early; running its %d tests not started again\n", c.Name, pkg, len(todo))
		}
		res, err := o.goTestOnce(ctx, c, dir, pkg, todo, env, path)
		if err != nil {
			return nil, err
		}
		var notRun []string
		for _, r := range res {
			if r.Outcome == NotRun {
				notRun = append(notRun, r.Name)
				if _, ok := done[r.Name]; ok {
					continue // keep the earlier round's word on it
				}
			}
			done[r.Name] = r
		}
		if len(notRun) == len(todo) {
			break // no progress: the binary cannot start them
		}
		todo = notRun
	}
	out := make([]TestResult, 0, len(done))
	for _, n := range names {
		if r, ok := done[n]; ok {
			out = append(out, r)
		}
	}
	for n, r := range done { // tests the binary ran that were not asked for
		if !slices.Contains(names, n) {
			out = append(out, r)
		}
	}
	return out, nil
}

// goTestOnce is one go test -json run of the named tests of pkg.
func (o Options) goTestOnce(ctx context.Context, c Client, dir, pkg string, names, env []string, outPath string) ([]TestResult, error) {
	out, err := os.Create(outPath)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	run := "^(" + strings.Join(names, "|") + ")$"
	args := []string{"test", "-json", "-count=1", "-p", "1", "-timeout", o.Timeout.String(), "-run", run}
	if c.Skip != "" {
		args = append(args, "-skip", c.Skip)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, pkg)...)
	cmd.Dir, cmd.Env = dir, o.goEnv(env...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.WaitDelay = time.Minute
	cmd.Run() // a failing test is a result, not an error
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return ParseGoTestJSON(out, strings.TrimPrefix(pkg, "./"), names)
}
