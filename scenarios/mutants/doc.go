// Package mutants measures kafkasim's detection power: it runs the
// scenarios that can reach each planted bug of package broker/mutant with
// that bug on, over many seeds, and records which checkers catch it and
// how soon (`kafkasim mutants`).
package mutants
