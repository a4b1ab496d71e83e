// Package shrink reduces a failing run to a short one. Its one job is delta
// debugging: it replays a run's recorded choices with deviations from the
// default set back to it, chunk by chunk, faults first, keeping each
// reduction under which the same checker still fails, and returns the
// result as a choice file that replays exactly (replay.RunChoiceFile).
//
// It runs scripts through package harness and replays through package
// replay, and depends on them, never the reverse; cmd/kafkasim parses the
// flags and prints.
//
//	sh, err := shrink.Run(s, shrink.Config{Variant: "hw-unsafe", Seed: 5, Checker: "invariants"})
//	if err == nil {
//		err = sh.File.Save("shrunk.choices")
//	}
package shrink
