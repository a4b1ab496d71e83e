// Package harness runs one scenario script on a simulated world and
// returns what it showed. Its one job is the run: Run builds the world of
// one variant and one seed (Prepare checks the inputs first: an unknown
// variant, a bad -set, a client step's configuration), drives the
// scripted clients, the Kafka producers and consumers, the swarm step and
// the manual controller, observes the replicas after every event, runs the
// end phase (heal, liveness, final reads), judges the run with every
// checker and returns a Result with the history, the final state, the
// verdicts and the command that replays it. Story renders a run's trace as
// the sentences of a report.
//
// It imports the language, package scenarios, and never the reverse (a
// test of this package walks the imports): a script is parsed and
// validated without a runner. The drivers import it: package workload (the
// exploration workload, which drives a Runner action by action: the
// exported Runner fields and methods are that package's view), package
// replay (choice files), and suite, sweep, matrix, explore and shrink;
// cmd/kafkasim parses the flags and prints.
//
//	s, err := scenarios.Load("kip101-hw-lag")
//	if err != nil {
//		return err
//	}
//	res, err := harness.Run(s, "hw", harness.Options{Seed: 1})
//	if err == nil && !res.OK() {
//		fmt.Println(res.Mismatches, res.Replay)
//	}
package harness
