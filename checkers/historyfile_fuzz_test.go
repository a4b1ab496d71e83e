package checkers

import (
	"bytes"
	"testing"
)

// FuzzReadHistoryFile: no input panics the history-file reader (check's
// input), and a file it reads writes back to one it reads the same.
func FuzzReadHistoryFile(f *testing.F) {
	var b bytes.Buffer
	h := HistoryFile{Source: "fuzz", History: History{Ops: []Op{{Process: "p", Kind: Send, Topic: "t", Value: "v", Outcome: OK, Offset: 3}}}}
	if err := WriteHistoryFile(&b, h); err == nil {
		f.Add(b.Bytes())
	}
	f.Add([]byte("{}\n"))
	f.Add([]byte(`{"kafkasim_history":1}` + "\n" + `{"op":{}}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		hf, err := ReadHistoryFile(bytes.NewReader(in))
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := WriteHistoryFile(&out, hf); err != nil {
			return // a history the writer refuses is not ours to round-trip
		}
		again, err := ReadHistoryFile(&out)
		if err != nil {
			t.Fatalf("a written history does not read back: %v", err)
		}
		if len(again.History.Ops) != len(hf.History.Ops) {
			t.Fatalf("read back %d ops, was %d", len(again.History.Ops), len(hf.History.Ops))
		}
	})
}
