package cirecipes

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// root is the repository's top directory, from this package's.
const root = "../.."

// job is one CI job as this test runs it: its steps' shell commands, the
// environment CI gives them, and the files CI keeps afterwards.
type job struct {
	name  string
	env   map[string]string
	steps []string // each a shell script; a failing one ends the job
	// junit and keep are the globs CI reads as JUnit and uploads.
	junit, keep []string
}

// installRE is the pinned install a recipe must start with.
var installRE = regexp.MustCompile(`(?m)^go install github\.com/kafkasim/kafkasim/cmd/kafkasim@(\S+)$`)

// pinnedRE is a version that pins: a release tag or a commit hash.
var pinnedRE = regexp.MustCompile(`^(v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?|[0-9a-f]{12,40})$`)

// ghWorkflow is what this test reads of a GitHub Actions workflow.
type ghWorkflow struct {
	Env  map[string]string `yaml:"env"`
	Jobs map[string]struct {
		Env      map[string]string `yaml:"env"`
		Strategy struct {
			Matrix map[string][]any `yaml:"matrix"`
		} `yaml:"strategy"`
		Steps []struct {
			Name  string            `yaml:"name"`
			Uses  string            `yaml:"uses"`
			Run   string            `yaml:"run"`
			Shell string            `yaml:"shell"`
			If    string            `yaml:"if"`
			Env   map[string]string `yaml:"env"`
			With  map[string]any    `yaml:"with"`
		} `yaml:"steps"`
	} `yaml:"jobs"`
}

// ghExpr is a GitHub expression; only matrix and env values are expected
// in the recipe's commands.
var ghExpr = regexp.MustCompile(`\$\{\{\s*([^}]*?)\s*\}\}`)

// githubJobs reads the workflow's jobs, one per matrix combination.
func githubJobs(t *testing.T, path string) []job {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var w ghWorkflow
	if err := yaml.Unmarshal(b, &w); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []job
	for _, name := range sortedKeys(w.Jobs) {
		j := w.Jobs[name]
		for _, combo := range matrixCombos(t, j.Strategy.Matrix) {
			env := merge(w.Env, j.Env)
			expand := func(s string) string {
				return ghExpr.ReplaceAllStringFunc(s, func(e string) string {
					expr := ghExpr.FindStringSubmatch(e)[1]
					if k, ok := strings.CutPrefix(expr, "matrix."); ok {
						if v, ok := combo[k]; ok {
							return v
						}
					}
					if k, ok := strings.CutPrefix(expr, "env."); ok {
						if v, ok := env[k]; ok {
							return v
						}
					}
					t.Fatalf("%s: job %s: the expression %s is not one this test evaluates (matrix.KEY, env.KEY)", path, name, e)
					return ""
				})
			}
			jb := job{name: "github " + name + comboName(combo), env: env}
			for _, st := range j.Steps {
				switch {
				case st.Run != "":
					if st.Shell != "" && st.Shell != "bash" {
						t.Fatalf("%s: job %s: shell %q: this test runs bash, GitHub's default on Linux", path, name, st.Shell)
					}
					for k, v := range st.Env {
						jb.env[k] = expand(v)
					}
					jb.steps = append(jb.steps, expand(st.Run))
				case strings.HasPrefix(st.Uses, "actions/upload-artifact@"):
					if st.If != "always()" {
						t.Errorf("%s: job %s: the upload step has if: %q; want always(), so that a failing suite's JUnit file and reports are kept", path, name, st.If)
					}
					p, _ := st.With["path"].(string)
					for _, l := range strings.Split(expand(p), "\n") {
						if l = strings.TrimSpace(l); l != "" {
							jb.keep = append(jb.keep, l)
							if strings.HasSuffix(l, ".xml") {
								jb.junit = append(jb.junit, l)
							}
						}
					}
				}
			}
			out = append(out, jb)
		}
	}
	return out
}

// matrixCombos is the product of a matrix's lists, in key order; one empty
// combination without a matrix.
func matrixCombos(t *testing.T, m map[string][]any) []map[string]string {
	combos := []map[string]string{{}}
	for _, k := range sortedKeys(m) {
		if k == "include" || k == "exclude" {
			t.Fatalf("matrix %s: not evaluated by this test", k)
		}
		var next []map[string]string
		for _, c := range combos {
			for _, v := range m[k] {
				n := merge(c, map[string]string{k: fmt.Sprint(v)})
				next = append(next, n)
			}
		}
		combos = next
	}
	return combos
}

func comboName(c map[string]string) string {
	var parts []string
	for _, k := range sortedKeys(c) {
		parts = append(parts, k+"="+c[k])
	}
	if len(parts) == 0 {
		return ""
	}
	return " [" + strings.Join(parts, " ") + "]"
}

// glJob is what this test reads of a GitLab CI job.
type glJob struct {
	Variables    map[string]string `yaml:"variables"`
	Parallel     int               `yaml:"parallel"`
	BeforeScript []string          `yaml:"before_script"`
	Script       []string          `yaml:"script"`
	Artifacts    struct {
		When    string   `yaml:"when"`
		Paths   []string `yaml:"paths"`
		Reports struct {
			JUnit any `yaml:"junit"`
		} `yaml:"reports"`
	} `yaml:"artifacts"`
}

// gitlabKeywords are the top-level keys of a .gitlab-ci.yml that are not
// jobs.
var gitlabKeywords = map[string]bool{"variables": true, "stages": true, "default": true, "include": true, "workflow": true, "image": true, "services": true, "cache": true, "before_script": true, "after_script": true}

// gitlabJobs reads the file's jobs, one per parallel job (CI_NODE_INDEX
// 1..N, as GitLab numbers them).
func gitlabJobs(t *testing.T, path string) []job {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var global struct {
		Variables map[string]string `yaml:"variables"`
	}
	if err := yaml.Unmarshal(b, &global); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var out []job
	for _, name := range sortedKeys(doc) {
		if gitlabKeywords[name] || strings.HasPrefix(name, ".") {
			continue
		}
		node := doc[name]
		var j glJob
		if err := node.Decode(&j); err != nil {
			t.Fatalf("%s: job %s: %v", path, name, err)
		}
		if j.Artifacts.When != "always" {
			t.Errorf("%s: job %s: artifacts when: %q; want always, so that a failing suite's JUnit file and reports are kept", path, name, j.Artifacts.When)
		}
		var junit []string
		switch v := j.Artifacts.Reports.JUnit.(type) {
		case string:
			junit = []string{v}
		case []any:
			for _, x := range v {
				junit = append(junit, fmt.Sprint(x))
			}
		}
		n := max(j.Parallel, 1)
		for i := 1; i <= n; i++ {
			env := merge(global.Variables, j.Variables)
			jb := job{name: "gitlab " + name, env: env, junit: junit, keep: j.Artifacts.Paths}
			if j.Parallel > 0 {
				env["CI_NODE_INDEX"], env["CI_NODE_TOTAL"] = strconv.Itoa(i), strconv.Itoa(n)
				jb.name += fmt.Sprintf(" [%d/%d]", i, n)
			}
			// NB: GitLab runs a job's lines in one shell and stops at the
			// first that fails: one step.
			jb.steps = []string{strings.Join(append(slices.Clone(j.BeforeScript), j.Script...), "\n")}
			out = append(out, jb)
		}
	}
	return out
}

// result is what one job did.
type result struct {
	exit   int
	output string
	junit  []string // the JUnit files found by the job's globs
	kept   []string // the uploaded paths that exist
}

// runJob runs a job's steps in a fresh copy of scenarios, the pinned
// install replaced by this checkout's.
func runJob(t *testing.T, j job, scenarios, bin string) result {
	t.Helper()
	ws := t.TempDir()
	copyDir(t, scenarios, filepath.Join(ws, "scenarios"))
	src, err := filepath.Abs(root)
	if err != nil {
		t.Fatal(err)
	}
	env := os.Environ()
	env = append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOBIN="+bin, "KAFKASIM_SOURCE="+src)
	for _, k := range sortedKeys(j.env) {
		env = append(env, k+"="+j.env[k])
	}
	var res result
	installs, suites := 0, 0
	for _, step := range j.steps {
		step = installRE.ReplaceAllStringFunc(step, func(line string) string {
			installs++
			v := os.Expand(installRE.FindStringSubmatch(line)[1], func(k string) string { return j.env[k] })
			if !pinnedRE.MatchString(v) {
				t.Errorf("%s: kafkasim@%s is not pinned: give a release tag (v1.2.3) or a commit hash", j.name, v)
			}
			// NB: no network here: this checkout stands in for the release.
			return `(cd "$KAFKASIM_SOURCE" && go install ./cmd/kafkasim)`
		})
		suites += strings.Count(step, "kafkasim suite ")
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-e", "-o", "pipefail", "-c", step)
		cmd.Dir, cmd.Env = ws, env
		b, err := cmd.CombinedOutput()
		cancel()
		res.output += string(b)
		if err != nil {
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("%s: %v", j.name, err)
			}
			res.exit = ee.ExitCode()
			break // a failed step ends the job; the upload steps run anyway
		}
	}
	if installs != 1 || suites != 1 {
		t.Errorf("%s: %d pinned installs and %d kafkasim suite commands; want one of each", j.name, installs, suites)
	}
	for _, g := range j.junit {
		m, _ := filepath.Glob(filepath.Join(ws, os.Expand(g, func(k string) string { return j.env[k] })))
		res.junit = append(res.junit, m...)
	}
	for _, g := range j.keep {
		m, _ := filepath.Glob(filepath.Join(ws, strings.TrimSuffix(os.Expand(g, func(k string) string { return j.env[k] }), "/")))
		res.kept = append(res.kept, m...)
	}
	return res
}

// junitCases reads the test cases of JUnit files: names and failures.
func junitCases(t *testing.T, files []string) (names []string, failures int) {
	t.Helper()
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Cases []struct {
				Name    string    `xml:"name,attr"`
				Failure *struct{} `xml:"failure"`
			} `xml:"testcase"`
		}
		if err := xml.Unmarshal(b, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, c := range s.Cases {
			names = append(names, c.Name)
			if c.Failure != nil {
				failures++
			}
		}
	}
	slices.Sort(names)
	return names, failures
}

// TestCIRecipes runs every job of docs/ci/github-actions.yml and
// docs/ci/gitlab-ci.yml against examples/scenarios (each job must pass
// and leave its JUnit file; a sharded job's shards together must hold
// every case once), then against examples/scenarios plus a script whose
// expect line its runs refute (each job that runs that case must fail,
// and still leave its JUnit file with the failure and the run's report).
func TestCIRecipes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kafkasim and runs the recipes' jobs (about 15 s)")
	}
	bin := t.TempDir()
	jobs := append(githubJobs(t, filepath.Join(root, "docs", "ci", "github-actions.yml")),
		gitlabJobs(t, filepath.Join(root, "docs", "ci", "gitlab-ci.yml"))...)
	if len(jobs) != 10 {
		t.Errorf("%d jobs (with their shards), want 10: GitHub's scenarios and 4 shards, GitLab's kafkasim and 4 parallel jobs", len(jobs))
	}
	examples := filepath.Join(root, "examples", "scenarios")
	// The passing suite: each recipe, whole or sharded, the same cases.
	whole := map[string][]string{} // recipe file -> the unsharded job's cases
	sharded := map[string][]string{}
	for _, j := range jobs {
		res := runJob(t, j, examples, bin)
		if res.exit != 0 {
			t.Errorf("%s: exit %d over examples/scenarios, want 0\n%s", j.name, res.exit, res.output)
			continue
		}
		if len(res.junit) != 1 {
			t.Errorf("%s: JUnit files %v, want one where the job's artifacts look (%v)", j.name, res.junit, j.junit)
			continue
		}
		names, failures := junitCases(t, res.junit)
		if len(names) == 0 || failures != 0 {
			t.Errorf("%s: %d JUnit cases, %d failures; want some cases and no failure", j.name, len(names), failures)
		}
		recipe := strings.Fields(j.name)[0]
		if strings.Contains(j.name, "[") {
			sharded[recipe] = append(sharded[recipe], names...)
		} else {
			whole[recipe] = names
		}
	}
	for _, recipe := range []string{"github", "gitlab"} {
		s := slices.Sorted(slices.Values(sharded[recipe]))
		if len(whole[recipe]) == 0 || !slices.Equal(s, whole[recipe]) {
			t.Errorf("%s: the shards ran %d cases %v, the whole suite %d %v: want the same, each once", recipe, len(s), s, len(whole[recipe]), whole[recipe])
		}
	}
	if t.Failed() {
		return
	}
	// A contract break (here: an expectation the runs refute) fails the
	// job, whose JUnit file names it and whose reports are kept.
	failing := t.TempDir()
	copyDir(t, examples, failing)
	b, err := os.ReadFile(filepath.Join(examples, "rolling-restart.txt"))
	if err != nil {
		t.Fatal(err)
	}
	wrong := strings.Replace(string(b), "expect zk-3.9 acked-loss=ok", "expect zk-3.9 acked-loss=bug", 1)
	if wrong == string(b) {
		t.Fatal("rolling-restart.txt has no 'expect zk-3.9 acked-loss=ok': the failing script would pass")
	}
	if err := os.WriteFile(filepath.Join(failing, "broken-claim.txt"), []byte(wrong), 0o644); err != nil {
		t.Fatal(err)
	}
	failed := map[string]int{}
	for _, j := range jobs {
		res := runJob(t, j, failing, bin)
		names, failures := junitCases(t, res.junit)
		recipe := strings.Fields(j.name)[0]
		switch {
		case slices.Contains(names, "broken-claim/zk-3.9"):
			failed[recipe]++
			if res.exit != 1 || failures != 1 {
				t.Errorf("%s: exit %d, %d JUnit failures; want exit 1 and the broken claim's failure\n%s", j.name, res.exit, failures, res.output)
			}
			report := false
			for _, k := range res.kept {
				if m, _ := filepath.Glob(filepath.Join(k, "broken-claim-zk-3.9-seed*.html")); len(m) > 0 {
					report = true
				}
			}
			if !report {
				t.Errorf("%s: no report of the failing runs among the kept paths %v", j.name, res.kept)
			}
		case res.exit != 0 || len(res.junit) != 1:
			t.Errorf("%s: exit %d, JUnit %v, though the broken claim is another shard's\n%s", j.name, res.exit, res.junit, res.output)
		}
	}
	if failed["github"] != 2 || failed["gitlab"] != 2 {
		t.Errorf("jobs that ran the broken claim: %v; want 2 per recipe (the whole suite and one shard)", failed)
	}
}

// copyDir copies the files under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func merge(maps ...map[string]string) map[string]string {
	out := map[string]string{}
	for _, m := range maps {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
