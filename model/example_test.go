package model_test

import (
	"fmt"

	"github.com/anishathalye/porcupine"

	"github.com/kafkasim/kafkasim/model"
)

func ExampleModel() {
	k := model.Key{Topic: "t", Partition: 0}
	ops := []porcupine.Operation{
		{ClientId: 0, Call: 0, Return: 10,
			Input:  model.Input{Key: k, Kind: model.Append, Value: "m1"},
			Output: model.Output{Offset: 0}},
		{ClientId: 1, Call: 5, Return: 20,
			Input:  model.Input{Key: k, Kind: model.Read, Offset: 0},
			Output: model.Output{Records: []model.Record{{Offset: 0, Value: "m1"}}}},
	}
	fmt.Println(porcupine.CheckOperations(model.Model(), ops))
	// Output: true
}
