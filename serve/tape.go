package serve

// This file is the tape: the arrival order of everything that reached a
// served world from outside — connections accepted and closed, request
// frames, live commands — each with the world's event count and virtual
// time when it was applied. A served run is a function of its scenario,
// variant, seed, -set and tape, so `kafkasim replay -tape FILE` reruns the
// server's side of it, without the clients, to the same trace hash.
//
// Format: JSON lines. The first is the header
//   {"kafkasim_tape":1,"scenario":"cluster","variant":"default","seed":1,"set":{...},"faults":"fault-every=2s crash=0.3 ..."}
// then one line per input:
//   {"event":812,"time":3021000000,"kind":"frame","conn":2,"frame":"AAAA..."}
// kind is accept (conn, broker), frame (conn, frame: the request frame
// without its size prefix, base64), close (conn) or command (line).

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kafkasim/kafkasim/sim"
)

// TapeVersion is the tape format's version.
const TapeVersion = 1

// TapeHeader is a tape's first line: what the served run ran.
type TapeHeader struct {
	Version  int               `json:"kafkasim_tape"`
	Scenario string            `json:"scenario"` // a name, a script path, or "" for the built-in cluster
	Variant  string            `json:"variant"`
	Seed     uint64            `json:"seed"`
	Set      map[string]string `json:"set,omitempty"`
	// Faults is the fault schedule's profile (serve -faults), as
	// harness.FaultProfile.String renders it; "" for none.
	Faults string `json:"faults,omitempty"`
}

// TapeEntry is one input, as it was applied.
type TapeEntry struct {
	Event  uint64   `json:"event"`
	Time   sim.Time `json:"time"`
	Kind   string   `json:"kind"`
	Conn   int      `json:"conn,omitempty"`
	Broker int32    `json:"broker,omitempty"`
	Frame  []byte   `json:"frame,omitempty"`
	Line   string   `json:"line,omitempty"`
}

// The input kinds.
const (
	kindAccept  = "accept"
	kindFrame   = "frame"
	kindClose   = "close"
	kindCommand = "command"
)

// ReadTape reads a whole tape. Errors name the line.
func ReadTape(r io.Reader) (TapeHeader, []TapeEntry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 2*MaxFrame)
	var h TapeHeader
	var entries []TapeEntry
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			if err := json.Unmarshal(sc.Bytes(), &h); err != nil {
				return h, nil, fmt.Errorf("line 1: not a kafkasim tape header: %v", err)
			}
			if h.Version != TapeVersion {
				return h, nil, fmt.Errorf("line 1: tape version %d: this kafkasim reads version %d", h.Version, TapeVersion)
			}
			continue
		}
		var e TapeEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			return h, nil, fmt.Errorf("line %d: %v", line, err)
		}
		switch e.Kind {
		case kindAccept, kindFrame, kindClose, kindCommand:
		default:
			return h, nil, fmt.Errorf("line %d: kind %q: allowed accept, frame, close, command", line, e.Kind)
		}
		if n := len(entries); n > 0 && (e.Event < entries[n-1].Event || e.Time < entries[n-1].Time) {
			return h, nil, fmt.Errorf("line %d: event %d at %v comes before the previous line's event %d at %v", line, e.Event, e.Time, entries[n-1].Event, entries[n-1].Time)
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return h, nil, fmt.Errorf("line %d: %v", line+1, err)
	}
	if line == 0 {
		return h, nil, fmt.Errorf("empty: a tape starts with its header line")
	}
	return h, entries, nil
}

// tapeWriter writes a tape as a served run goes.
type tapeWriter struct {
	w   *bufio.Writer
	enc *json.Encoder
	err error
}

func newTapeWriter(w io.Writer, h TapeHeader) *tapeWriter {
	bw := bufio.NewWriter(w)
	t := &tapeWriter{w: bw, enc: json.NewEncoder(bw)}
	t.err = t.enc.Encode(h)
	return t
}

func (t *tapeWriter) write(e TapeEntry) {
	if t == nil || t.err != nil {
		return
	}
	t.err = t.enc.Encode(e)
}

func (t *tapeWriter) flush() error {
	if t == nil {
		return nil
	}
	if t.err != nil {
		return t.err
	}
	return t.w.Flush()
}
