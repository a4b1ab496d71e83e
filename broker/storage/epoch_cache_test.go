package storage

import (
	"reflect"
	"testing"
)

type ee = EpochEntry

func cacheWith(t *testing.T, entries ...ee) *LeaderEpochFileCache {
	t.Helper()
	c, _ := NewLeaderEpochFileCache(nil, "")
	c.entries = append([]EpochEntry(nil), entries...)
	return c
}

// TestEpochCacheAssign covers every branch of LeaderEpochFileCache.assign.
func TestEpochCacheAssign(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  []ee
		epoch   int32
		start   int64
		after   []ee
		wantErr bool
	}{
		{"empty cache appends", nil, 0, 0, []ee{{0, 0}}, false},
		{"new epoch appends", []ee{{0, 0}}, 1, 5, []ee{{0, 0}, {1, 5}}, false},
		{"same epoch later offset is a no-op", []ee{{2, 5}}, 2, 9, []ee{{2, 5}}, false},
		{"same epoch same offset is a no-op", []ee{{2, 5}}, 2, 5, []ee{{2, 5}}, false},
		{"same epoch earlier offset replaces", []ee{{1, 0}, {2, 5}}, 2, 3, []ee{{1, 0}, {2, 3}}, false},
		{"lower epoch removes higher epochs", []ee{{1, 0}, {3, 5}, {4, 8}}, 2, 10, []ee{{1, 0}, {2, 10}}, false},
		{"earlier offset removes later starts", []ee{{1, 0}, {2, 5}, {3, 8}}, 4, 5, []ee{{1, 0}, {4, 5}}, false},
		{"both columns remove", []ee{{1, 0}, {2, 5}}, 1, 0, []ee{{1, 0}}, false},
		{"replaces everything", []ee{{1, 3}, {2, 5}}, 0, 0, []ee{{0, 0}}, false},
		{"negative epoch rejected", []ee{{1, 0}}, -1, 5, []ee{{1, 0}}, true},
		{"negative offset rejected", []ee{{1, 0}}, 2, -1, []ee{{1, 0}}, true},
	} {
		c := cacheWith(t, tc.before...)
		err := c.Assign(tc.epoch, tc.start)
		if (err != nil) != tc.wantErr || !reflect.DeepEqual(c.Entries(), tc.after) && len(tc.after)+len(c.Entries()) > 0 {
			t.Errorf("%s: assign(%d, %d) on %v = %v (err %v), want %v", tc.name, tc.epoch, tc.start, tc.before, c.Entries(), err, tc.after)
		}
	}
}

// TestEpochCacheEndOffsetFor covers every branch of endOffsetFor.
func TestEpochCacheEndOffsetFor(t *testing.T) {
	entries := []ee{{2, 10}, {4, 20}, {7, 30}}
	for _, tc := range []struct {
		name      string
		entries   []ee
		requested int32
		epoch     int32
		end       int64
	}{
		{"undefined epoch", entries, -1, -1, -1},
		{"empty cache", nil, 3, -1, -1},
		{"latest epoch answers LEO", entries, 7, 7, 100},
		{"requested above latest", entries, 8, -1, -1},
		{"requested below first", entries, 1, 1, 10},
		{"exact middle epoch", entries, 2, 2, 20},
		{"gap epoch takes floor", entries, 5, 4, 30},
		{"gap epoch before second", entries, 3, 2, 20},
	} {
		c := cacheWith(t, tc.entries...)
		e, o := c.EndOffsetFor(tc.requested, 100)
		if e != tc.epoch || o != tc.end {
			t.Errorf("%s: endOffsetFor(%d) = (%d, %d), want (%d, %d)", tc.name, tc.requested, e, o, tc.epoch, tc.end)
		}
	}
}

// TestEpochCacheTruncate covers truncateFromEnd and truncateFromStart.
func TestEpochCacheTruncate(t *testing.T) {
	entries := []ee{{2, 10}, {4, 20}, {7, 30}}
	for _, tc := range []struct {
		name   string
		end    bool
		offset int64
		after  []ee
	}{
		{"end: past the last start keeps all", true, 31, entries},
		{"end: at the last start removes it", true, 30, entries[:2]},
		{"end: inside removes later", true, 25, entries[:2]},
		{"end: at a middle start", true, 20, entries[:1]},
		{"end: below everything", true, 5, nil},
		{"end: negative is a no-op", true, -1, entries},
		{"start: below the first keeps all", false, 5, entries},
		{"start: at the first start rewrites it", false, 10, entries},
		{"start: inside the first moves its start", false, 15, []ee{{2, 15}, {4, 20}, {7, 30}}},
		{"start: at a middle start drops earlier", false, 20, []ee{{4, 20}, {7, 30}}},
		{"start: past the last keeps the last", false, 50, []ee{{7, 50}}},
	} {
		c := cacheWith(t, entries...)
		var err error
		if tc.end {
			err = c.TruncateFromEnd(tc.offset)
		} else {
			err = c.TruncateFromStart(tc.offset)
		}
		if err != nil || !reflect.DeepEqual(c.Entries(), tc.after) && len(tc.after)+len(c.Entries()) > 0 {
			t.Errorf("%s: on %v at %d = %v (err %v), want %v", tc.name, entries, tc.offset, c.Entries(), err, tc.after)
		}
	}
	if c := cacheWith(t); c.TruncateFromEnd(0) != nil || c.TruncateFromStart(0) != nil || len(c.Entries()) != 0 {
		t.Errorf("truncating an empty cache changed it")
	}
}

func TestEpochCacheEpochForOffset(t *testing.T) {
	c := cacheWith(t, ee{2, 10}, ee{4, 20})
	for off, want := range map[int64]int32{5: -1, 10: 2, 19: 2, 20: 4, 99: 4} {
		if got := c.EpochForOffset(off); got != want {
			t.Errorf("epochForOffset(%d) = %d, want %d", off, got, want)
		}
	}
}

// TestEpochCachePersists: every change is in the checkpoint file, in
// Kafka's format, and a bad file is reported with its line.
func TestEpochCachePersists(t *testing.T) {
	d := newDisk(t, nil)
	c, err := NewLeaderEpochFileCache(d, "/p/leader-epoch-checkpoint")
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range []ee{{0, 0}, {1, 2}} {
		if err := c.Assign(a.Epoch, a.StartOffset); err != nil {
			t.Fatal(err)
		}
	}
	d.PowerLoss()
	b, _ := d.ReadFile("/p/leader-epoch-checkpoint")
	if string(b) != "0\n2\n0 0\n1 2\n" {
		t.Fatalf("checkpoint %q", b)
	}
	c2, err := NewLeaderEpochFileCache(d, "/p/leader-epoch-checkpoint")
	if err != nil || !reflect.DeepEqual(c2.Entries(), []ee{{0, 0}, {1, 2}}) {
		t.Fatalf("reload: %v %v", c2, err)
	}
	if err := writeFileAtomic(d, "/p/leader-epoch-checkpoint", []byte("0\n2\n3 5\n1 6\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewLeaderEpochFileCache(d, "/p/leader-epoch-checkpoint"); err == nil {
		t.Fatal("a non-monotonic checkpoint loads")
	}
}
