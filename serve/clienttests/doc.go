// Package clienttests runs real Kafka clients' own integration test
// suites against kafkasim serve, and against franz-go's kfake for
// comparison: franz-go's kgo (pkg/kgo, v1.22.3) and segmentio's kafka-go
// (v0.4.51), each fetched through the Go module proxy into a scratch
// module cache, never vendored.
//
// For each client and target (serve in ZooKeeper mode, serve in KRaft mode
// with inter.broker.protocol.version=4.1, kfake as 3.9 and as 4.1) it
// starts the server, waits for its "ready" line, runs go test -json on the
// client's integration tests (the tests that reach a broker, found by
// IntegrationTests), sends "stop" on the server's standard input, and
// keeps serve's verdict lines and the server's peak RSS. WriteTables
// prints the outcome of every test per target.
//
// The command is serve/clienttests/run.sh (cmd/clienttests); the page is
// docs/clienttests.md. TestClientSuitesShort runs the short subset against
// serve when KAFKASIM_CLIENT_TESTS=1, as .ci/run does.
//
//	results, err := clienttests.Run(ctx, clienttests.Options{
//		Repo: ".", Work: "/tmp/clienttests",
//		Clients: []clienttests.Client{clienttests.Kgo},
//		Targets: clienttests.Targets[:1], Short: true,
//	})
//	if err == nil {
//		clienttests.WriteTables(os.Stdout, results)
//	}
package clienttests
