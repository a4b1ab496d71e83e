package storage

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/mutant"
)

// TestFsyncLiesCacheBounded: under the fsync-lies mutant an fsync makes
// nothing durable (a power loss takes the file's synced writes too) until
// the file's unsynced writes fill the lying disk's cache: then an fsync
// is real, and what it synced survives.
func TestFsyncLiesCacheBounded(t *testing.T) {
	d := newDisk(t, nil)
	fs := withMutants(d, mutant.Set(0).With(mutant.FsyncLies, true))
	// The file itself is made durable on the real disk.
	if err := d.Create("/f"); err != nil {
		t.Fatal(err)
	}
	if err := d.SyncDir("/"); err != nil {
		t.Fatal(err)
	}
	for range lyingCacheWrites - 1 {
		if err := fs.Append("/f", []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.Sync("/f"); err != nil {
		t.Fatal(err)
	}
	d.PowerLoss()
	if n, _ := fs.Size("/f"); n != 0 {
		t.Fatalf("after a lying fsync and a power loss: %d bytes survive, want 0", n)
	}
	for range lyingCacheWrites {
		if err := fs.Append("/f", []byte("y")); err != nil {
			t.Fatal(err)
		}
	}
	if err := fs.Sync("/f"); err != nil {
		t.Fatal(err)
	}
	d.PowerLoss()
	if n, _ := fs.Size("/f"); n != lyingCacheWrites {
		t.Fatalf("after %d unsynced writes, an fsync is real: %d bytes survive a power loss, want %d", lyingCacheWrites, n, lyingCacheWrites)
	}
}
