// Package model holds the sequential specification the checkers judge runs
// against: a Kafka partition's committed log (Log) and its porcupine model
// (Model), partitioned per topic-partition (Key). Operations are appends
// (acknowledged at an offset, or with an unknown outcome), reads of the
// records at an offset, and high-watermark reads; Step says which are legal.
//
// It never imports broker: a specification that shares code with the
// implementation cannot judge it. Like the protocol code, it never starts
// goroutines, reads a clock or draws random numbers (internal/detlint checks
// it); porcupine itself runs its search in goroutines, outside this package.
//
// A short example, checking a two-client history of one partition:
//
//	k := model.Key{Topic: "t", Partition: 0}
//	ops := []porcupine.Operation{
//		{ClientId: 0, Call: 0, Return: 10,
//			Input:  model.Input{Key: k, Kind: model.Append, Value: "m1"},
//			Output: model.Output{Offset: 0}},
//		{ClientId: 1, Call: 5, Return: 20,
//			Input:  model.Input{Key: k, Kind: model.Read, Offset: 0},
//			Output: model.Output{Records: []model.Record{{Offset: 0, Value: "m1"}}}},
//	}
//	ok := porcupine.CheckOperations(model.Model(), ops) // true
package model
