// Package workload is the exploration workload: one explored run of a
// scenario's cluster, its script's steps replaced by a bounded sequence of
// actions each picked through the world's chooser (explore.go; the KRaft
// quorum's in explore_kraft.go), and the schedule of such a run written
// back as a scenario script (schedule_script.go).
//
// It drives a harness.Runner (the world, the cluster, the observer, the
// step executor and the judge of package harness) action by action, so it
// imports harness and scenarios, never the reverse. Package explore (the
// search) calls ExploreRun once per explored run; package replay replays a
// saved explored run through it; cmd/kafkasim parses the flags.
//
//	p := workload.ExploreParams{Depth: 4, Records: 1}
//	res, err := workload.ExploreRun(s, "hw", p, harness.Options{Chooser: c}, nil)
package workload
