package clienttests

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestIntegrationTestsFollowHelpersAndAddresses(t *testing.T) {
	got, err := IntegrationTests(filepath.Join("testdata", "discover"), Markers{
		Helpers:   []string{"newTestClient"},
		Addresses: []string{"localhost:909"},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TestAddress", "TestDirect", "TestThroughHelper", "TestTwoHops"}
	if !slices.Equal(got, want) {
		t.Errorf("IntegrationTests = %v, want %v", got, want)
	}
}

func TestParseGoTestJSONOutcomesAndReasons(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "gotest.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	got, err := ParseGoTestJSON(f, "pkg/kgo", []string{"TestPing", "TestNeverRan"})
	if err != nil {
		t.Fatal(err)
	}
	want := []TestResult{
		{Package: "pkg/kgo", Name: "TestGroupETL", Outcome: Fail, Seconds: 10, Reason: "range: group_test.go:40: saw double offset t 3/42"},
		{Package: "pkg/kgo", Name: "TestNeverRan", Outcome: NotRun, Reason: "panic: test timed out after 2m0s"},
		{Package: "pkg/kgo", Name: "TestPing", Outcome: Pass},
		{Package: "pkg/kgo", Name: "TestPooling", Outcome: Fail, Seconds: 1.5, Reason: "produce_request_test.go:90: expected pooled batch, got 0"},
		{Package: "pkg/kgo", Name: "TestShareGroup", Outcome: Skip, Reason: "share_test.go:12: share groups not supported by broker"},
		{Package: "pkg/kgo", Name: "TestTxnEtl", Outcome: NoResult, Reason: "panic: test timed out after 2m0s"},
	}
	if !slices.Equal(got, want) {
		t.Errorf("ParseGoTestJSON =\n%v\nwant\n%v", got, want)
	}
}

func TestWriteTablesCountsAndReasons(t *testing.T) {
	rs := []Result{
		{Client: "kgo", Version: "v1", Target: "serve zk", Wall: 90 * time.Second, PeakRSS: 64 << 20,
			Tests:    []TestResult{{Name: "TestA", Outcome: Pass}, {Name: "TestB", Outcome: Fail, Reason: "x|y"}},
			Verdicts: []string{"  linearizability  ok"}},
		{Client: "kgo", Version: "v1", Target: "kfake 3.9",
			Tests: []TestResult{{Name: "TestA", Outcome: Pass}, {Name: "TestB", Outcome: Skip, Reason: "old"}}},
	}
	var sb strings.Builder
	WriteTables(&sb, rs)
	for _, want := range []string{
		"| test | serve zk | kfake 3.9 |",
		"| TestB | **FAIL** | skip |",
		"| **passed / failed / skipped** | 1 / 1 / 0 | 1 / 0 / 1 |",
		"| **server peak RSS** | 64 MiB | 0 MiB |",
		"- TestB (fail, 0s): x\\|y",
		"Skipped against kfake 3.9: TestB (old).",
		"  linearizability  ok",
	} {
		if !strings.Contains(sb.String(), want) {
			t.Errorf("WriteTables lacks %q:\n%s", want, sb.String())
		}
	}
}

func TestTargetArgs(t *testing.T) {
	for _, tc := range []struct {
		t    Target
		c    Client
		want string
	}{
		{Targets[0], Kgo, "serve -listen 127.0.0.1:9092 -speed 1"},
		{Targets[1], KafkaGo, "serve -listen 127.0.0.1:9090 -speed 1 -set inter.broker.protocol.version=4.1 -set min.insync.replicas=1"},
		{Targets[2], Kgo, "-port 9092 -as-version 3.9 -c group.consumer.heartbeat.interval.ms=1000"},
	} {
		if got := strings.Join(tc.t.args(tc.c, 1), " "); got != tc.want {
			t.Errorf("%s for %s: %q, want %q", tc.t.Name, tc.c.Name, got, tc.want)
		}
	}
}

// TestClientSuitesShort runs each client's short subset (Client.Subset)
// against serve in ZooKeeper and KRaft modes at -speed 1, and fails if
// any of those tests does not pass. It runs only with
// KAFKASIM_CLIENT_TESTS=1 (.ci/run sets it), and skips when the Go module
// proxy cannot serve the clients or the ports are taken.
func TestClientSuitesShort(t *testing.T) {
	if os.Getenv("KAFKASIM_CLIENT_TESTS") != "1" {
		t.Skip("the real clients' suites run with KAFKASIM_CLIENT_TESTS=1 (serve/clienttests/run.sh -short runs the same)")
	}
	if runtime.GOOS != "linux" {
		t.Skip("measured on Linux only")
	}
	work := os.Getenv("KAFKASIM_CLIENT_TESTS_WORK")
	if work == "" {
		d, err := os.UserCacheDir()
		if err != nil {
			d = os.TempDir()
		}
		work = filepath.Join(d, "kafkasim-clienttests")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range Clients {
		if err := portsFree(c.Port, 3); err != nil {
			t.Skipf("%s's ports: %v", c.Name, err)
		}
	}
	var log strings.Builder
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	results, err := Run(ctx, Options{Repo: repo, Work: work, Clients: Clients, Targets: Targets[:2],
		Short: true, Timeout: 3 * time.Minute, MaxRSS: 4 << 30, Log: &log})
	t.Log("\n" + log.String())
	if errors.Is(err, ErrModuleProxy) {
		t.Skipf("skipping: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	var sb strings.Builder
	WriteTables(&sb, results)
	t.Log("\n" + sb.String())
	for _, r := range results {
		if r.Err != "" {
			t.Errorf("%s against %s: %s", r.Client, r.Target, r.Err)
		}
		if len(r.Tests) == 0 {
			t.Errorf("%s against %s: no test ran", r.Client, r.Target)
		}
		for _, tr := range r.Tests {
			if tr.Outcome != Pass {
				t.Errorf("%s %s against %s: %s: %s", r.Client, tr.Name, r.Target, tr.Outcome, tr.Reason)
			}
		}
	}
}
