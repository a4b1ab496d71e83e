package clienttests

import (
	"bufio"
	"encoding/json"
	"io"
	"regexp"
	"sort"
	"strings"
)

// Outcome is a test's result as go test reports it.
type Outcome string

const (
	Pass Outcome = "pass"
	Fail Outcome = "fail"
	Skip Outcome = "skip"
	// NoResult is a test that started but reported nothing: the test
	// binary ended first (its -timeout, a panic, or a kill).
	NoResult Outcome = "no result"
	// NotRun is a test asked for that never started: the binary ended
	// before it, or the test was filtered out.
	NotRun Outcome = "not run"
)

// TestResult is one top-level test of a client suite against one cluster.
type TestResult struct {
	Package string
	Name    string
	Outcome Outcome
	Seconds float64
	// Reason is one line from the test's output saying why it failed or
	// skipped (empty for a pass).
	Reason string
}

// event is a line of go test -json (cmd/test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Output  string
	Elapsed float64
}

// testState gathers one top-level test's events.
type testState struct {
	res     TestResult
	started bool
	done    bool
	lines   []line   // its own and its subtests' output, in order
	failed  []string // the subtests that failed
}

// line is an output line of a top-level test or of one of its subtests
// (sub is the subtest's name below the top-level one, "" for its own).
type line struct{ sub, text string }

// ParseGoTestJSON reads go test -json output and returns the outcome of
// each top-level test it ran, and of each test in want that it did not
// (NotRun), sorted by package and name. Output lines that are not JSON (a
// build failure printed by go test itself) are skipped.
func ParseGoTestJSON(r io.Reader, pkg string, want []string) ([]TestResult, error) {
	states := map[string]*testState{}
	get := func(name string) *testState {
		s := states[name]
		if s == nil {
			s = &testState{res: TestResult{Package: pkg, Name: name}}
			states[name] = s
		}
		return s
	}
	var pkgOutput []string
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Action == "" {
			continue
		}
		if e.Test == "" {
			if e.Action == "output" {
				pkgOutput = append(pkgOutput, strings.TrimRight(e.Output, "\n"))
			}
			continue
		}
		if e.Action == "output" && binaryEnd([]string{e.Output}) != "" {
			pkgOutput = append(pkgOutput, strings.TrimRight(e.Output, "\n"))
		}
		top, sub, _ := strings.Cut(e.Test, "/")
		s := get(top)
		switch e.Action {
		case "run":
			s.started = true
		case "output":
			s.lines = append(s.lines, line{sub, strings.TrimRight(e.Output, "\n")})
		case "pass", "fail", "skip":
			if sub != "" {
				if e.Action == "fail" {
					s.failed = append(s.failed, sub)
				}
				continue
			}
			s.done = true
			s.res.Outcome = Outcome(e.Action)
			s.res.Seconds = e.Elapsed
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	for _, name := range want {
		get(name)
	}
	var out []TestResult
	for _, s := range states {
		switch {
		case s.done:
		case s.started:
			s.res.Outcome = NoResult
			s.res.Reason = binaryEnd(pkgOutput)
			if len(s.failed) > 0 {
				s.res.Reason = strings.TrimSuffix(reason(s)+"; "+s.res.Reason, "; ")
			}
		default:
			s.res.Outcome = NotRun
			s.res.Reason = binaryEnd(pkgOutput)
		}
		if s.res.Reason == "" && (s.res.Outcome == Fail || s.res.Outcome == Skip) {
			s.res.Reason = reason(s)
		}
		out = append(out, s.res)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// logLine is a t.Log/t.Error line as go test prints it: "    file_test.go:12: text".
var logLine = regexp.MustCompile(`^\s*(\S+\.go:\d+): (.*)$`)

// failWords mark the log lines of a failing test that say what went wrong
// rather than what it was doing.
var failWords = regexp.MustCompile(`[A-Z]+_[A-Z_]+|(?i:error|unable|fail|expect|unexpected|mismatch|timed? ?out|panic|invalid|not |no |wrong|too |got |want|missing|should|must|refused|closed|EOF|deadline|context|Skip|skipping|requires|supported)`)

// reason picks the line that best says why s failed or skipped: the first
// log line with a failure word, else its first log line, else its first
// output line; of its first failed subtest, if one failed, prefixed with
// that subtest's name.
func reason(s *testState) string {
	var first, firstWord string
	for _, ln := range s.lines {
		if len(s.failed) > 0 && ln.sub != s.failed[0] && !strings.HasPrefix(ln.sub, s.failed[0]+"/") {
			continue
		}
		l := ln.text
		if strings.HasPrefix(strings.TrimSpace(l), "=== ") || strings.HasPrefix(strings.TrimSpace(l), "--- ") {
			continue
		}
		m := logLine.FindStringSubmatch(l)
		if m == nil {
			if first == "" && strings.TrimSpace(l) != "" && !strings.HasPrefix(strings.TrimSpace(l), "[") {
				first = strings.TrimSpace(l)
			}
			continue
		}
		text := m[1] + ": " + m[2]
		if firstWord == "" && failWords.MatchString(m[2]) && !benign(m[2]) {
			firstWord = text
		}
		if first == "" {
			first = text
		}
	}
	r := firstWord
	if r == "" {
		r = first
	}
	if len(s.failed) > 0 {
		r = s.failed[0] + ": " + r
	}
	for _, ln := range s.lines {
		if p := strings.TrimSpace(ln.text); strings.HasPrefix(p, "panic: ") {
			r = clip(r, 120) + "; then " + p
			break
		}
	}
	return clip(r, 200)
}

// benign are kgo's cleanup lines that mention an error without being the
// test's failure: the topic deletion serve does not serve.
func benign(text string) bool {
	return strings.HasPrefix(text, "unable to delete topic") || strings.HasPrefix(text, "deleting topic") ||
		strings.HasPrefix(text, "FAILED TESTING -- NOT DELETING TOPIC")
}

// binaryEnd finds why a test binary ended early in its package output:
// the timeout panic or another panic.
func binaryEnd(pkgOutput []string) string {
	for _, l := range pkgOutput {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "panic: ") || strings.HasPrefix(t, "SIGQUIT") || strings.Contains(t, "build failed") || strings.HasPrefix(t, "FAIL") && strings.Contains(t, "[setup failed]") {
			return clip(t, 200)
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n-3] + "..."
}
