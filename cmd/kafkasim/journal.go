package main

// journal.go: the part of sweep and matrix that keeps their runs: the
// manifest naming what DIR holds, and DIR/runs.jsonl, to which each
// finished run is appended at once (so an interrupted command resumes
// where it stopped). An interrupt ends the command with exit code 130
// naming what was kept.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kafkasim/kafkasim/reports"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
)

// runJournaled calls run with a stop channel (closed on SIGINT or SIGTERM)
// and the callback for each finished run, and returns prior followed by
// the runs finished now. what names the command on the progress display;
// jobs is how many runs this shard holds, prior among them.
func runJournaled[R any](rf *runFlags, stderr io.Writer, what string, jobs int, prior []R,
	run func(stop <-chan struct{}, onRun func(R) error) (stopped bool, err error)) ([]R, error) {
	ctx, stopSignals := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stopSignals()
	path := filepath.Join(rf.out, "runs.jsonl")
	journal, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer journal.Close()
	bar := newProgress(stderr, rf.progress, what, jobs, len(prior))
	recs := prior
	stopped, err := run(ctx.Done(), func(r R) error {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if _, err := journal.Write(append(b, '\n')); err != nil {
			return err
		}
		recs = append(recs, r)
		bar.add(1)
		return nil
	})
	bar.finish()
	if err != nil {
		return nil, err
	}
	if err := journal.Close(); err != nil {
		return nil, err
	}
	if stopped {
		return nil, exitError{130, fmt.Sprintf("interrupted: %d of %d runs kept in %s; rerun the same command to resume", len(recs), jobs, path)}
	}
	return recs, nil
}

// writeShardRuns rewrites a shard's runs.jsonl in order (write writes
// recs, sorted) and says how to join the shards.
func writeShardRuns(rf *runFlags, stdout io.Writer, n int, write func(io.Writer) error) error {
	if err := reports.WriteFileAtomic(filepath.Join(rf.out, "runs.jsonl"), write); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "shard %s: %d runs in %s; join the shards with: kafkasim merge -out DIR SHARD_DIR...\n", rf.shardText, n, rf.out)
	return nil
}

// readManifestFile reads DIR/file, the manifest of a command's output
// directory; false when there is none. A file that does not parse is bad
// input naming it.
func readManifestFile[M any](dir, file, command string) (M, bool, error) {
	var m M
	path := filepath.Join(dir, file)
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return m, false, nil
	}
	if err != nil {
		return m, false, err
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, true, usagef("%s: not a %s's %s: %v", path, command, file, err)
	}
	return m, true, nil
}

// readJournal reads DIR/runs.jsonl, one R a line, and the line number of
// each; valid refuses a record that parsed but is not one. A line that is
// not a record (a run cut off by an interruption) is dropped. With strict
// set (merge: a shard is rewritten whole when it completes, so nothing in
// it is torn) such a line is refused, named by file and line.
func readJournal[R any](dir, command string, strict bool, valid func(*R) error) ([]R, []int, error) {
	path := filepath.Join(dir, "runs.jsonl")
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	var out []R
	var lines []int
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		var r R
		err := json.Unmarshal(sc.Bytes(), &r)
		if err == nil {
			err = valid(&r)
		}
		if err != nil {
			if strict {
				return nil, nil, usagef("%s:%d: not a run record of kafkasim %s (%v): %.60q", path, n, command, err, sc.Text())
			}
			continue
		}
		out = append(out, r)
		lines = append(lines, n)
	}
	return out, lines, sc.Err()
}

// startOutDir makes a new output directory holding only its manifest; a
// directory that holds anything else is refused.
func startOutDir(dir, file string, manifest []byte) error {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return usagef("-out %s: the directory is not empty and holds no %s; give a new or empty directory", dir, file)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return usagef("-out %s: %v", dir, err)
	}
	return reports.WriteFileAtomic(filepath.Join(dir, file), func(w io.Writer) error { _, err := w.Write(manifest); return err })
}

// keepRuns returns, of a resumed directory's runs, those of this shard's
// jobs, each job once, sorted, and the jobs they are; it rewrites the
// journal to them (without a torn last line) before anything is appended.
func keepRuns[J comparable, R any](dir string, jobs []J, recs []R, job func(R) J, sortRecs func([]R) []R, write func(io.Writer, []R) error) (map[J]bool, []R, error) {
	mine := map[J]bool{}
	for _, j := range jobs {
		mine[j] = true
	}
	done := map[J]bool{}
	var kept []R
	for _, r := range recs {
		if j := job(r); mine[j] && !done[j] {
			done[j] = true
			kept = append(kept, r)
		}
	}
	kept = sortRecs(kept)
	err := reports.WriteFileAtomic(filepath.Join(dir, "runs.jsonl"), func(w io.Writer) error { return write(w, kept) })
	return done, kept, err
}
