package storage

// This file is a segment's aborted-transaction index, the `.txnindex` file
// (TransactionIndex.java, AbortedTxn.java): one 34-byte entry per aborted
// transaction whose ABORT marker lies in the segment, in marker order:
// version int16 = 0, producerId int64, firstOffset int64, lastOffset int64
// (the marker's offset), lastStableOffset int64 (the LSO once the
// transaction completed), big endian. A read_committed fetch collects the
// entries overlapping the range it returns. As in Kafka the file is created
// lazily, at the first abort in the segment.

import (
	"encoding/binary"
	"fmt"
)

// TxnIndexFileSuffix is the aborted-transaction index's file suffix.
const TxnIndexFileSuffix = ".txnindex"

// AbortedTxnEntrySize is the size of one .txnindex entry.
const AbortedTxnEntrySize = 34

const abortedTxnVersion int16 = 0

// AbortedTxn is one aborted transaction (AbortedTxn.java).
type AbortedTxn struct {
	ProducerID       int64
	FirstOffset      int64
	LastOffset       int64 // the ABORT marker's offset
	LastStableOffset int64
}

// AppendTo encodes a at the end of dst in the .txnindex format.
func (a AbortedTxn) AppendTo(dst []byte) []byte {
	dst = binary.BigEndian.AppendUint16(dst, uint16(abortedTxnVersion))
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.ProducerID))
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.FirstOffset))
	dst = binary.BigEndian.AppendUint64(dst, uint64(a.LastOffset))
	return binary.BigEndian.AppendUint64(dst, uint64(a.LastStableOffset))
}

// DecodeAbortedTxns decodes a whole .txnindex file. A trailing partial
// entry (a torn write) is an error, as is an unknown version.
func DecodeAbortedTxns(b []byte) ([]AbortedTxn, error) {
	var out []AbortedTxn
	for pos := 0; pos < len(b); pos += AbortedTxnEntrySize {
		if len(b)-pos < AbortedTxnEntrySize {
			return out, corrupt(int64(pos), "%d bytes left: a .txnindex entry is %d", len(b)-pos, AbortedTxnEntrySize)
		}
		e := b[pos:]
		if v := int16(binary.BigEndian.Uint16(e)); v != abortedTxnVersion {
			return out, corrupt(int64(pos), "aborted transaction entry version %d: only %d is known", v, abortedTxnVersion)
		}
		out = append(out, AbortedTxn{
			ProducerID:       int64(binary.BigEndian.Uint64(e[2:])),
			FirstOffset:      int64(binary.BigEndian.Uint64(e[10:])),
			LastOffset:       int64(binary.BigEndian.Uint64(e[18:])),
			LastStableOffset: int64(binary.BigEndian.Uint64(e[26:])),
		})
	}
	return out, nil
}

// txnIndex is one segment's .txnindex.
// Invariant: entries mirror the file and are sorted by LastOffset.
type txnIndex struct {
	file    string
	entries []AbortedTxn
}

// load reads the file if it exists; a torn tail is cut.
func (t *txnIndex) load(fs FS) error {
	t.entries = t.entries[:0]
	if !fs.Exists(t.file) {
		return nil
	}
	data, err := fs.ReadFile(t.file)
	if err != nil {
		return err
	}
	t.entries, err = DecodeAbortedTxns(data)
	if err != nil {
		if err := fs.Truncate(t.file, int64(len(t.entries)*AbortedTxnEntrySize)); err != nil {
			return err
		}
	}
	return nil
}

// append adds an entry, creating the file at the first one. An entry at or
// below the last one's marker is already there (recovery replays markers
// the index may hold) and is skipped.
func (t *txnIndex) append(fs FS, a AbortedTxn) error {
	if n := len(t.entries); n > 0 && a.LastOffset <= t.entries[n-1].LastOffset {
		return nil
	}
	if !fs.Exists(t.file) {
		if err := fs.Create(t.file); err != nil {
			return err
		}
	}
	if err := fs.Append(t.file, a.AppendTo(nil)); err != nil {
		return err
	}
	t.entries = append(t.entries, a)
	return nil
}

// truncateTo removes the entries whose marker is at or past offset
// (TransactionIndex.truncateTo).
func (t *txnIndex) truncateTo(fs FS, offset int64) error {
	n := len(t.entries)
	for n > 0 && t.entries[n-1].LastOffset >= offset {
		n--
	}
	if n == len(t.entries) {
		return nil
	}
	t.entries = t.entries[:n]
	return fs.Truncate(t.file, int64(n*AbortedTxnEntrySize))
}

func (t *txnIndex) flush(fs FS) error {
	if !fs.Exists(t.file) {
		return nil
	}
	return fs.Sync(t.file)
}

// collect appends the entries overlapping [fetchOffset, upperBound) and
// reports whether the search may stop: an entry's LSO reached upperBound,
// so no later segment can hold a transaction that began below it
// (TransactionIndex.collectAbortedTxns).
func (t *txnIndex) collect(dst []AbortedTxn, fetchOffset, upperBound int64) ([]AbortedTxn, bool) {
	for _, a := range t.entries {
		if a.LastOffset >= fetchOffset && a.FirstOffset < upperBound {
			dst = append(dst, a)
		}
		if a.LastStableOffset >= upperBound {
			return dst, true
		}
	}
	return dst, false
}

func (t *txnIndex) String() string { return fmt.Sprintf("%s (%d aborted)", t.file, len(t.entries)) }
