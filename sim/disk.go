package sim

// This file simulates one node's disk. Simplifications, and why:
//   - There are no file handles or directories as objects: files are named by
//     slash-separated paths and a directory exists while a file lies under it.
//     Kafka's storage only needs whole-file operations by name.
//   - Each file's content survives a power loss up to its last Sync; the
//     writes after it survive as a prefix chosen by the chooser, the last kept
//     one possibly torn at a byte. Files are independent (real file systems
//     do not order writes across files).
//   - Creations, removals and renames are durable after SyncDir of a
//     directory they touch; a power loss keeps a prefix of the rest. A rename
//     is one operation, so it is atomic: after a crash the file has the old
//     name or the new one, never both or neither.
//   - Latency is a fixed cost per operation that keeps the node busy (its next
//     input waits), since node handlers run to completion in one step.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/internal/cleanpath"
)

// ErrNoSpace is returned when a write would grow the disk past its capacity
// (Linux's ENOSPC). Nothing of the write is applied.
var ErrNoSpace = errors.New("no space left on device")

// ErrNodeDown is returned by every disk operation while the node is crashed.
var ErrNodeDown = errors.New("node is down")

// DiskConfig describes a disk and its optional faults.
type DiskConfig struct {
	// Capacity is the disk size in bytes; 0 means unlimited.
	Capacity int64
	// TearProbability is the chance, in [0,1], that a power loss tears the
	// first write it does not keep, keeping a part of it.
	TearProbability float64
	// ReadCorruptProbability is the chance, in [0,1], that a read returns
	// one flipped bit (the data at rest stays intact).
	ReadCorruptProbability float64
	// ReadLatency, WriteLatency and SyncLatency keep the node busy for that
	// long after each read, write (append, write-at, truncate, namespace
	// change) and sync. All must be >= 0.
	ReadLatency, WriteLatency, SyncLatency Duration
}

// Validate reports the first parameter outside its allowed range.
func (c DiskConfig) Validate() error {
	switch {
	case c.Capacity < 0:
		return fmt.Errorf("disk capacity %d: must be >= 0 bytes (0 = unlimited)", c.Capacity)
	case !(c.TearProbability >= 0 && c.TearProbability <= 1):
		return fmt.Errorf("disk tear probability %v: must be in [0,1]", c.TearProbability)
	case !(c.ReadCorruptProbability >= 0 && c.ReadCorruptProbability <= 1):
		return fmt.Errorf("disk read corruption probability %v: must be in [0,1]", c.ReadCorruptProbability)
	case c.ReadLatency < 0 || c.WriteLatency < 0 || c.SyncLatency < 0:
		return fmt.Errorf("disk latency (read %v, write %v, sync %v): must be >= 0", c.ReadLatency, c.WriteLatency, c.SyncLatency)
	}
	return nil
}

// DiskStats counts a disk's work.
type DiskStats struct {
	Writes, BytesWritten, Reads, BytesRead, Syncs int64
}

// inode is one file's content.
// Invariant: applying pending to durable in order gives data.
type inode struct {
	data    []byte
	durable []byte
	pending []write
	// aliased is set when a pending append may alias data's array: only
	// then must a write into the array copy it first. (A file written in
	// place with no fsync for a long time — an index under the fsync-lies
	// mutant — would otherwise copy the whole file on every write.)
	aliased bool
}

// write is one unsynced change to a file. An append's bytes alias the
// file's data array: nothing writes into an array region a pending write
// still references (writeAt copies, truncate caps the capacity).
type write struct {
	off   int64
	b     []byte
	trunc bool // truncate to off; b is nil
}

func apply(dst []byte, w write) []byte {
	if w.trunc {
		if w.off < int64(len(dst)) {
			return dst[:w.off]
		}
		return append(dst, make([]byte, w.off-int64(len(dst)))...)
	}
	end := w.off + int64(len(w.b))
	if w.off > int64(len(dst)) {
		dst = append(dst, make([]byte, w.off-int64(len(dst)))...)
	}
	if end > int64(len(dst)) {
		dst = append(dst[:w.off], w.b...)
		return dst
	}
	copy(dst[w.off:], w.b)
	return dst
}

type nsKind uint8

const (
	nsCreate nsKind = iota
	nsRemove
	nsRename
)

// nsOp is one unsynced namespace change.
type nsOp struct {
	kind    nsKind
	name    string
	newname string
	ino     *inode
}

// Disk is one node's virtual disk. It is usable on its own (storage tests
// build one with NewDisk) and inside a world, which owns one per node.
type Disk struct {
	cfg       DiskConfig
	ch        Chooser
	files     map[string]*inode // the namespace as the node sees it
	durableNS map[string]*inode // the namespace a power loss falls back to
	pendingNS []nsOp
	used      int64
	down      bool
	busy      Duration
	stats     DiskStats
}

// NewDisk returns an empty disk. Decisions at a power loss and read
// corruption are drawn from ch; a nil ch takes the default of every choice
// (a power loss keeps no unsynced write).
func NewDisk(cfg DiskConfig, ch Chooser) (*Disk, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if ch == nil {
		ch = &Prefix{}
	}
	return &Disk{cfg: cfg, ch: ch, files: map[string]*inode{}, durableNS: map[string]*inode{}}, nil
}

// Stats returns the disk's counters.
func (d *Disk) Stats() DiskStats { return d.stats }

// Used returns the bytes held by the files the node sees.
func (d *Disk) Used() int64 { return d.used }

func clean(name string) (string, error) {
	if name == "" {
		return "", errors.New("empty file name")
	}
	c := cleanpath.Clean(name)
	if c == "." || c == "/" {
		return "", fmt.Errorf("file name %q names a directory", name)
	}
	return c, nil
}

// lookup returns the cleaned name and its inode, checking the node is up.
func (d *Disk) lookup(op, name string) (string, *inode, error) {
	if ino := d.files[name]; ino != nil && !d.down {
		return name, ino, nil // fast path: the name is already clean
	}
	c, err := clean(name)
	if err != nil {
		return name, nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	if d.down {
		return c, nil, &fs.PathError{Op: op, Path: c, Err: ErrNodeDown}
	}
	ino := d.files[c]
	if ino == nil {
		return c, nil, &fs.PathError{Op: op, Path: c, Err: fs.ErrNotExist}
	}
	return c, ino, nil
}

func (d *Disk) grow(op, name string, by int64) error {
	if d.cfg.Capacity > 0 && by > 0 && d.used+by > d.cfg.Capacity {
		return &fs.PathError{Op: op, Path: name, Err: ErrNoSpace}
	}
	d.used += by
	return nil
}

func (d *Disk) wrote(n int) {
	d.stats.Writes++
	d.stats.BytesWritten += int64(n)
	d.busy += d.cfg.WriteLatency
}

// Create makes a new empty file. It fails if the file exists.
func (d *Disk) Create(name string) error {
	c, err := clean(name)
	if err != nil {
		return &fs.PathError{Op: "create", Path: name, Err: err}
	}
	if d.down {
		return &fs.PathError{Op: "create", Path: c, Err: ErrNodeDown}
	}
	if d.files[c] != nil {
		return &fs.PathError{Op: "create", Path: c, Err: fs.ErrExist}
	}
	ino := &inode{}
	d.files[c] = ino
	d.pendingNS = append(d.pendingNS, nsOp{kind: nsCreate, name: c, ino: ino})
	d.wrote(0)
	return nil
}

// Exists reports whether a file of that name exists.
func (d *Disk) Exists(name string) bool {
	if !d.down && d.files[name] != nil {
		return true // the files' names are clean
	}
	c, err := clean(name)
	return err == nil && !d.down && d.files[c] != nil
}

// IsDir reports whether some file lies under dir.
func (d *Disk) IsDir(dir string) bool {
	if d.down {
		return false
	}
	found := false
	d.under(dir, func(string) bool {
		found = true
		return false
	})
	return found
}

// Append writes p at the end of the file.
func (d *Disk) Append(name string, p []byte) error {
	c, ino, err := d.lookup("append", name)
	if err != nil {
		return err
	}
	if err := d.grow("append", c, int64(len(p))); err != nil {
		return err
	}
	off := len(ino.data)
	if need := off + len(p); need > cap(ino.data) {
		// Double the capacity (append grows large slices by only 1.25x,
		// copying a growing log over and over), from a small first size:
		// most files are checkpoints of a few dozen bytes.
		grown := make([]byte, off, max(2*cap(ino.data), need, 64))
		copy(grown, ino.data)
		ino.data = grown
	}
	ino.data = append(ino.data, p...)
	ino.pending = append(ino.pending, write{off: int64(off), b: ino.data[off:len(ino.data):len(ino.data)]})
	ino.aliased = true
	d.wrote(len(p))
	return nil
}

// WriteAt writes p at offset off, extending the file (with zeros past its
// end) if needed.
func (d *Disk) WriteAt(name string, off int64, p []byte) error {
	c, ino, err := d.lookup("write", name)
	if err != nil {
		return err
	}
	if off < 0 {
		return &fs.PathError{Op: "write", Path: c, Err: fmt.Errorf("offset %d: must be >= 0", off)}
	}
	if err := d.grow("write", c, max(0, off+int64(len(p))-int64(len(ino.data)))); err != nil {
		return err
	}
	if ino.aliased && off < int64(len(ino.data)) {
		// Pending appends alias this array: write into a fresh one.
		ino.data = append([]byte(nil), ino.data...)
		ino.aliased = false
	}
	b := append([]byte(nil), p...)
	ino.data = apply(ino.data, write{off: off, b: b})
	ino.pending = append(ino.pending, write{off: off, b: b})
	d.wrote(len(p))
	return nil
}

// ReadAt reads into p from offset off and returns the bytes read; like
// io.ReaderAt it returns io.EOF-free short counts only at the end of file.
func (d *Disk) ReadAt(name string, off int64, p []byte) (int, error) {
	c, ino, err := d.lookup("read", name)
	if err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: c, Err: fmt.Errorf("offset %d: must be >= 0", off)}
	}
	n := 0
	if off < int64(len(ino.data)) {
		n = copy(p, ino.data[off:])
	}
	d.stats.Reads++
	d.stats.BytesRead += int64(n)
	d.busy += d.cfg.ReadLatency
	if n > 0 && d.cfg.ReadCorruptProbability > 0 && d.ch.Chance(KindCorrupt, d.cfg.ReadCorruptProbability) {
		bit := d.ch.Choose(KindCorrupt, n*8)
		p[bit/8] ^= 1 << (bit % 8)
	}
	return n, nil
}

// ReadFile returns a copy of the whole file.
func (d *Disk) ReadFile(name string) ([]byte, error) {
	sz, err := d.Size(name)
	if err != nil {
		return nil, err
	}
	b := make([]byte, sz)
	n, err := d.ReadAt(name, 0, b)
	return b[:n], err
}

// AppendFile appends the whole file to dst and returns it: ReadFile, with
// the same cost and faults, into a buffer the caller reuses. ok is false,
// and dst unchanged, where ReadFile would fail (no such file, node down),
// with no error built: a caller probing for files pays nothing for a miss.
func (d *Disk) AppendFile(dst []byte, name string) (_ []byte, ok bool) {
	if d.down {
		return dst, false
	}
	ino := d.files[name] // the files' names are clean: a hit needs no cleaning
	if ino == nil {
		c, err := clean(name) // NB: no allocation for a name already clean
		if err != nil {
			return dst, false
		}
		if ino = d.files[c]; ino == nil {
			return dst, false
		}
	}
	start := len(dst)
	dst = append(dst, ino.data...)
	n := len(ino.data)
	d.stats.Reads++
	d.stats.BytesRead += int64(n)
	d.busy += d.cfg.ReadLatency
	if n > 0 && d.cfg.ReadCorruptProbability > 0 && d.ch.Chance(KindCorrupt, d.cfg.ReadCorruptProbability) {
		bit := d.ch.Choose(KindCorrupt, n*8)
		dst[start+bit/8] ^= 1 << (bit % 8)
	}
	return dst, true
}

// Size returns the file's length in bytes.
func (d *Disk) Size(name string) (int64, error) {
	_, ino, err := d.lookup("stat", name)
	if err != nil {
		return 0, err
	}
	return int64(len(ino.data)), nil
}

// Truncate sets the file's length, cutting it or extending it with zeros.
func (d *Disk) Truncate(name string, size int64) error {
	c, ino, err := d.lookup("truncate", name)
	if err != nil {
		return err
	}
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: c, Err: fmt.Errorf("size %d: must be >= 0", size)}
	}
	if err := d.grow("truncate", c, size-int64(len(ino.data))); err != nil {
		return err
	}
	if size < int64(len(ino.data)) {
		d.used -= int64(len(ino.data)) - size
		// Cap the capacity so the next append cannot overwrite bytes that
		// pending writes alias.
		ino.data = ino.data[:size:size]
	} else {
		ino.data = apply(ino.data, write{off: size, trunc: true})
	}
	ino.pending = append(ino.pending, write{off: size, trunc: true})
	d.wrote(0)
	return nil
}

// Rename moves oldname to newname, replacing newname if it exists. It is
// atomic, also across a power loss.
func (d *Disk) Rename(oldname, newname string) error {
	o, ino, err := d.lookup("rename", oldname)
	if err != nil {
		return err
	}
	n, err := clean(newname)
	if err != nil {
		return &fs.PathError{Op: "rename", Path: newname, Err: err}
	}
	if o == n {
		return nil
	}
	if old := d.files[n]; old != nil {
		d.used -= int64(len(old.data))
	}
	delete(d.files, o)
	d.files[n] = ino
	d.pendingNS = append(d.pendingNS, nsOp{kind: nsRename, name: o, newname: n, ino: ino})
	d.wrote(0)
	return nil
}

// Remove deletes the file.
func (d *Disk) Remove(name string) error {
	c, ino, err := d.lookup("remove", name)
	if err != nil {
		return err
	}
	d.used -= int64(len(ino.data))
	delete(d.files, c)
	d.pendingNS = append(d.pendingNS, nsOp{kind: nsRemove, name: c})
	d.wrote(0)
	return nil
}

// List returns the sorted names (not paths) of the files and directories
// directly under dir. "" or "." lists the top level.
func (d *Disk) List(dir string) ([]string, error) {
	if d.down {
		return nil, &fs.PathError{Op: "list", Path: dir, Err: ErrNodeDown}
	}
	n := 0
	d.under(dir, func(string) bool {
		n++
		return true
	})
	if n == 0 {
		return nil, nil
	}
	out := make([]string, 0, n) // NB: counted first: one allocation
	d.under(dir, func(rest string) bool {
		out = append(out, rest)
		return true
	})
	// NB: sorted, then the duplicates (files of one subdirectory) dropped:
	// the set the map-iteration order cannot reach.
	sort.Strings(out)
	return slices.Compact(out), nil
}

// under calls fn, until it returns false, with the first path element
// below dir of each file under dir, in no particular order (so fn must not
// let the order reach a decision). It allocates nothing.
func (d *Disk) under(dir string, fn func(rest string) bool) {
	top, prefix := true, ""
	if dir != "" {
		if c := cleanpath.Clean(dir); c != "." {
			top, prefix = false, strings.TrimSuffix(c, "/")
		}
	}
	for name := range d.files {
		rest := name
		if !top {
			if len(name) <= len(prefix) || name[len(prefix)] != '/' || !strings.HasPrefix(name, prefix) {
				continue
			}
			rest = name[len(prefix)+1:]
		}
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			rest = rest[:i]
		}
		if !fn(rest) {
			return
		}
	}
}

// Sync makes the file's content durable (fsync).
func (d *Disk) Sync(name string) error {
	_, ino, err := d.lookup("sync", name)
	if err != nil {
		return err
	}
	for _, w := range ino.pending {
		ino.durable = apply(ino.durable, w)
	}
	clear(ino.pending)
	ino.pending, ino.aliased = ino.pending[:0], false
	d.stats.Syncs++
	d.busy += d.cfg.SyncLatency
	return nil
}

func touches(op nsOp, dir string) bool {
	return cleanpath.Dir(op.name) == dir || (op.kind == nsRename && cleanpath.Dir(op.newname) == dir)
}

// SyncDir makes durable every namespace change up to the last one that
// touches dir (fsync of a directory; earlier changes elsewhere come along,
// as a journaling file system commits them in order).
func (d *Disk) SyncDir(dir string) error {
	if d.down {
		return &fs.PathError{Op: "syncdir", Path: dir, Err: ErrNodeDown}
	}
	c := "."
	if dir != "" {
		c = cleanpath.Clean(dir)
	}
	last := -1
	for i, op := range d.pendingNS {
		if touches(op, c) {
			last = i
		}
	}
	d.commitNS(last + 1)
	d.stats.Syncs++
	d.busy += d.cfg.SyncLatency
	return nil
}

func (d *Disk) commitNS(k int) {
	for _, op := range d.pendingNS[:k] {
		switch op.kind {
		case nsCreate:
			d.durableNS[op.name] = op.ino
		case nsRemove:
			delete(d.durableNS, op.name)
		case nsRename:
			delete(d.durableNS, op.name)
			d.durableNS[op.newname] = op.ino
		}
	}
	d.pendingNS = append(d.pendingNS[:0], d.pendingNS[k:]...)
}

// PowerLoss applies a power loss: the namespace keeps its durable state plus
// a chosen prefix of the later changes, and each surviving file keeps its
// synced content plus a chosen prefix of its later writes, the first one
// not kept possibly torn. Decisions are drawn in file-name order.
func (d *Disk) PowerLoss() { d.powerLoss(false) }

// powerLoss applies a power loss; with loseAll every unsynced write is lost
// without asking the chooser.
func (d *Disk) powerLoss(loseAll bool) {
	keep := func(n int) int {
		if loseAll {
			return 0
		}
		return d.ch.Choose(KindCrashKeep, n+1)
	}
	if n := len(d.pendingNS); n > 0 {
		d.commitNS(keep(n))
	}
	d.pendingNS = d.pendingNS[:0]
	names := make([]string, 0, len(d.durableNS))
	for name := range d.durableNS {
		names = append(names, name)
	}
	sort.Strings(names)
	d.files = make(map[string]*inode, len(names))
	d.used = 0
	for _, name := range names {
		ino := d.durableNS[name]
		d.files[name] = ino
		if n := len(ino.pending); n > 0 {
			k := keep(n)
			for _, w := range ino.pending[:k] {
				ino.durable = apply(ino.durable, w)
			}
			if k < n && d.cfg.TearProbability > 0 && !loseAll {
				if w := ino.pending[k]; len(w.b) > 1 && d.ch.Chance(KindTear, d.cfg.TearProbability) {
					cut := 1 + d.ch.Choose(KindTear, len(w.b)-1)
					ino.durable = apply(ino.durable, write{off: w.off, b: w.b[:cut]})
				}
			}
			clear(ino.pending)
			ino.pending, ino.aliased = ino.pending[:0], false
		}
		ino.data = append([]byte(nil), ino.durable...)
		d.used += int64(len(ino.data))
	}
}

// Corrupt flips one bit of a file at rest, in what the node sees and in
// what survives a crash: the fault of a bad sector.
func (d *Disk) Corrupt(name string, off int64, bit uint8) error {
	c, ino, err := d.lookup("corrupt", name)
	if err != nil {
		return err
	}
	if off < 0 || off >= int64(len(ino.data)) || bit > 7 {
		return &fs.PathError{Op: "corrupt", Path: c, Err: fmt.Errorf("offset %d bit %d: must be within [0,%d) and bit in [0,7]", off, bit, len(ino.data))}
	}
	if len(ino.pending) > 0 {
		ino.data = append([]byte(nil), ino.data...)
		for i := range ino.pending {
			if w := &ino.pending[i]; !w.trunc && off >= w.off && off < w.off+int64(len(w.b)) {
				w.b = append([]byte(nil), w.b...)
				w.b[off-w.off] ^= 1 << bit
			}
		}
	}
	ino.data[off] ^= 1 << bit
	if off < int64(len(ino.durable)) {
		ino.durable[off] ^= 1 << bit
	}
	return nil
}

// Export writes the files to a real directory, file for file, so that a
// broker's log can be read by Kafka's own tools. With durable set it writes
// what would survive a power loss right now instead of what the node sees.
func (d *Disk) Export(realDir string, durable bool) error {
	ns := d.files
	if durable {
		ns = d.durableNS
	}
	names := make([]string, 0, len(ns))
	for name := range ns {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		data := ns[name].data
		if durable {
			data = ns[name].durable
		}
		dst := filepath.Join(realDir, filepath.FromSlash(strings.TrimPrefix(name, "/")))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// takeBusy returns and resets the latency accumulated since the last call.
func (d *Disk) takeBusy() Duration {
	b := d.busy
	d.busy = 0
	return b
}

// wipe empties the disk: every file, synced or pending, is gone (a blank
// drive in place of the old one). Its counters stay, as the machine's.
func (d *Disk) wipe() {
	d.files = map[string]*inode{}
	d.durableNS = map[string]*inode{}
	d.pendingNS = d.pendingNS[:0]
	d.used = 0
}
