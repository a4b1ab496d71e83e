// Command clienttests runs Kafka clients' own integration test suites
// against kafkasim serve and franz-go's kfake and prints the result
// tables (package serve/clienttests; docs/clienttests.md). Run it from
// kafkasim's repository root, or through serve/clienttests/run.sh.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/kafkasim/kafkasim/serve/clienttests"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "clienttests:", err)
		if errors.Is(err, clienttests.ErrModuleProxy) {
			os.Exit(3)
		}
		os.Exit(1)
	}
}

func run() error {
	defaultWork := filepath.Join(os.TempDir(), "kafkasim-clienttests")
	if d, err := os.UserCacheDir(); err == nil {
		defaultWork = filepath.Join(d, "kafkasim-clienttests")
	}
	clients := flag.String("clients", "kgo,kafka-go", "comma-separated clients: kgo, kafka-go")
	targets := flag.String("targets", "serve zk,serve kraft,kfake 3.9,kfake 4.1", "comma-separated targets: serve zk, serve kraft, kfake 3.9, kfake 4.1; also serve zk faults, serve kraft faults (serve -faults 'failover fault-every=5s'), and serve 4.2, serve 4.3 (share groups)")
	work := flag.String("work", defaultWork, "scratch directory: module cache, client copies, binaries, logs, go test -json output")
	speed := flag.Float64("speed", 1, "serve's -speed")
	short := flag.Bool("short", false, "run each client's short subset (the CI test's) instead of all its integration tests")
	runRE := flag.String("run", "", "keep only the integration tests this regexp matches")
	records := flag.Int("records", 50000, "kgo's KGO_TEST_RECORDS, records per ETL test (0: kgo's own default, 500000, at which serve passes 18 GiB resident)")
	timeout := flag.Duration("timeout", 15*time.Minute, "go test -timeout for each package (kafka-go's root package takes 8 minutes against serve)")
	maxRSS := flag.Int64("max-rss", 14<<10, "kill a server whose resident set passes this many MiB (0: no limit); the machine is shared")
	updateDoc := flag.String("update-doc", "", "also replace the generated section of this Markdown page (docs/clienttests.md) with the tables")
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every option is a flag", flag.Args())
	}
	if !(*speed > 0) {
		return fmt.Errorf("-speed %v: must be above 0", *speed)
	}
	o := clienttests.Options{Work: *work, Speed: *speed, Short: *short, Run: *runRE, Records: *records, Timeout: *timeout, MaxRSS: *maxRSS << 20, Log: os.Stderr}
	repo, err := os.Getwd()
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(repo, "cmd", "kafkasim")); err != nil {
		return fmt.Errorf("run from kafkasim's repository root (no cmd/kafkasim in %s)", repo)
	}
	o.Repo = repo
	for _, name := range strings.Split(*clients, ",") {
		c, ok := pick(clienttests.Clients, func(c clienttests.Client) string { return c.Name }, name)
		if !ok {
			return fmt.Errorf("-clients: unknown client %q; known: kgo, kafka-go", name)
		}
		o.Clients = append(o.Clients, c)
	}
	for _, name := range strings.Split(*targets, ",") {
		all := append(append(slices.Clone(clienttests.Targets), clienttests.FaultTargets...), clienttests.ReleaseTargets...)
		t, ok := pick(all, func(t clienttests.Target) string { return t.Name }, name)
		if !ok {
			return fmt.Errorf("-targets: unknown target %q; known: serve zk, serve kraft, kfake 3.9, kfake 4.1; under faults: serve zk faults, serve kraft faults; later releases: serve 4.2, serve 4.3", name)
		}
		o.Targets = append(o.Targets, t)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	start := time.Now()
	results, err := clienttests.Run(ctx, o)
	if err != nil && len(results) == 0 {
		return err
	}
	clienttests.WriteTables(os.Stdout, results)
	if *updateDoc != "" {
		preamble := fmt.Sprintf("Measured %s with `serve/clienttests/run.sh %s` (%v in all).",
			time.Now().UTC().Format("2006-01-02"), strings.Join(os.Args[1:], " "), time.Since(start).Round(time.Second))
		if uerr := clienttests.UpdateDoc(*updateDoc, results, preamble); uerr != nil {
			return uerr
		}
	}
	return err
}

func pick[T any](all []T, name func(T) string, want string) (T, bool) {
	for _, x := range all {
		if name(x) == strings.TrimSpace(want) {
			return x, true
		}
	}
	var zero T
	return zero, false
}
