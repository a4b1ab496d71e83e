// Package replay is the choice file (a run's every chooser decision, with
// the header that says what it was recorded from) and its replay: exactly
// (RunChoiceFile, which checks the trace hash) or under another variant of
// the scenario (RunChoiceFileUnder: does kip279 survive the schedule that
// broke hw?). A recorded script run replays through harness.Run, a
// recorded explored run through workload.ExploreRun.
//
// It imports scenarios, harness and workload, never the reverse; package
// explore saves the violation it finds as a choice file, package shrink
// reduces one, cmd/kafkasim replays one.
//
//	f, err := replay.LoadChoiceFile("violation.choices")
//	if err == nil {
//		res, err = replay.RunChoiceFile(s, f, nil, harness.Options{KeepTrace: true})
//	}
package replay
