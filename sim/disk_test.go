package sim_test

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"pgregory.net/rapid"
)

// mwrite is the model's unsynced write: bytes at an offset, or a truncate.
type mwrite struct {
	off   int64
	b     []byte
	trunc bool
}

func mapply(dst []byte, w mwrite) []byte {
	dst = slices.Clone(dst)
	if w.trunc {
		if w.off <= int64(len(dst)) {
			return dst[:w.off]
		}
		return append(dst, make([]byte, w.off-int64(len(dst)))...)
	}
	for int64(len(dst)) < w.off+int64(len(w.b)) {
		dst = append(dst, 0)
	}
	copy(dst[w.off:], w.b)
	return dst
}

// mfile is the model of one file: what a sync made durable and what came after.
type mfile struct {
	id      int
	durable []byte
	pending []mwrite
}

func (f *mfile) current() []byte {
	b := f.durable
	for _, w := range f.pending {
		b = mapply(b, w)
	}
	return b
}

type mns struct {
	rename   bool
	remove   bool
	name, to string
	f        *mfile
}

// diskModel is the specification the property test holds the disk to.
type diskModel struct {
	files   map[string]*mfile
	durable map[string]*mfile
	pending []mns
	nextID  int
}

func applyNS(ns map[string]*mfile, op mns) {
	switch {
	case op.rename:
		delete(ns, op.name)
		ns[op.to] = op.f
	case op.remove:
		delete(ns, op.name)
	default:
		ns[op.name] = op.f
	}
}

var names = []string{"d/a", "d/b", "d/c"}

// TestDiskProperties checks, after any sequence of writes, syncs, renames
// and power losses: what was synced is intact; what was not is a prefix of
// the writes, the first write not kept possibly torn; and the namespace is
// the durable one plus a prefix of later changes, so a rename is atomic.
func TestDiskProperties(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		seed := rapid.Uint64().Draw(t, "seed")
		d, err := sim.NewDisk(sim.DiskConfig{TearProbability: 0.5}, sim.NewRandom(seed))
		if err != nil {
			t.Fatal(err)
		}
		m := &diskModel{files: map[string]*mfile{}, durable: map[string]*mfile{}}
		existing := func() []string {
			var out []string
			for _, n := range names {
				if m.files[n] != nil {
					out = append(out, n)
				}
			}
			return out
		}
		check := func() {
			for _, n := range names {
				f := m.files[n]
				if f == nil {
					if d.Exists(n) {
						t.Fatalf("%s exists on disk but not in the model", n)
					}
					continue
				}
				got, err := d.ReadFile(n)
				if err != nil {
					t.Fatalf("read %s: %v", n, err)
				}
				if want := f.current(); !bytes.Equal(got, want) {
					t.Fatalf("%s: disk has %q, model %q", n, got, want)
				}
			}
		}
		t.Repeat(map[string]func(*rapid.T){
			"create": func(t *rapid.T) {
				n := rapid.SampledFrom(names).Draw(t, "name")
				err := d.Create(n)
				if m.files[n] != nil {
					if !errors.Is(err, fs.ErrExist) {
						t.Fatalf("create of existing %s: %v", n, err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				m.nextID++
				f := &mfile{id: m.nextID}
				m.files[n] = f
				m.pending = append(m.pending, mns{name: n, f: f})
			},
			"append": func(t *rapid.T) {
				ex := existing()
				if len(ex) == 0 {
					t.Skip()
				}
				n := rapid.SampledFrom(ex).Draw(t, "name")
				b := rapid.SliceOfN(rapid.Byte(), 1, 8).Draw(t, "data")
				if err := d.Append(n, b); err != nil {
					t.Fatal(err)
				}
				f := m.files[n]
				f.pending = append(f.pending, mwrite{off: int64(len(f.current())), b: b})
			},
			"writeAt": func(t *rapid.T) {
				ex := existing()
				if len(ex) == 0 {
					t.Skip()
				}
				n := rapid.SampledFrom(ex).Draw(t, "name")
				f := m.files[n]
				off := rapid.Int64Range(0, int64(len(f.current()))+2).Draw(t, "off")
				b := rapid.SliceOfN(rapid.Byte(), 1, 6).Draw(t, "data")
				if err := d.WriteAt(n, off, b); err != nil {
					t.Fatal(err)
				}
				f.pending = append(f.pending, mwrite{off: off, b: b})
			},
			"truncate": func(t *rapid.T) {
				ex := existing()
				if len(ex) == 0 {
					t.Skip()
				}
				n := rapid.SampledFrom(ex).Draw(t, "name")
				f := m.files[n]
				size := rapid.Int64Range(0, int64(len(f.current()))+3).Draw(t, "size")
				if err := d.Truncate(n, size); err != nil {
					t.Fatal(err)
				}
				f.pending = append(f.pending, mwrite{off: size, trunc: true})
			},
			"sync": func(t *rapid.T) {
				ex := existing()
				if len(ex) == 0 {
					t.Skip()
				}
				n := rapid.SampledFrom(ex).Draw(t, "name")
				if err := d.Sync(n); err != nil {
					t.Fatal(err)
				}
				f := m.files[n]
				f.durable, f.pending = f.current(), nil
			},
			"syncDir": func(t *rapid.T) {
				if err := d.SyncDir("d"); err != nil {
					t.Fatal(err)
				}
				for _, op := range m.pending {
					applyNS(m.durable, op)
				}
				m.pending = nil
			},
			"rename": func(t *rapid.T) {
				ex := existing()
				if len(ex) == 0 {
					t.Skip()
				}
				from := rapid.SampledFrom(ex).Draw(t, "from")
				to := rapid.SampledFrom(names).Draw(t, "to")
				if err := d.Rename(from, to); err != nil {
					t.Fatal(err)
				}
				if from == to {
					return
				}
				op := mns{rename: true, name: from, to: to, f: m.files[from]}
				applyNS(m.files, op)
				m.pending = append(m.pending, op)
			},
			"remove": func(t *rapid.T) {
				ex := existing()
				if len(ex) == 0 {
					t.Skip()
				}
				n := rapid.SampledFrom(ex).Draw(t, "name")
				if err := d.Remove(n); err != nil {
					t.Fatal(err)
				}
				op := mns{remove: true, name: n}
				applyNS(m.files, op)
				m.pending = append(m.pending, op)
			},
			"powerLoss": func(t *rapid.T) {
				d.PowerLoss()
				// The namespace: the durable one plus some prefix of the
				// pending changes.
				got := map[string]bool{}
				for _, n := range names {
					got[n] = d.Exists(n)
				}
				// Several prefixes may name the same files (remove then
				// create again): accept the run if any prefix explains both
				// the names and every file's content.
				var ns map[string]*mfile
				var contents map[string][]byte
				for k := 0; k <= len(m.pending) && ns == nil; k++ {
					cand := maps(m.durable)
					for _, op := range m.pending[:k] {
						applyNS(cand, op)
					}
					match := true
					data := map[string][]byte{}
					for _, n := range names {
						if (cand[n] != nil) != got[n] {
							match = false
							break
						}
						if cand[n] == nil {
							continue
						}
						b, err := d.ReadFile(n)
						if err != nil {
							t.Fatal(err)
						}
						// Each file: durable plus a prefix of its writes, maybe torn.
						if !prefixOrTorn(cand[n], b) {
							match = false
							break
						}
						data[n] = b
					}
					if match {
						ns, contents = cand, data
					}
				}
				if ns == nil {
					t.Fatalf("after power loss no prefix of the pending changes %v explains the disk (names %v)", m.pending, got)
				}
				for n, f := range ns {
					f.durable, f.pending = contents[n], nil
				}
				m.files, m.durable, m.pending = ns, maps(ns), nil
			},
			"": func(t *rapid.T) { check() },
		})
	})
}

func maps(m map[string]*mfile) map[string]*mfile {
	out := make(map[string]*mfile, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func prefixOrTorn(f *mfile, data []byte) bool {
	base := f.durable
	for k := 0; k <= len(f.pending); k++ {
		if bytes.Equal(base, data) {
			return true
		}
		if k == len(f.pending) {
			break
		}
		w := f.pending[k]
		for cut := 1; cut < len(w.b); cut++ {
			if bytes.Equal(mapply(base, mwrite{off: w.off, b: w.b[:cut]}), data) {
				return true
			}
		}
		base = mapply(base, w)
	}
	return false
}

func TestDiskSyncedDataSurvivesPowerLoss(t *testing.T) {
	d, _ := sim.NewDisk(sim.DiskConfig{}, nil)
	must(t, d.Create("p/f"))
	must(t, d.Append("p/f", []byte("synced")))
	must(t, d.Sync("p/f"))
	must(t, d.SyncDir("p"))
	must(t, d.Append("p/f", []byte("-lost")))
	d.PowerLoss()
	got, err := d.ReadFile("p/f")
	must(t, err)
	if string(got) != "synced" {
		t.Fatalf("after power loss with the default chooser: %q, want %q", got, "synced")
	}
}

func TestDiskUnsyncedCreateVanishes(t *testing.T) {
	d, _ := sim.NewDisk(sim.DiskConfig{}, nil)
	must(t, d.Create("p/f"))
	must(t, d.Append("p/f", []byte("x")))
	must(t, d.Sync("p/f")) // content synced, directory entry not
	d.PowerLoss()
	if d.Exists("p/f") {
		t.Fatal("a file whose directory was never synced survived a power loss")
	}
}

func TestDiskFullIsAnError(t *testing.T) {
	d, _ := sim.NewDisk(sim.DiskConfig{Capacity: 10}, nil)
	must(t, d.Create("f"))
	must(t, d.Append("f", make([]byte, 8)))
	err := d.Append("f", make([]byte, 3))
	if !errors.Is(err, sim.ErrNoSpace) {
		t.Fatalf("append past capacity: %v, want ErrNoSpace", err)
	}
	if sz, _ := d.Size("f"); sz != 8 {
		t.Fatalf("a refused write changed the size to %d", sz)
	}
	must(t, d.Truncate("f", 2))
	must(t, d.Append("f", make([]byte, 8)))
}

func TestDiskCorruptionAtRestAndOnRead(t *testing.T) {
	d, _ := sim.NewDisk(sim.DiskConfig{}, nil)
	must(t, d.Create("f"))
	must(t, d.Append("f", []byte{0, 0, 0}))
	must(t, d.Corrupt("f", 1, 3))
	got, _ := d.ReadFile("f")
	if !bytes.Equal(got, []byte{0, 8, 0}) {
		t.Fatalf("corrupt at rest: %v", got)
	}
	if err := d.Corrupt("f", 3, 0); err == nil {
		t.Fatal("corrupting past the end was accepted")
	}
	r, _ := sim.NewDisk(sim.DiskConfig{ReadCorruptProbability: 1}, sim.NewRandom(1))
	must(t, r.Create("f"))
	must(t, r.Append("f", make([]byte, 4)))
	got, _ = r.ReadFile("f")
	flipped := 0
	for _, b := range got {
		for ; b != 0; b &= b - 1 {
			flipped++
		}
	}
	if flipped != 1 {
		t.Fatalf("read corruption flipped %d bits, want 1", flipped)
	}
	again, _ := r.ReadFile("f")
	if bytes.Equal(got, again) && flipped == 0 {
		t.Fatal("unreachable")
	}
}

func TestDiskListAndExport(t *testing.T) {
	d, _ := sim.NewDisk(sim.DiskConfig{}, nil)
	for _, n := range []string{"logs/t-0/00000000000000000000.log", "logs/t-0/00000000000000000000.index", "logs/t-1/x", "logs/recovery-point-offset-checkpoint"} {
		must(t, d.Create(n))
		must(t, d.Append(n, []byte(n)))
	}
	got, _ := d.List("logs")
	if want := []string{"recovery-point-offset-checkpoint", "t-0", "t-1"}; !slices.Equal(got, want) {
		t.Fatalf("List(logs) = %v, want %v", got, want)
	}
	if !d.IsDir("logs/t-0") || d.IsDir("logs/t-9") {
		t.Fatal("IsDir is wrong")
	}
	dir := t.TempDir()
	must(t, d.Export(dir, false))
	b, err := os.ReadFile(filepath.Join(dir, "logs", "t-0", "00000000000000000000.log"))
	must(t, err)
	if string(b) != "logs/t-0/00000000000000000000.log" {
		t.Fatalf("exported %q", b)
	}
}

func TestDiskBadInput(t *testing.T) {
	for _, c := range []sim.DiskConfig{{Capacity: -1}, {TearProbability: 1.5}, {ReadCorruptProbability: -0.1}, {SyncLatency: -1}} {
		if _, err := sim.NewDisk(c, nil); err == nil {
			t.Errorf("NewDisk(%+v) accepted", c)
		}
	}
	d, _ := sim.NewDisk(sim.DiskConfig{}, nil)
	if _, err := d.ReadFile("missing"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("read of a missing file: %v", err)
	}
	must(t, d.Create("f"))
	if err := d.WriteAt("f", -1, []byte("x")); err == nil {
		t.Error("negative offset accepted")
	}
	if err := d.Truncate("f", -1); err == nil {
		t.Error("negative size accepted")
	}
	if err := d.Create(""); err == nil {
		t.Error("empty name accepted")
	}
}

func must(t testing.TB, err error) {
	if err == nil {
		return
	}
	if t == nil {
		panic(err)
	}
	t.Helper()
	t.Fatal(err)
}
