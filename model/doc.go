// Package model holds the sequential specifications the checkers judge runs
// against: a partition's log, a group's committed offsets, and their
// porcupine models. It never imports broker: a specification that shares
// code with the implementation cannot judge it.
package model
