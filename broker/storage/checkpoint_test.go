package storage

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestOffsetCheckpointFormat(t *testing.T) {
	entries := []PartitionOffset{{TopicPartition{"tp1", 1}, 2}, {TopicPartition{"tp1", 0}, 1}}
	got := string(FormatOffsetCheckpoint(entries))
	if want := "0\n2\ntp1 0 1\ntp1 1 2\n"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	back, err := ParseOffsetCheckpoint("f", []byte(got))
	if err != nil || !reflect.DeepEqual(back, []PartitionOffset{entries[1], entries[0]}) {
		t.Fatalf("parse: %v %v", back, err)
	}
	if got := string(FormatEpochCheckpoint([]EpochEntry{{0, 0}})); got != "0\n1\n0 0\n" {
		t.Fatalf("epoch checkpoint %q", got)
	}
	e, err := ParseEpochCheckpoint("f", []byte("0\n2\n0 1\n1 2\n"))
	if err != nil || !reflect.DeepEqual(e, []EpochEntry{{0, 1}, {1, 2}}) {
		t.Fatalf("parse epochs: %v %v", e, err)
	}
}

func TestCheckpointParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		epoch      bool
		line       int64
		want       string
	}{
		{"empty file", "", false, 0, ""},
		{"version only", "0\n", false, 0, ""},
		{"wrong version", "1\n0\n", false, 1, "unrecognised version 1"},
		{"bad version", "x\n", false, 1, "malformed line \"x\""},
		{"bad count", "0\n-\n", false, 2, "entry count"},
		{"count mismatch", "0\n2\nt 0 1\n", false, 3, "expected 2 entries, but found 1"},
		{"too many", "0\n0\nt 0 1\n", false, 3, "expected 0 entries, but found 1"},
		{"two fields", "0\n1\nt 0\n", false, 3, "want 3 fields"},
		{"bad partition", "0\n1\nt x 1\n", false, 3, "malformed line"},
		{"bad offset", "0\n1\nt 0 9223372036854775808\n", false, 3, "malformed line"},
		{"leading space", "0\n1\n 0 1\n", true, 3, "malformed line"},
		{"epoch three fields", "0\n1\n0 1 2\n", true, 3, "want 2 fields"},
		{"crlf ok", "0\r\n1\r\n0 1\r\n", true, 0, ""},
	} {
		var err error
		if tc.epoch {
			_, err = ParseEpochCheckpoint("ckpt", []byte(tc.data))
		} else {
			_, err = ParseOffsetCheckpoint("ckpt", []byte(tc.data))
		}
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		var ce *CorruptError
		if !errors.As(err, &ce) || ce.File != "ckpt" || !ce.Line || ce.Position != tc.line || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want line %d and %q", tc.name, err, tc.line, tc.want)
		}
	}
}

// TestCheckpointWriteIsAtomic: a power loss at any point of a checkpoint
// write leaves the old content or the new one.
func TestCheckpointWriteIsAtomic(t *testing.T) {
	for keep := 0; keep < 8; keep++ {
		d := newDisk(t, nil)
		if err := writeFileAtomic(d, "/d/f", []byte("0\n0\n")); err != nil {
			t.Fatal(err)
		}
		newContent := FormatOffsetCheckpoint([]PartitionOffset{{TopicPartition{"a", 1}, 5}})
		// Stop the write after `keep` operations by crashing a copy: the disk
		// keeps no unsynced write, so every intermediate state is tested by
		// writing up to a point and losing power.
		steps := []func() error{
			func() error { return d.Create("/d/f.tmp") },
			func() error { return d.Append("/d/f.tmp", newContent) },
			func() error { return d.Sync("/d/f.tmp") },
			func() error { return d.Rename("/d/f.tmp", "/d/f") },
			func() error { return d.SyncDir("/d") },
		}
		for i := 0; i < keep && i < len(steps); i++ {
			if err := steps[i](); err != nil {
				t.Fatal(err)
			}
		}
		d.PowerLoss()
		got, err := d.ReadFile("/d/f")
		if err != nil || (string(got) != "0\n0\n" && string(got) != string(newContent)) {
			t.Fatalf("after %d steps: %q %v", keep, got, err)
		}
		if err := writeFileAtomic(d, "/d/f", newContent); err != nil {
			t.Fatalf("rewrite over leftover tmp: %v", err)
		}
	}
}

func FuzzParseCheckpoint(f *testing.F) {
	f.Add([]byte("0\n2\ntp1 0 1\ntp1 1 2\n"))
	f.Add([]byte("0\n2\n0 1\n1 2\n"))
	f.Add([]byte("0\n1\n0 0\n"))
	f.Add([]byte("1\n0\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		if es, err := ParseOffsetCheckpoint("f", data); err == nil {
			again, err := ParseOffsetCheckpoint("f", FormatOffsetCheckpoint(es))
			if err != nil || len(again) != len(es) {
				t.Fatalf("offset checkpoint does not round-trip: %v", err)
			}
		} else if !errors.As(err, new(*CorruptError)) {
			t.Fatalf("error %v is not a *CorruptError", err)
		}
		if es, err := ParseEpochCheckpoint("f", data); err == nil {
			again, err := ParseEpochCheckpoint("f", FormatEpochCheckpoint(es))
			if err != nil || !reflect.DeepEqual(again, es) && len(es) > 0 {
				t.Fatalf("epoch checkpoint does not round-trip: %v", err)
			}
		} else if !errors.As(err, new(*CorruptError)) {
			t.Fatalf("error %v is not a *CorruptError", err)
		}
	})
}
