package storage

// This file is the planted bug mutant.FsyncLies (NOT Kafka): a file system
// whose fsync returns at once without making anything durable, as a disk
// or a file system that acknowledges a flush it has only cached. The log,
// its indexes and every checkpoint the storage writes (recovery point, log
// start offset, high watermark, leader epochs, producer snapshots) then
// believe they are durable, and a power loss takes them anyway.

import "github.com/kafkasim/kafkasim/broker/mutant"

// lyingFS is an FS whose Sync and SyncDir do nothing.
type lyingFS struct{ FS }

func (lyingFS) Sync(string) error    { return nil }
func (lyingFS) SyncDir(string) error { return nil }

// withMutants returns fs, or a lying one when mutant.FsyncLies is on.
func withMutants(fs FS, m mutant.Set) FS {
	if m.On(mutant.FsyncLies) {
		if _, ok := fs.(lyingFS); !ok {
			return lyingFS{fs}
		}
	}
	return fs
}
