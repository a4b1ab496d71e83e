// Package matrix runs scenarios under Kafka releases: each scenario's
// workload (one variant: the one -variant names, else its first) under
// each version label (0.10.2 ... 4.1, 3.9-zk, 3.9-kraft), N seeds per
// cell, and aggregates the runs into one Row per (scenario, release) — the
// table "which Kafka loses what" — each row saying what it ran (Row.RanAs:
// the variant and its settings).
//
// Its one job is the matrix: the labels and what they set (Release,
// ParseRelease, VersionKeys: versions.go), the cells and their shards
// (Plan, Jobs), the run records of runs.jsonl (RunRecord, a sweep record
// with the cell's scenario and version) and the rows (Aggregate, with the
// Wilson and bootstrap intervals of scenarios/sweep). reports renders the
// rows; cmd/kafkasim parses the flags and journals the records.
//
//	p, err := matrix.NewPlan(&matrix.Spec{Scenarios: []string{"kip101-hw-lag"}, Versions: matrix.DefaultVersions, Seeds: 5})
//	var recs []matrix.RunRecord
//	_, _, err = p.Run(matrix.Options{Parallel: 2, OnRun: func(r matrix.RunRecord) error { recs = append(recs, r); return nil }})
//	rows := p.Aggregate(matrix.SortRecords(recs))
package matrix
