package storage

// This file is the planted bug mutant.FsyncLies (NOT Kafka): a file system
// whose fsync returns at once without making anything durable, as a disk
// or a file system that acknowledges a flush it has only cached. The log,
// its indexes and every checkpoint the storage writes (recovery point, log
// start offset, high watermark, leader epochs, producer snapshots) then
// believe they are durable, and a power loss takes them anyway.
//
// A lying disk's volatile cache is bounded, and destages when it fills:
// here a file's fsync is real once lyingCacheWrites writes to it went
// unsynced. Without the bound, a follower truncating and fetching again in
// a loop (swarm/kip279-flush seed 26) kept every unsynced write of the
// loop in the virtual disk's pending list, gigabytes within seconds.

import "github.com/kafkasim/kafkasim/broker/mutant"

// lyingCacheWrites is how many unsynced writes to one file the lying
// disk's cache holds before an fsync really syncs it.
const lyingCacheWrites = 256

// lyingFS is an FS whose Sync and SyncDir do nothing, until a file's
// unsynced writes fill the cache.
type lyingFS struct {
	FS
	unsynced map[string]int // per file, writes since its last real sync
}

func (l *lyingFS) Append(name string, p []byte) error {
	l.unsynced[name]++
	return l.FS.Append(name, p)
}

func (l *lyingFS) Truncate(name string, size int64) error {
	l.unsynced[name]++
	return l.FS.Truncate(name, size)
}

func (l *lyingFS) Sync(name string) error {
	if l.unsynced[name] < lyingCacheWrites {
		return nil
	}
	delete(l.unsynced, name)
	return l.FS.Sync(name)
}

func (*lyingFS) SyncDir(string) error { return nil }

// withMutants returns fs, or a lying one when mutant.FsyncLies is on.
func withMutants(fs FS, m mutant.Set) FS {
	if m.On(mutant.FsyncLies) {
		if _, ok := fs.(*lyingFS); !ok {
			return &lyingFS{FS: fs, unsynced: map[string]int{}}
		}
	}
	return fs
}
