package main

// This file shows the progress of long commands on stderr: a bar with the
// rate and the time left when stderr is a terminal
// (github.com/schollz/progressbar), and a plain line every few seconds
// otherwise (CI logs). Progress reads the wall clock; it never reaches a
// result.

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// progress counts finished runs.
type progress struct {
	bar   *progressbar.ProgressBar
	w     io.Writer // plain lines; nil for none
	what  string
	total int
	done  int
	start time.Time
	last  time.Time
	every time.Duration
	fresh int // runs done before this invocation (resume)
	// detail is appended to each line (explore's states and depth,
	// shrink's faults); set by update.
	detail string
}

// newProgress makes a progress display: mode auto, bar, lines or none.
func newProgress(w io.Writer, mode, what string, total, already int) *progress {
	p := &progress{what: what, total: total, done: already, fresh: already, start: time.Now(), every: 10 * time.Second}
	p.last = p.start
	if mode == "auto" {
		mode = "lines"
		if f, ok := w.(*os.File); ok && term.IsTerminal(int(f.Fd())) {
			mode = "bar"
		}
	}
	switch mode {
	case "bar":
		if total <= 0 {
			total = -1 // unknown: a spinner with the count and rate
		}
		p.bar = progressbar.NewOptions(total, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
			progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString("runs"),
			progressbar.OptionSetPredictTime(true), progressbar.OptionThrottle(200*time.Millisecond),
			progressbar.OptionFullWidth(), progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }))
		_ = p.bar.Set(already)
	case "lines":
		p.w = w
		if already > 0 {
			fmt.Fprintf(w, "%s: resuming, %d of %d runs already done\n", what, already, total)
		}
	}
	return p
}

func (p *progress) add(n int) {
	p.done += n
	if p.bar != nil {
		_ = p.bar.Add(n)
		return
	}
	if p.w == nil {
		return
	}
	now := time.Now()
	if now.Sub(p.last) < p.every && (p.done < p.total || p.total <= 0) {
		return
	}
	p.last = now
	p.line(now)
}

// update sets the runs done and the detail (explore, shrink: progress
// that is not one run at a time).
func (p *progress) update(done int, detail string) {
	p.detail = detail
	if p.bar != nil {
		p.bar.Describe(p.what + " " + detail)
	}
	p.add(done - p.done)
}

func (p *progress) line(now time.Time) {
	el := now.Sub(p.start)
	rate := float64(p.done-p.fresh) / el.Seconds()
	if p.total <= 0 || p.detail != "" {
		of := ""
		if p.total > 0 {
			of = fmt.Sprintf(" of at most %d", p.total)
		}
		fmt.Fprintf(p.w, "%s: %d runs%s, %s, %.1f runs/s, %v elapsed\n", p.what, p.done, of, p.detail, rate, el.Round(time.Second))
		return
	}
	left := "?"
	if rate > 0 {
		left = time.Duration(float64(time.Second) * float64(p.total-p.done) / rate).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "%s: %d/%d runs (%.0f%%), %.1f runs/s, %v elapsed, ~%s left\n", p.what, p.done, p.total,
		100*float64(p.done)/float64(max(p.total, 1)), rate, el.Round(time.Second), left)
}

// finish ends the display; an open-ended one (explore) prints its last
// line, since no total marks its end.
func (p *progress) finish() {
	if p.bar != nil {
		_ = p.bar.Finish()
		return
	}
	if p.w != nil && p.done > 0 && (p.total <= 0 || p.done < p.total) {
		p.line(time.Now())
	}
}

// checkProgressMode refuses a -progress value that is not a mode.
func checkProgressMode(mode string) error {
	switch mode {
	case "auto", "bar", "lines", "none":
		return nil
	}
	return usagef("-progress %q: allowed auto, bar, lines, none", mode)
}

// progressFlag is the -progress flag of suite, sweep, explore and shrink.
const progressFlagDoc = "progress on stderr: auto (a bar on a terminal, lines otherwise), bar, lines or none"
