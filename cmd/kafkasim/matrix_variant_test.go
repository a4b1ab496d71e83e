package main

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unclean is unclean-election on one release at one seed: its first
// variant (unclean.leader.election.enable=true) elects the stale follower
// and loses the committed record; its variant clean waits for the ISR.
var unclean = []string{"matrix", "-scenario", "unclean-election", "-versions", "4.1", "-seeds", "1", "-progress", "none"}

// matrixRun runs unclean with extra flags into a new directory and wants
// exit 0.
func matrixRun(t *testing.T, extra ...string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "m")
	code, out, errb := runCmd(append(append(append([]string{}, unclean...), "-out", dir), extra...)...)
	if code != 0 {
		t.Fatalf("matrix %v: exit %d\n%s%s", extra, code, out, errb)
	}
	return dir
}

// csvRows reads matrix.csv with encoding/csv, each row by column name.
func csvRows(t *testing.T, dir string) []map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "matrix.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("matrix.csv is not CSV: %v", err)
	}
	var out []map[string]string
	for _, l := range lines[1:] {
		row := map[string]string{}
		for i, c := range lines[0] {
			row[c] = l[i]
		}
		out = append(out, row)
	}
	return out
}

// replays returns the replay command of every run in runs.jsonl.
func replays(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var r struct {
			Replay string `json:"replay"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r.Replay)
	}
	return out
}

func fileText(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMatrixRowsSayWhatTheyRan: without -variant the unclean-election row
// runs its first variant and every output says so, with the variant's
// setting — "Kafka 4.1 loses 1/1" is never read as Kafka's default.
func TestMatrixRowsSayWhatTheyRan(t *testing.T) {
	dir := matrixRun(t)
	ran := "variant unclean (unclean.leader.election.enable=true)"
	row := csvRows(t, dir)[0]
	if row["variant"] != "unclean" || row["variant_from"] != "first" || row["settings"] != "unclean.leader.election.enable=true" || row["runs_with_loss"] != "1" {
		t.Errorf("matrix.csv row %v: want variant unclean (first), its setting, and the loss", row)
	}
	js := readMatrixRows(t, dir)[[2]string{"unclean-election", "4.1"}]
	if js["variant"] != "unclean" || js["variant_from"] != "first" || strings.Join(asStrings(js["settings"]), " ") != "unclean.leader.election.enable=true" {
		t.Errorf("matrix.json row %v", js)
	}
	if md := fileText(t, dir, "matrix.md"); !strings.Contains(md, "| unclean-election | "+ran+" | 1/1 |") || !strings.Contains(md, "its first, unless -variant names another (none named here)") {
		t.Errorf("matrix.md does not say what the row ran:\n%s", md)
	}
	if svg := fileText(t, dir, "matrix.svg"); !strings.Contains(svg, "unclean.leader.election.enable=true") {
		t.Error("matrix.svg does not name the row's setting")
	}
}

// TestMatrixVariantPicksTheVariant: -variant SCENARIO=V, V alone and a
// comma list run the variant named: its configuration reaches the runs
// (no loss with unclean election off) and their replay commands.
func TestMatrixVariantPicksTheVariant(t *testing.T) {
	for _, v := range [][]string{{"-variant", "unclean-election=clean"}, {"-variant", "clean"}, {"-variant", "clean,kip101-hw-lag=kip101", "-scenario", "kip101-hw-lag"}} {
		dir := matrixRun(t, v...)
		row := csvRows(t, dir)[0]
		if row["variant"] != "clean" || row["variant_from"] != "-variant" || row["settings"] != "unclean.leader.election.enable=false" || row["runs_with_loss"] != "0" || row["status"] != "ran" {
			t.Errorf("%v: row %v; want variant clean's runs, without loss", v, row)
		}
		for _, r := range replays(t, dir) {
			if strings.Contains(r, "-scenario unclean-election") && !strings.Contains(r, "-variant clean ") {
				t.Errorf("%v: replay %q does not run variant clean", v, r)
			}
		}
		if md := fileText(t, dir, "matrix.md"); !strings.Contains(md, "| variant clean (unclean.leader.election.enable=false) |") || !strings.Contains(md, "(here for unclean-election") {
			t.Errorf("%v: matrix.md:\n%s", v, md)
		}
	}
}

// TestMatrixSetReachesRuns: -set and -config apply to every run, over the
// variant's own value (-set over the file's); outputs and replay commands
// name them.
func TestMatrixSetReachesRuns(t *testing.T) {
	server := filepath.Join(t.TempDir(), "server.properties")
	if err := os.WriteFile(server, []byte("replica.lag.time.max.ms=3000\nunclean.leader.election.enable=true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := matrixRun(t, "-set", "unclean.leader.election.enable=false", "-config", server)
	row := csvRows(t, dir)[0]
	if row["variant"] != "unclean" || row["settings"] != "replica.lag.time.max.ms=3000 unclean.leader.election.enable=false" || row["runs_with_loss"] != "0" {
		t.Errorf("row %v; want variant unclean with -set's values over its own, and no loss", row)
	}
	rs := replays(t, dir)
	if len(rs) != 1 || !strings.Contains(rs[0], "-set unclean.leader.election.enable=false") || !strings.Contains(rs[0], "-set replica.lag.time.max.ms=3000") {
		t.Fatalf("replays %q do not carry the -set", rs)
	}
	md := fileText(t, dir, "matrix.md")
	if !strings.Contains(md, "Every run also has, from the -config files and -set: replica.lag.time.max.ms=3000, unclean.leader.election.enable=false.") ||
		!strings.Contains(md, "| variant unclean (replica.lag.time.max.ms=3000, unclean.leader.election.enable=false) |") {
		t.Errorf("matrix.md:\n%s", md)
	}
	if code, out, errb := runCmd(strings.Fields(rs[0])[1:]...); code != 0 || !strings.Contains(out, "acknowledged and lost 0") {
		t.Errorf("%s: exit %d\n%s%s", rs[0], code, out, errb)
	}
}

// TestMatrixScenarioFile: -scenario takes a script file, alone or in a
// comma list, and -variant names it by its name; its replay command names
// the file. Two scenarios of one name are refused.
func TestMatrixScenarioFile(t *testing.T) {
	src, err := os.ReadFile("../../scenarios/scripts/unclean-election.txt")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	file := filepath.Join(tmp, "my-unclean.txt")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tmp, "m")
	code, out, errb := runCmd("matrix", "-scenario", file+",kip101-hw-lag", "-variant", "my-unclean=clean", "-versions", "2.0", "-seeds", "1", "-progress", "none", "-out", dir)
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	rows := csvRows(t, dir)
	if len(rows) != 2 || rows[0]["scenario"] != "my-unclean" || rows[0]["variant"] != "clean" || rows[0]["runs"] != "1" || rows[1]["variant"] != "hw" || rows[1]["variant_from"] != "first" {
		t.Errorf("rows %v", rows)
	}
	if rs := replays(t, dir); len(rs) != 2 || !strings.HasPrefix(rs[0], "kafkasim replay -scenario "+file+" -variant clean ") {
		t.Errorf("replays %q; want the file's", rs)
	}
	clash := filepath.Join(tmp, "unclean-election.txt")
	if err := os.WriteFile(clash, src, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errb = runCmd("matrix", "-scenario", "unclean-election", "-scenario", clash, "-seeds", "1", "-out", filepath.Join(tmp, "x"))
	if code != 2 || !strings.Contains(errb, "both are scenario unclean-election") {
		t.Errorf("two scenarios named unclean-election: exit %d, %q", code, errb)
	}
	bad := filepath.Join(tmp, "bad.txt")
	if err := os.WriteFile(bad, []byte("brokers 3\nfrobnicate b1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errb = runCmd("matrix", "-scenario", bad, "-seeds", "1", "-out", filepath.Join(tmp, "y"))
	if code != 2 || !strings.Contains(errb, bad+":2") {
		t.Errorf("a bad script: exit %d, %q; want 2 and its file:line", code, errb)
	}
}

// TestMatrixVariantAndSetBadInput: an unknown variant or scenario, two
// variants of one scenario, and a -set of a key the release decides are
// bad input, exit 2, naming what is allowed, with nothing written.
func TestMatrixVariantAndSetBadInput(t *testing.T) {
	tmp := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-variant", "nope"}, `-variant nope: no scenario of this matrix has a variant "nope" (allowed: unclean-election: unclean, clean; kip101-hw-lag: hw, kip101, kip279)`},
		{[]string{"-variant", "unclean-election=nope"}, `-variant unclean-election=nope: scenario unclean-election has no variant "nope" (allowed: unclean, clean)`},
		{[]string{"-variant", "swarm=hw-unsafe"}, "-variant swarm=hw-unsafe: swarm is not a scenario of this matrix (allowed: unclean-election, kip101-hw-lag)"},
		{[]string{"-variant", "clean", "-variant", "hw"}, "one variant alone applies to every scenario that has it"},
		{[]string{"-variant", "unclean-election=clean,unclean-election=unclean"}, "two variants of unclean-election"},
		{[]string{"-variant", "=clean"}, "want V (every scenario that has a variant V) or SCENARIO=V"},
		{[]string{"-variant", ""}, "an empty item"},
		{[]string{"-set", "inter.broker.protocol.version=2.0"}, "-set inter.broker.protocol.version=2.0: the matrix's columns are the releases, and each sets inter.broker.protocol.version itself; choose the releases with -versions (e.g. -versions 2.0)"},
		{[]string{"-set", "truncation=hw"}, "-set truncation=hw: the matrix's columns are the releases"},
		{[]string{"-set", "acks=banana"}, `acks = "banana": not one of the allowed values; allowed: 0, 1, -1, all`},
		{[]string{"-set", "$crash=0.5"}, "has no script variable $crash"},
	} {
		out := filepath.Join(tmp, "o")
		args := append([]string{"matrix", "-scenario", "unclean-election,kip101-hw-lag", "-versions", "2.0", "-seeds", "1", "-progress", "none", "-out", out}, c.args...)
		if code, _, errb := runCmd(args...); code != 2 || !strings.Contains(errb, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errb, c.want)
		}
		if _, err := os.Stat(out); !os.IsNotExist(err) {
			t.Errorf("%v: -out was written (%v)", c.args, err)
			os.RemoveAll(out)
		}
	}
	// V alone that some scenario lacks leaves it at its first variant,
	// and says so.
	dir := filepath.Join(tmp, "ok")
	code, _, errb := runCmd("matrix", "-scenario", "unclean-election,kip101-hw-lag", "-variant", "clean", "-versions", "2.0", "-seeds", "1", "-progress", "none", "-out", dir)
	if code != 0 || !strings.Contains(errb, "-variant clean: kip101-hw-lag has no variant clean; it runs its first, hw (variants: hw, kip101, kip279)") {
		t.Errorf("exit %d, stderr %q", code, errb)
	}
}

// TestMatrixVariantResumesAndMerges: -variant and -set are part of the
// matrix: shards merged write what one run writes, and another -variant
// in the same directory is refused.
func TestMatrixVariantResumesAndMerges(t *testing.T) {
	base := t.TempDir()
	flags := []string{"-scenario", "unclean-election", "-variant", "clean", "-set", "replica.lag.time.max.ms=3000", "-versions", "2.0,4.1", "-seeds", "2", "-progress", "none"}
	whole := filepath.Join(base, "whole")
	if code, out, errb := runCmd(append(append([]string{"matrix"}, flags...), "-out", whole)...); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errb)
	}
	var shards []string
	for _, s := range []string{"0/2", "1/2"} {
		d := filepath.Join(base, "shard-"+s[:1])
		if code, out, errb := runCmd(append(append([]string{"matrix"}, flags...), "-out", d, "-shard", s)...); code != 0 {
			t.Fatalf("shard %s: exit %d\n%s%s", s, code, out, errb)
		}
		shards = append(shards, d)
	}
	merged := filepath.Join(base, "merged")
	if code, out, errb := runCmd(append([]string{"merge", "-out", merged}, shards...)...); code != 0 {
		t.Fatalf("merge: exit %d\n%s%s", code, out, errb)
	}
	sameFiles(t, whole, merged, matrixFiles)
	code, _, errb := runCmd(append(append([]string{"matrix"}, flags[:2]...), "-versions", "2.0,4.1", "-seeds", "2", "-out", whole)...)
	if code != 2 || !strings.Contains(errb, "holds another matrix") || !strings.Contains(errb, "-variant clean") {
		t.Errorf("another -variant in the directory: exit %d, %q", code, errb)
	}
}
