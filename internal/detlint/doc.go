// Package detlint checks that the protocol code of kafkasim cannot escape
// the simulation: code under broker/ and model/ never starts goroutines,
// uses channels or sync, reads the wall clock or sleeps, draws from a
// global or crypto random source, or touches the real file system or
// network. The check is a test (lint_test.go) so that `go test ./...`
// enforces it; Check is exported so other tests can run it on any tree.
package detlint
