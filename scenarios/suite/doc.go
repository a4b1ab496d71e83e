// Package suite runs scenarios under every variant over a few seeds and
// keeps what each run showed. Its one job is the suite: finding the
// scripts of the paths a user gives (Load: files, directories walked for
// *.txt), checking every script × variant before anything runs (Plan),
// splitting the cases across CI machines (Shard), and the loop over cases
// × seeds in parallel worlds (RunItems), each run summarised as it
// finishes (harness.Result.Summarize) so the memory stays flat in the
// seeds, and one Case per scenario × variant, in order whatever the
// parallelism; Case.Expected says whether the runs met the script's own
// expectations.
//
// It runs scripts through package harness and depends on it, never the
// reverse; reports renders the cases (table, JSON, JUnit), cmd/kafkasim
// parses the flags.
//
//	scripts, err := suite.Load([]string{"scenarios/"}, suite.DefaultExt)
//	items, err := suite.Plan(scripts, suite.Options{Seeds: 5, Parallel: 2})
//	cases, err := suite.RunItems(suite.Shard(items, 0, 2), suite.Options{Seeds: 5, Parallel: 2})
//	for _, c := range cases {
//		fmt.Println(c.Scenario, c.Variant, c.Expected())
//	}
package suite
