// Package scenarios is the scenario script language and the named
// scenarios.
//
// A script (scripts/*.txt, embedded; Parse, Load, Builtin, All, Swarm)
// names the cluster, topics, configuration, variants and a step list, with
// the verdict expected under each variant; it is checked whole before
// anything runs (validate*.go): a mistake is bad input at its line, not a
// run that breaks at its step. What a variant runs under is read here too
// (Script.Configuration, Script.EndOptions, ScriptVars, Step.Substitute),
// so that every package that runs a script reads the script one way. The
// published failure traces (KIP-101, KIP-279, KAFKA-7164) are scripts with
// golden output in testdata; their golden test runs them through the
// harness from the external test package scenarios_test.
//
// The package runs nothing and imports no runner: it depends on the
// broker's configuration (broker/config: a property is checked as the run
// will parse it) and the cluster's shape (broker/cluster, sim), never on
// the packages below it, which import it, one way:
//
//	scenarios          the language (this package)
//	scenarios/harness  runs one script on a world: Run, Prepare, Result
//	scenarios/workload the exploration workload: one explored run (ExploreRun)
//	scenarios/replay   choice files and their replay through both
//	scenarios/suite, sweep, matrix, explore, shrink   the drivers of many runs
//
//	s, err := scenarios.Load("kip101-hw-lag")
//	if err == nil {
//		res, err = harness.Run(s, "hw", harness.Options{Seed: 1})
//	}
package scenarios
