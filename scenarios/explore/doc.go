// Package explore model-checks a scenario's cluster. Its one job is the
// search: it hands the exploration workload (workload.ExploreRun) to the
// generic stateless search engine, the top-level package explore, judges
// every explored run by the chosen checkers, and returns the first
// violation replayed, with the choice file that replays it.
//
// It depends on scenarios, harness, workload, replay and the engine, never
// the reverse; cmd/kafkasim parses the flags and prints.
//
//	ex, err := explore.Run(s, explore.Config{Variant: "hw",
//		Params: workload.ExploreParams{Depth: 8, Records: 2}, Parallel: 2})
//	if err == nil && ex.Found != nil {
//		err = ex.File.Save("violation.choices")
//	}
package explore
