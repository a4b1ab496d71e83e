package serve

import (
	"bytes"
	"testing"
)

// FuzzReadTape: no input panics the tape reader, and what it reads of an
// entry stays within what the tape may hold.
func FuzzReadTape(f *testing.F) {
	var b bytes.Buffer
	tw := newTapeWriter(&b, TapeHeader{Version: 1, Variant: "default", Seed: 1})
	tw.write(TapeEntry{Event: 1, Time: 5, Kind: kindAccept, Conn: 1})
	tw.write(TapeEntry{Event: 2, Time: 9, Kind: kindFrame, Conn: 1, Frame: []byte{0, 0, 0, 2, 0, 18}})
	tw.write(TapeEntry{Event: 3, Time: 11, Kind: kindCommand, Line: "crash b0"})
	if err := tw.flush(); err == nil {
		f.Add(b.Bytes())
	}
	f.Add([]byte(`{"kafkasim_tape":1}` + "\n" + `{"kind":"frame","frame":"AAAA"}` + "\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		_, entries, err := ReadTape(bytes.NewReader(in))
		if err != nil {
			return
		}
		for _, e := range entries {
			if len(e.Frame) > 2*MaxFrame {
				t.Fatalf("a frame of %d bytes read", len(e.Frame))
			}
		}
	})
}
