package sim

import "testing"

// mixStringBytewise is mixString as first written, a byte at a time: the
// definition the word-at-a-time version must keep, or every stored trace
// hash changes.
func mixStringBytewise(h uint64, s string) uint64 {
	h = mix(h, uint64(len(s)))
	var w uint64
	for i := 0; i < len(s); i++ {
		w = w<<8 | uint64(s[i])
		if i&7 == 7 {
			h = mix(h, w)
			w = 0
		}
	}
	return mix(h, w)
}

func TestMixStringKeepsItsDefinition(t *testing.T) {
	var b []byte
	for n := 0; n < 40; n++ {
		s := string(b)
		if got, want := mixString(hashSeed, s), mixStringBytewise(hashSeed, s); got != want {
			t.Fatalf("mixString of %d bytes = %x, the byte-at-a-time definition gives %x", n, got, want)
		}
		b = append(b, byte(n*37+11))
	}
}

// TestHotRecordsHashAsAdd holds the fast paths of trace_hot.go to add:
// the same records give the same hash, count and kept records, whether
// kept or not.
func TestHotRecordsHashAsAdd(t *testing.T) {
	names := []string{"", "b1", "driver", "a-longer-node-name", "FetchRequest"}
	for _, keep := range []bool{false, true} {
		for _, kinds := range []map[string]bool{nil, {"recv": true}} {
			var fast, slow Trace
			fast.setKeep(keep, kinds)
			slow.setKeep(keep, kinds)
			for i, a := range names {
				for j, b := range names {
					ev, now, node := uint64(i*7+j), Time(i*1000+j), NodeID(i-1)
					fast.addSend(ev, now, node, a, b, a+b, int64(i), int64(-j))
					slow.add(ev, now, node, a, "send", []Field{S("to", b), S("msg", a+b), I("size", int64(i)), I("latency", int64(-j))})
					fast.addRecv(ev, now, node, b, a, b+a)
					slow.add(ev, now, node, b, "recv", []Field{S("from", a), S("msg", b+a)})
					fast.addTimer(ev, now, node, a, b)
					slow.add(ev, now, node, a, "timer", []Field{S("name", b)})
					if fast.Hash() != slow.Hash() || fast.Len() != slow.Len() {
						t.Fatalf("keep=%v kinds=%v after (%q, %q): hash %x count %d, add gives %x %d", keep, kinds, a, b, fast.Hash(), fast.Len(), slow.Hash(), slow.Len())
					}
				}
			}
			if len(fast.Records()) != len(slow.Records()) {
				t.Fatalf("keep=%v kinds=%v: %d records kept, add keeps %d", keep, kinds, len(fast.Records()), len(slow.Records()))
			}
		}
	}
}

func TestShortOfRefusesLongStrings(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("shortOf of 8 bytes did not panic")
		}
	}()
	shortOf("12345678")
}

// TestAddFirstIsAdd: addFirst(first, fields) writes what add(first+fields)
// does.
func TestAddFirstIsAdd(t *testing.T) {
	for _, keep := range []bool{false, true} {
		var a, b Trace
		a.setKeep(keep, nil)
		b.setKeep(keep, nil)
		rest := []Field{I("leo", 3), S("rule", "hw")}
		for n := 0; n <= len(rest); n++ {
			a.addFirst(uint64(n), Time(n), 1, "b1", "append", S("partition", "t-0"), rest[:n])
			b.add(uint64(n), Time(n), 1, "b1", "append", append([]Field{S("partition", "t-0")}, rest[:n]...))
		}
		if a.Hash() != b.Hash() || a.Len() != b.Len() || len(a.Records()) != len(b.Records()) {
			t.Fatalf("keep=%v: addFirst gives %x/%d/%d, add %x/%d/%d", keep, a.Hash(), a.Len(), len(a.Records()), b.Hash(), b.Len(), len(b.Records()))
		}
		for i, r := range a.Records() {
			if r.String() != b.Records()[i].String() {
				t.Fatalf("record %d: %s, add keeps %s", i, r, b.Records()[i])
			}
		}
	}
}
