package zk

// This file is the server's transaction log on its sim disk (ZooKeeper's
// FileTxnLog). Every txn is appended and synced before the server applies
// it and answers, as ZooKeeper's SyncRequestProcessor does, so an
// acknowledged write survives a power loss. A record is
// [length uint32][Adler-32 of the payload uint32][payload], big-endian, like
// ZooKeeper's (which also checksums each txn with Adler-32); recovery stops at
// the first short or corrupt record and cuts the log there.
// Simplifications vs ZooKeeper, and why:
//   - The payload is JSON, not jute: it is only read back by this package.
//   - One log file, never rolled, and no snapshots: Kafka writes ZooKeeper
//     seldom (registrations, leader and ISR changes), so replaying the whole
//     log at a restart stays cheap in simulated runs.
//   - Sessions are created and closed by logged txns (as ZooKeeper does), and
//     a boot record per start keeps connection ids unique across restarts.

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/adler32"
	"io/fs"
	"path"

	"github.com/kafkasim/kafkasim/sim"
)

// logName is the transaction log's name under the data directory.
const logName = "version-2/log"

func encodeRecord(tx *txn) []byte {
	payload, err := json.Marshal(tx)
	if err != nil {
		panic(fmt.Sprintf("zk: encode txn: %v", err))
	}
	b := make([]byte, 8, 8+len(payload))
	binary.BigEndian.PutUint32(b[0:4], uint32(len(payload)))
	binary.BigEndian.PutUint32(b[4:8], adler32.Checksum(payload))
	return append(b, payload...)
}

// decodeLog returns the txns of a log and the length of its valid prefix.
func decodeLog(b []byte) ([]txn, int) {
	var out []txn
	off := 0
	for len(b)-off >= 8 {
		n := int(binary.BigEndian.Uint32(b[off : off+4]))
		sum := binary.BigEndian.Uint32(b[off+4 : off+8])
		if n > len(b)-off-8 {
			break
		}
		payload := b[off+8 : off+8+n]
		if adler32.Checksum(payload) != sum {
			break
		}
		var tx txn
		if err := json.Unmarshal(payload, &tx); err != nil {
			break
		}
		out = append(out, tx)
		off += 8 + n
	}
	return out, off
}

// txnLog writes the log of one server instance.
type txnLog struct {
	file string
}

// openLog reads the log under dir, creating it if missing, and cuts a torn
// or corrupt tail. It returns the valid txns in order and how many bytes it cut.
func openLog(d *sim.Disk, dir string) (*txnLog, []txn, int) {
	l := &txnLog{file: path.Join(dir, logName)}
	b, err := d.ReadFile(l.file)
	if errors.Is(err, fs.ErrNotExist) {
		must(d.Create(l.file))
		must(d.SyncDir(path.Dir(l.file)))
		return l, nil, 0
	}
	must(err)
	txns, good := decodeLog(b)
	if good < len(b) {
		must(d.Truncate(l.file, int64(good)))
		must(d.Sync(l.file))
	}
	return l, txns, len(b) - good
}

// append adds txns to the log and syncs it once.
func (l *txnLog) append(d *sim.Disk, txns ...*txn) {
	for _, tx := range txns {
		must(d.Append(l.file, encodeRecord(tx)))
	}
	must(d.Sync(l.file))
}

// must panics on a disk error: the server is assumed correct, so a disk
// that fails under it (full, for instance) ends the run as a broken
// invariant rather than a ZooKeeper outage.
func must(err error) {
	if err != nil {
		panic(fmt.Sprintf("zk: transaction log: %v", err))
	}
}
