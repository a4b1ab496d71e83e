package main

// This file opens the HTML run reports and the pictures in a real browser
// (Debian's chromium, driven through the DevTools protocol by chromedp):
// from file:// with every network request refused, as a reader opens a
// report a CI job left. .ci/run installs chromium; without it the test
// skips, saying so. With KAFKASIM_SCREENSHOTS=DIR it saves what it saw
// there (kip101-hw-lag's report, a whole-rack power loss's report, the
// default matrix, an acks × truncation sweep's plots).

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// chromium returns the browser's path, or "" when none is installed.
func chromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// pageProblems collects what a page must not do: write an error to the
// console, throw, or ask for anything but a local file.
type pageProblems struct {
	mu   sync.Mutex
	list []string
}

func (p *pageProblems) add(s string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.list = append(p.list, s)
}

func (p *pageProblems) take() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.list
	p.list = nil
	return out
}

// listen is the tab's listener: it returns fast and runs no command.
func (p *pageProblems) listen(ev any) {
	switch ev := ev.(type) {
	case *runtime.EventConsoleAPICalled:
		if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
			var parts []string
			for _, a := range ev.Args {
				parts = append(parts, string(a.Value))
			}
			p.add("console." + string(ev.Type) + ": " + strings.Join(parts, " "))
		}
	case *runtime.EventExceptionThrown:
		p.add("exception: " + ev.ExceptionDetails.Text + " " + fmt.Sprint(ev.ExceptionDetails.Exception))
	case *log.EventEntryAdded:
		if ev.Entry.Level == log.EntryLevelError {
			p.add("log: " + ev.Entry.Text + " " + ev.Entry.URL)
		}
	case *network.EventRequestWillBeSent:
		if u := ev.Request.URL; !strings.HasPrefix(u, "file:") && !strings.HasPrefix(u, "data:") && !strings.HasPrefix(u, "about:") {
			p.add("network request: " + u)
		}
	}
}

// TestReportsInABrowser renders a run report and the matrix and sweep
// pictures in headless Chromium from file:// with no network: no console
// error, no exception, no request leaves the machine; the report's
// timeline and verdicts table are visible, its grouped evidence expands
// on a click, and its zoom buttons zoom the timeline.
func TestReportsInABrowser(t *testing.T) {
	exe := chromium()
	if exe == "" {
		t.Skip("chromium is not installed (apt-get install chromium; .ci/run installs it): the reports are not checked in a browser")
	}
	shots := os.Getenv("KAFKASIM_SCREENSHOTS")
	if shots != "" {
		if err := os.MkdirAll(shots, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	for _, args := range [][]string{
		{"run", "-scenario", "kip101-hw-lag", "-variant", "hw", "-report", dir},
		{"run", "-scenario", filepath.Join("..", "..", "reports", "testdata", "rack-power-loss.txt"), "-report", dir},
	} {
		if code, out, errb := runCmd(args...); code != 0 && code != 1 {
			t.Fatalf("%v: exit %d\n%s%s", args, code, out, errb)
		}
	}
	mdir, sdir := filepath.Join(dir, "matrix"), filepath.Join(dir, "sweep")
	if code, out, errb := runCmd("matrix", "-progress", "none", "-out", mdir); code > 1 {
		t.Fatalf("matrix: exit %d\n%s%s", code, out, errb)
	}
	if code, out, errb := runCmd("sweep", "-scenario", "acks1-leader-crash", "-grid", "acks=1,all", "-grid", "truncation=hw,kip101,kip279",
		"-seeds", "5", "-progress", "none", "-out", sdir); code > 1 {
		t.Fatalf("sweep: exit %d\n%s%s", code, out, errb)
	}
	// The sweep's three plots on one page, as a reader lays them out.
	plots := "<!DOCTYPE html><html><body style='margin:0'>"
	for _, p := range []string{"loss.svg", "p_run_loss.svg", "tradeoff.svg"} {
		plots += "<img src='" + p + "' style='display:block'>"
	}
	if err := os.WriteFile(filepath.Join(sdir, "plots.html"), []byte(plots+"</body></html>"), 0o644); err != nil {
		t.Fatal(err)
	}

	var problems pageProblems
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.WindowSize(1280, 900),
		// NB: no network: a page that asks for anything remote fails to load
		// it, and the listener reports the request.
		chromedp.Flag("proxy-server", "http://127.0.0.1:9"), chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"),
		chromedp.Flag("allow-file-access-from-files", true), chromedp.Flag("disable-dev-shm-usage", true))
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelA()
	ctx, cancel := chromedp.NewContext(actx, chromedp.WithListener(problems.listen))
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("starting %s: %v", exe, err)
	}
	if _, err := chromedp.Call(ctx, log.Enable, struct{}{}); err != nil {
		t.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		t.Fatal(err)
	}

	shoot := func(name string) {
		if shots == "" {
			return
		}
		buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		if err := os.WriteFile(filepath.Join(shots, name), buf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	open := func(path string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate("file://"+path)); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
	}
	settle := func(what string) {
		t.Helper()
		// NB: the listener sees events as they arrive; a round trip to the
		// page makes sure those the load caused have come in.
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("true")); err != nil {
			t.Fatal(err)
		}
		for _, p := range problems.take() {
			t.Errorf("%s: %s", what, p)
		}
	}

	for _, report := range []struct{ file, shot, group string }{
		{"kip101-hw-lag-hw-seed1.html", "kip101-hw-lag-report.png", "1 record lost"},
		{"rack-power-loss-page-cache-seed1.html", "rack-power-loss-report.png", "200 records lost"},
	} {
		open(filepath.Join(dir, report.file))
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("#timeline")), chromedp.WaitVisible(chromedp.CSS("#verdicts"))); err != nil {
			t.Fatalf("%s: timeline or verdicts not visible: %v", report.file, err)
		}
		// Grouped evidence: one summary line, its records shown on a click.
		sel := `details.group`
		summary, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("`+sel+` summary").textContent`))
		if err != nil || !strings.Contains(summary, report.group) {
			t.Fatalf("%s: the first group reads %q (%v), want %q", report.file, summary, err, report.group)
		}
		shown := `(function () { var d = document.querySelector("` + sel + `"); return d.open && d.querySelector("ol.records li").checkVisibility(); })()`
		if v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](shown)); err != nil || v {
			t.Fatalf("%s: the group's records show before the click (%v)", report.file, err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(sel+" summary"))); err != nil {
			t.Fatal(err)
		}
		if v, err := chromedp.Run(ctx, chromedp.Evaluate[bool](shown)); err != nil || !v {
			t.Errorf("%s: a click on the group does not show its records (%v)", report.file, err)
		}
		// Zoom: the button halves the timeline's view box; reset restores it.
		viewBox := `document.getElementById("timeline").getAttribute("viewBox")`
		before, _ := chromedp.Run(ctx, chromedp.Evaluate[string](viewBox))
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[data-zoom="in"]`))); err != nil {
			t.Fatal(err)
		}
		zoomed, _ := chromedp.Run(ctx, chromedp.Evaluate[string](viewBox))
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[data-zoom="reset"]`))); err != nil {
			t.Fatal(err)
		}
		reset, _ := chromedp.Run(ctx, chromedp.Evaluate[string](viewBox))
		if zoomed == before || reset != before {
			t.Errorf("%s: view box %q, zoomed in %q, reset %q", report.file, before, zoomed, reset)
		}
		settle(report.file)
		shoot(report.shot)
	}
	for _, pic := range []struct{ path, shot string }{
		{filepath.Join(mdir, "matrix.svg"), "matrix.png"},
		{filepath.Join(sdir, "plots.html"), "sweep-acks-truncation-plots.png"},
	} {
		open(pic.path)
		settle(pic.path)
		shoot(pic.shot)
	}
	// The check can fail: a page that asks the network is reported.
	if err := os.WriteFile(filepath.Join(dir, "remote.html"), []byte(`<!DOCTYPE html><img src="http://example.invalid/x.png">`), 0o644); err != nil {
		t.Fatal(err)
	}
	open(filepath.Join(dir, "remote.html"))
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("true")); err != nil {
		t.Fatal(err)
	}
	if len(problems.take()) == 0 {
		t.Error("a page that loads a remote image raised nothing: the checks above could not fail")
	}
}
