// Package checkers records client histories (Jepsen style: invoke, ok,
// fail, info) and judges them: linearizability with porcupine, acknowledged
// write loss, replica divergence, HW and LEO invariants, consumer anomalies
// and group invariants. Every verdict is ok, violation or unknown, with
// evidence.
package checkers
