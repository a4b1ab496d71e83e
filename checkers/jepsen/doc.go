// Package jepsen judges histories recorded by Jepsen's Kafka workload
// (jepsen.tests.kafka, also run by the Redpanda, Bufstream and Maelstrom
// "kafka" tests), so `kafkasim check -format jepsen` can re-judge a real
// cluster's history with the anomalies kafkasim reports for simulated runs.
//
// A history is EDN, one operation map per line:
//
//	{:type :invoke, :f :send, :value [[:send 3 5]], :process 0, :index 10}
//	{:type :ok, :f :send, :value [[:send 3 [12 5]]], :process 0, :index 11}
//	{:type :ok, :f :poll, :value [[:poll {3 [[11 4] [12 5]]}]], :process 1, :index 13}
//
// ReadHistory parses it (parse.go); Check runs the analyses (analysis.go,
// cases.go) and returns one checkers.Verdict per Jepsen error type, named as
// Jepsen names them (lost-write, duplicate, poll-skip, G1a, ...), so exit
// codes and -json work as for kafkasim's own histories. Unjudged returns
// the verdicts of the kafkasim checkers that need replica state a Jepsen
// history does not hold (final logs, a live monitor), and of Elle's
// cycles: Unknown, with the reason (`kafkasim check` leaves them out of
// its exit code, since they are unknown for every Jepsen history).
//
// What follows jepsen.tests.kafka (jepsen-io/jepsen, reference
// checkers.md §2.1) exactly: the version order per key (sends of ops that
// must have committed, and every poll, :info and :fail ones included),
// dense indexes over it, and the definitions of inconsistent-offsets,
// duplicate, lost-write, G1a, precommitted-read, poll-skip,
// nonmonotonic-poll, nonmonotonic-send and the int- forms, including
// Jepsen's quirks (a key polled with no records still becomes the
// process's last read of that key; :rebalance-log exempts keys from the
// int-poll checks).
//
// What it shares with package checkers: the verdict (checkers.Verdict,
// Anomaly, Result, NewVerdict), so reports, -json and exit codes are the
// same. It does not convert the history into a checkers.History to run
// Duplicates, Ordering or Consumers: their definitions differ from
// Jepsen's (they count final logs and per-group deliveries, judge sends
// by invocation time and producer configuration, and know skipped offsets
// from acknowledged sends only), while Jepsen's are over the version order
// built here, with :info and :fail ops counted as above.
//
// What it simplifies, and why:
//   - No Elle: the ww/wr dependency graph and its cycles (G0, G1c, the
//     PL- anomalies) are not searched. They need Elle's cycle search over
//     the whole history; the anomalies above are the per-key ones Jepsen
//     reports without it. The "cycles" verdict of Unjudged says so.
//     Jepsen's other outputs (realtime-lag, consume-counts, plots) are
//     measurements, not error types, and are not computed.
//   - unseen is Unknown, not a violation: Jepsen counts acknowledged values
//     never polled by the end as invalid, but only the final polls can tell
//     a lost value from a late one, and a history file does not say
//     whether they caught up. A value below what some poll read is judged
//     by lost-write anyway.
//   - Where Jepsen picks an arbitrary value (one of several at a
//     conflicting offset), this package picks the smallest, so output is
//     deterministic.
//   - Keys are integers, strings or keywords, values integers (Jepsen's
//     values are unique integers per key). Ops whose :process is not an
//     integer (:nemesis) are skipped, as Jepsen's client-ops does; :f
//     other than :send, :poll, :txn, :assign and :subscribe (:crash,
//     :debug-topic-partitions) take no part.
//   - What Jepsen allows (allowed-error-types) is marked Permitted:
//     int-send-skip always, poll-skip and nonmonotonic-poll when the
//     history subscribes (rebalances are expected). As everywhere in
//     kafkasim, a permitted anomaly still makes its verdict a violation.
package jepsen
