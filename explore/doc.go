// Package explore is a stateless model checker over the kernel's choice
// points (DESIGN.md, "Runs, replay, exploration"): every branch re-executes
// a world from the start with a prefix of choices (sim.Prefix), continues
// with the default alternative (index 0) up to the depth bound, and reports
// after each step a hash of the abstract state it reached. A state already
// reached at the same or a smaller depth is not expanded again, so the
// search visits each distinct abstract state once per depth at which it is
// first seen, and stops at the first run that reports a violation.
//
// The search is breadth-first over a queue of prefixes, run in fixed-size
// batches whose results are merged in queue order: the runs executed, the
// states counted and the violation found are the same for every value of
// Options.Parallel and GOMAXPROCS. The queue and the visited set can be
// saved to a file and the search resumed from it.
//
// What it simplifies: the hash is whatever the target reports (the Kafka
// target hashes replica logs, LEO, HW, epochs, ISR, on-disk checkpoints,
// the controller's decisions and the clients' outcomes, not the messages in
// flight or the timers), so pruning is exact only when that abstraction is;
// there is no partial-order reduction.
//
//	rep, err := explore.Search(func(c sim.Chooser, mark func(uint64)) (string, error) {
//		w, _ := sim.New(sim.Config{Chooser: c})
//		... // build the world, and after each step: mark(hashOfState)
//		return violation, nil
//	}, explore.Options{MaxRuns: 10000})
package explore
