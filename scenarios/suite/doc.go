// Package suite runs every scenario under every variant over a few seeds
// and keeps what each run showed. Its one job is the suite: the loop over
// scripts × variants × seeds in parallel worlds, each run summarised as it
// finishes (harness.Result.Summarize) so the memory stays flat in the
// seeds, and one Case per scenario × variant, in order whatever the
// parallelism; Case.Expected says whether the runs met the script's own
// expectations.
//
// It runs scripts through package harness and depends on it, never the
// reverse; reports renders the cases (table, JSON, JUnit), cmd/kafkasim
// parses the flags.
//
//	all, err := scenarios.All()
//	cases, err := suite.Run(all, suite.Options{Seeds: 5, Parallel: 2})
//	for _, c := range cases {
//		fmt.Println(c.Scenario, c.Variant, c.Expected())
//	}
package suite
