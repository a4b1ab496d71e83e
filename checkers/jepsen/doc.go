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
// cases.go, cycles.go) and returns one checkers.Verdict per Jepsen error
// type, named as Jepsen names them (lost-write, duplicate, poll-skip, G1a,
// G0, G1c, unseen, ...), so exit codes and -json work as for kafkasim's own
// histories. Unjudged returns the verdicts of the kafkasim checkers that
// need replica state a Jepsen history does not hold (final logs, a live
// monitor): Unknown, with the reason (`kafkasim check` leaves them out of
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
// int-poll checks); unseen (Jepsen's final :unseen, one anomaly with the
// count per key); and the dependency graph Jepsen hands Elle (ww from each
// key's log order with :ww-deps, wr from reads, Elle's realtime order),
// searched for G0, G1c, G0-realtime and G1c-realtime per strongly
// connected component in Elle's order, and empty-transaction-graph.
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
//   - Elle, in part (cycles.go): per component and type, the shortest
//     cycle through the first edge of the kind the type needs, not Elle's
//     breadth-first search of every op; a search past its step budget is
//     Unknown (Elle's cycle-search-timeout). Elle's cycle-exists fallbacks
//     (PL-1-cycle-exists, ...) are not reported: they only restate that
//     some component has a cycle, which the named cycles show. :ww-deps is a Jepsen test option a history does
//     not record: on by default (Options, -ww-deps), as in jepsen-io/redpanda
//     (off only with --no-ww-deps), so G0 and ww-borne G1c are reported,
//     permitted as Jepsen allows them. G0-process and
//     G1c-process are kafkasim's addition over each process's ok ops (Elle
//     gives Jepsen only the realtime order, which contains them).
//     Jepsen's other outputs (realtime-lag, consume-counts, plots) are
//     measurements, not error types, and are not computed.
//   - unseen is a violation as in Jepsen, with the note that an unseen
//     value may be late rather than lost: only final polls that caught up
//     can tell, and a history file does not say whether they did. It is
//     Unknown instead when some ok poll was written without its result
//     ([:poll], where a poll that read nothing is [:poll {}]): Jepsen's
//     clients never complete a poll so, and Maelstrom's history.edn writes
//     its final polls so while its jepsen.log shows them reading every key
//     to its end, and its results.edn has no :unseen. Jepsen's checker run
//     on such a file would report :unseen; on the run itself it did not.
//   - Where Jepsen picks an arbitrary value (one of several at a
//     conflicting offset), this package picks the smallest, so output is
//     deterministic.
//   - Keys are integers, strings or keywords; values those (Jepsen's
//     values are unique integers per key, its tests' keywords) or other
//     EDN scalars, compared as written (2N is 2). Ops whose :process is not an
//     integer (:nemesis) are skipped, as Jepsen's client-ops does; :f
//     other than :send, :poll, :txn, :assign and :subscribe (:crash,
//     :debug-topic-partitions) take no part.
//   - What Jepsen allows (allowed-error-types) is marked Permitted:
//     int-send-skip and G0 always, G1c through a ww edge (Jepsen allows
//     G1c with :ww-deps; a wr-only one is a read-committed violation),
//     poll-skip and nonmonotonic-poll when the history subscribes
//     (rebalances are expected). As everywhere in
//     kafkasim, a permitted anomaly still makes its verdict a violation.
package jepsen
