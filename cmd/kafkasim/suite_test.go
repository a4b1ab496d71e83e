package main

import (
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The suite over paths (issue 31): kafkasim suite [PATH...].

// scriptFiles writes files (path relative to dir -> text) under dir.
func scriptFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// builtinText is a built-in script's text: a fast, known scenario to
// copy (acks1-leader-crash runs in milliseconds).
func builtinText(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "scenarios", "scripts", name+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// passing and failing are two user scripts: the first as the built-in
// acks1-leader-crash, the second claiming that acks=1 loses nothing,
// which its runs refute (acked-loss: expected ok, got permitted).
func passingAndFailing(t *testing.T) (string, string) {
	pass := builtinText(t, "acks1-leader-crash")
	fail := strings.Replace(pass, "expect acks1 acked-loss=permitted", "expect acks1 acked-loss=ok", 1)
	if fail == pass {
		t.Fatal("acks1-leader-crash has no 'expect acks1 acked-loss=permitted' line any more: the failing script would pass")
	}
	return pass, fail
}

type junitFile struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Cases    []struct {
		Name    string `xml:"name,attr"`
		Failure *struct {
			Message string `xml:"message,attr"`
			Text    string `xml:",chardata"`
		} `xml:"failure"`
	} `xml:"testcase"`
}

func readJUnit(t *testing.T, path string) junitFile {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no JUnit file: %v", err)
	}
	var j junitFile
	if err := xml.Unmarshal(b, &j); err != nil {
		t.Fatalf("JUnit %s: %v\n%s", path, err, b)
	}
	return j
}

// TestSuiteOverADirectory: a passing and a failing script in a directory:
// exit 1, one JUnit case per script × variant, the failing one naming each
// failing seed's replay command and the evidence; the replay command, run
// as printed, replays that run (the same anomaly, exit 1); -report writes
// the failing runs' reports.
func TestSuiteOverADirectory(t *testing.T) {
	dir := t.TempDir()
	pass, fail := passingAndFailing(t)
	scriptFiles(t, dir, map[string]string{"scenarios/orders.txt": pass, "scenarios/payments.txt": fail})
	junit, report := filepath.Join(dir, "junit.xml"), filepath.Join(dir, "reports")
	code, out, errs := runCmd("suite", "-seeds", "2", "-progress", "none", "-junit", junit, "-report", report, filepath.Join(dir, "scenarios"))
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out, errs)
	}
	j := readJUnit(t, junit)
	if j.Tests != 4 || j.Failures != 1 {
		t.Fatalf("JUnit: %d tests, %d failures; want 4 and 1: %+v", j.Tests, j.Failures, j)
	}
	var failure string
	for _, c := range j.Cases {
		switch {
		case c.Name == "payments/acks1" && c.Failure != nil:
			failure = c.Failure.Text
			if !strings.Contains(c.Failure.Message, "2 of 2 runs") || !strings.Contains(c.Failure.Message, "replay: kafkasim replay") {
				t.Errorf("failure message %q: want the count and the first replay command", c.Failure.Message)
			}
		case c.Failure != nil:
			t.Errorf("%s failed: %s", c.Name, c.Failure.Text)
		case !slices.Contains([]string{"orders/acks1", "orders/acksall", "payments/acksall"}, c.Name):
			t.Errorf("unexpected case %q", c.Name)
		}
	}
	script := filepath.Join(dir, "scenarios", "payments.txt")
	replay := "kafkasim replay -scenario " + script + " -variant acks1 -seed 1"
	for _, want := range []string{"seed 1: acked-loss: expected ok, got permitted", "replay: " + replay, "acked-loss: permitted: lost t-0 m1", "seed 2:"} {
		if !strings.Contains(failure, want) {
			t.Errorf("JUnit failure text lacks %q:\n%s", want, failure)
		}
	}
	if !strings.Contains(errs, "payments/acks1 seed 1: acked-loss: expected ok, got permitted\n  replay: "+replay) {
		t.Errorf("stderr does not name the failing seed and its replay:\n%s", errs)
	}
	// The replay command, from another directory, as printed.
	wd, _ := os.Getwd()
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	code, out, errs = runCmd(strings.Fields(strings.TrimPrefix(replay, "kafkasim "))...)
	os.Chdir(wd)
	if code != 1 || !strings.Contains(out, "1 record lost (m1), offset 1 of t-0") || !strings.Contains(out, "acked-loss: expected ok, got permitted") {
		t.Errorf("the replay command: exit %d\n%s%s", code, out, errs)
	}
	for _, seed := range []string{"1", "2"} {
		if _, err := os.Stat(filepath.Join(report, "payments-acks1-seed"+seed+".html")); err != nil {
			t.Errorf("no report of the failing seed %s: %v", seed, err)
		}
	}
	if entries, _ := os.ReadDir(report); len(entries) != 2 {
		t.Errorf("reports: %d files, want the 2 failing runs'", len(entries))
	}
}

// TestSuiteReportsEveryProblemFirst: parse errors in two files, a variant
// whose configuration is refused, a missing path and a directory without
// scripts are all reported, each at its place, with exit 2, before
// anything runs (no table, no JUnit file).
func TestSuiteReportsEveryProblemFirst(t *testing.T) {
	dir := t.TempDir()
	pass, _ := passingAndFailing(t)
	scriptFiles(t, dir, map[string]string{
		"s/good.txt":     pass,
		"s/typo.txt":     "brokers 2\ntopic t\nrun 1s\nexplode b1\n",
		"s/sub/head.txt": "describe x\nbrokrs 3\n",
		"s/isr.txt":      "brokers 3\ntopic t partitions=1 rf=3\nvariant strict min.insync.replicas=4\nrun 1s\n",
		"empty/notes.md": "not a script\n",
	})
	junit := filepath.Join(dir, "junit.xml")
	s := filepath.Join(dir, "s")
	code, out, errs := runCmd("suite", "-progress", "none", "-junit", junit, s, filepath.Join(dir, "empty"), filepath.Join(dir, "nope"))
	if code != 2 {
		t.Fatalf("exit %d, want 2\n%s%s", code, out, errs)
	}
	for _, want := range []string{
		"5 problems in the scripts, nothing ran",
		filepath.Join(s, "typo.txt") + ":4: unknown step \"explode\"",
		filepath.Join(s, "sub", "head.txt") + ":2: unknown keyword \"brokrs\"; did you mean \"brokers\"?",
		filepath.Join(s, "isr.txt") + ":3: variant strict: ",
		"min.insync.replicas in [1, 3]",
		filepath.Join(dir, "empty") + ": no *.txt scripts in this directory or below it",
		filepath.Join(dir, "nope") + ": no such file or directory",
	} {
		if !strings.Contains(errs, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errs)
		}
	}
	lines := 0
	for _, l := range strings.Split(errs, "\n") {
		if strings.HasPrefix(l, dir) {
			lines++
		}
	}
	if lines != 5 {
		t.Errorf("%d problem lines, want 5 (two parse errors, a variant, an empty directory, a missing path):\n%s", lines, errs)
	}
	if out != "" {
		t.Errorf("printed %q though nothing may run", out)
	}
	if _, err := os.Stat(junit); err == nil {
		t.Error("a JUnit file was written though nothing ran")
	}
}

// TestSuiteBadPaths: an empty directory, a path that cannot be read and
// a built-in scenario's name given as a path each exit 2 naming the path.
func TestSuiteBadPaths(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	loop := filepath.Join(dir, "loop.txt")
	os.Symlink(loop, loop) // a link to itself: os.Stat fails
	for _, c := range []struct {
		path, want string
	}{
		{empty, empty + ": no *.txt scripts in this directory or below it (-ext chooses another extension)"},
		{loop, loop + ": too many levels of symbolic links"},
		{"acks1-leader-crash", "acks1-leader-crash: no such file or directory (the built-in scenario acks1-leader-crash runs with no path"},
	} {
		code, out, errs := runCmd("suite", "-progress", "none", c.path)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("suite %s: exit %d, want 2 and %q\n%s%s", c.path, code, c.want, out, errs)
		}
	}
	if os.Geteuid() != 0 { // root reads a file whatever its mode
		f := filepath.Join(dir, "secret.txt")
		os.WriteFile(f, []byte("brokers 1\n"), 0o000)
		if code, _, errs := runCmd("suite", f); code != 2 || !strings.Contains(errs, f+": cannot read it") {
			t.Errorf("unreadable file: exit %d\n%s", code, errs)
		}
	}
}

// suiteCases runs the suite with -json and returns its "case/variant"s.
func suiteCases(t *testing.T, args ...string) []string {
	t.Helper()
	code, out, errs := runCmd(append([]string{"suite", "-seeds", "1", "-progress", "none", "-json"}, args...)...)
	if code != 0 {
		t.Fatalf("suite %v: exit %d\n%s%s", args, code, out, errs)
	}
	var res struct {
		Cases []struct{ Scenario, Variant string }
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("suite %v -json: %v\n%s", args, err, out)
	}
	var names []string
	for _, c := range res.Cases {
		names = append(names, c.Scenario+"/"+c.Variant)
	}
	return names
}

// TestSuiteExt: a directory's scripts are its *.txt files, or those of
// -ext; a file named as a PATH is read whatever its extension; names
// starting with '.' are skipped.
func TestSuiteExt(t *testing.T) {
	dir := t.TempDir()
	pass, _ := passingAndFailing(t)
	scriptFiles(t, dir, map[string]string{"a.txt": pass, "b.scn": pass, ".hidden/c.txt": pass, "notes.md": "# notes\n"})
	if got, want := suiteCases(t, dir), []string{"a/acks1", "a/acksall"}; !slices.Equal(got, want) {
		t.Errorf("default: %v, want %v", got, want)
	}
	for _, ext := range []string{"scn", ".scn"} {
		if got, want := suiteCases(t, "-ext", ext, dir), []string{"b/acks1", "b/acksall"}; !slices.Equal(got, want) {
			t.Errorf("-ext %s: %v, want %v", ext, got, want)
		}
	}
	if got, want := suiteCases(t, filepath.Join(dir, "b.scn")), []string{"b/acks1", "b/acksall"}; !slices.Equal(got, want) {
		t.Errorf("a file PATH: %v, want %v", got, want)
	}
	// A flag after the PATH still counts.
	if got := suiteCases(t, dir, "-run", "acksall"); !slices.Equal(got, []string{"a/acksall"}) {
		t.Errorf("-run after the PATH: %v", got)
	}
	for _, bad := range []string{"", ".", "*.txt", "a/b"} {
		if code, _, errs := runCmd("suite", "-ext", bad, dir); code != 2 || !strings.Contains(errs, "-ext") {
			t.Errorf("-ext %q: exit %d, want 2\n%s", bad, code, errs)
		}
	}
}

// TestSuiteDuplicateNames: scripts of one base name in different
// directories stay apart: by their path below the PATH argument, and, for
// the same relative path under two arguments, by as many directories as
// tell them apart; the report of each goes to its own file.
func TestSuiteDuplicateNames(t *testing.T) {
	dir := t.TempDir()
	pass, fail := passingAndFailing(t)
	scriptFiles(t, dir, map[string]string{"team-a/orders/x.txt": pass, "team-a/payments/x.txt": pass, "team-b/orders/x.txt": fail})
	got := suiteCases(t, "-run", "acksall", filepath.Join(dir, "team-a"))
	if want := []string{"orders/x/acksall", "payments/x/acksall"}; !slices.Equal(got, want) {
		t.Errorf("one PATH: %v, want %v", got, want)
	}
	got = suiteCases(t, "-run", "acksall", filepath.Join(dir, "team-a"), filepath.Join(dir, "team-b"))
	if want := []string{"payments/x/acksall", "team-a/orders/x/acksall", "team-b/orders/x/acksall"}; !slices.Equal(got, want) {
		t.Errorf("two PATHs: %v, want %v", got, want)
	}
	// Two rounds: x, then team/x, are shared; p/team/x and q/team/x are not.
	scriptFiles(t, dir, map[string]string{"p/team/x.txt": pass, "q/team/x.txt": pass})
	got = suiteCases(t, "-run", "acksall", filepath.Join(dir, "p", "team"), filepath.Join(dir, "q", "team"))
	if want := []string{"p/team/x/acksall", "q/team/x/acksall"}; !slices.Equal(got, want) {
		t.Errorf("two PATHs of one base name: %v, want %v", got, want)
	}
	// The same file named twice runs once.
	if got := suiteCases(t, "-run", "acksall", filepath.Join(dir, "team-a"), filepath.Join(dir, "team-a", "orders", "x.txt")); len(got) != 2 {
		t.Errorf("a file named twice: %v, want it once", got)
	}
	report := filepath.Join(dir, "reports")
	code, out, errs := runCmd("suite", "-seeds", "1", "-progress", "none", "-report", report, filepath.Join(dir, "team-a"), filepath.Join(dir, "team-b"))
	if code != 1 || !strings.Contains(errs, "team-b/orders/x/acks1 seed 1:") {
		t.Fatalf("exit %d, want 1 naming team-b/orders/x/acks1\n%s%s", code, out, errs)
	}
	if _, err := os.Stat(filepath.Join(report, "team-b", "orders", "x-acks1-seed1.html")); err != nil {
		t.Errorf("the failing run's report: %v", err)
	}
}

// TestSuiteShard: the shards of a suite split its cases (script ×
// variant) without overlap or gap, each writing its own JUnit file; a
// malformed -shard, one outside 0 <= i < n, or one with nothing to run
// exits 2.
func TestSuiteShard(t *testing.T) {
	dir := t.TempDir()
	pass, _ := passingAndFailing(t)
	scriptFiles(t, dir, map[string]string{"a.txt": pass, "b.txt": pass, "c/d.txt": pass}) // 6 cases
	all := suiteCases(t, dir)
	if len(all) != 6 {
		t.Fatalf("cases %v, want 6", all)
	}
	var union []string
	for i, want := range [][]string{{"a/acks1", "b/acksall"}, {"a/acksall", "c/d/acks1"}, {"b/acks1", "c/d/acksall"}} {
		shard := []string{"0/3", "1/3", "2/3"}[i]
		got := suiteCases(t, "-shard", shard, dir)
		if !slices.Equal(got, want) {
			t.Errorf("-shard %s: %v, want %v", shard, got, want)
		}
		junit := filepath.Join(dir, "junit-"+strings.ReplaceAll(shard, "/", "-")+".xml")
		if code, out, errs := runCmd("suite", "-seeds", "1", "-progress", "none", "-shard", shard, "-junit", junit, dir); code != 0 || !strings.Contains(out, "(shard "+shard+" of 6 cases)") {
			t.Errorf("-shard %s: exit %d\n%s%s", shard, code, out, errs)
		}
		j := readJUnit(t, junit)
		for _, c := range j.Cases {
			union = append(union, c.Name)
		}
	}
	slices.Sort(union)
	if !slices.Equal(union, all) {
		t.Errorf("the shards' JUnit cases %v, want every case once: %v", union, all)
	}
	for _, c := range []struct{ shard, want string }{
		{"3/3", "0 <= i < n"},
		{"-1/3", "0 <= i < n"},
		{"1/0", "n >= 1"},
		{"x", "want i/n"},
		{"1", "want i/n"},
		{"6/7", "-shard 6/7: nothing to run: the suite has 6 cases (script × variant), fewer than 7 shards"},
	} {
		code, out, errs := runCmd("suite", "-seeds", "1", "-progress", "none", "-shard", c.shard, dir)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("-shard %s: exit %d, want 2 and %q\n%s%s", c.shard, code, c.want, out, errs)
		}
	}
}
