// Package scenarios is the scenario script language and the harness that
// runs one script on a world.
//
// The language: a script (scripts/*.txt, embedded; Parse, Load, Builtin)
// names the cluster, topics, configuration, variants and a step list, with
// the verdict expected under each variant; it is checked whole before
// anything runs (Validate). The published failure traces (KIP-101,
// KIP-279, KAFKA-7164) are scripts with golden output in testdata.
//
// The harness: Script.Run builds the world of one variant and one seed,
// drives the scripted and swarm clients, runs the end phase (final reads,
// liveness) and the checkers, and returns a Result with the verdicts and
// the command that replays it.
//
// The drivers that run many scripts are beside it and import it, never the
// reverse: package suite (every scenario against its own expectations),
// package sweep (a grid of configurations over many seeds), package
// explore (the model-checking search) and package shrink (delta debugging
// of a failing run). The exploration workload itself (ExploreRun, one
// explored run) stays here: a saved choice file replays through it.
package scenarios
