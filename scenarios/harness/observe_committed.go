package harness

import (
	"bytes"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
)

// committedEntries appends l's entries in [from, below) to out, for the
// monitor's ever-committed records of partition k (tps[k]); as
// appendEntries does, except that it leaves out the batches it passed on
// whole before, byte for byte.
//
// NB: each new leader's log is read again from its start (readTo is per
// broker and epoch), so most batches were passed on already. The monitor
// keeps every entry it is given and ignores one it has (an entry is an
// offset, the batch's leader epoch and a value: all in the batch's
// bytes), so the entries of a batch identical to one passed on whole
// change nothing, and comparing the bytes costs less than decoding them.
func (o *Observer) committedEntries(out []checkers.Entry, k int, l *storage.Log, from, below int64) []checkers.Entry {
	if o.passed == nil {
		o.passed = make([]map[int64][]byte, len(o.Partitions))
	}
	if o.passed[k] == nil {
		o.passed[k] = map[int64][]byte{}
	}
	passed := o.passed[k]
	if o.values == nil {
		o.values = map[string]string{}
	}
	rb := &o.decoded
	off := max(from, l.LogStartOffset())
	for off < l.LogEndOffset() {
		data, err := l.Read(off, 1<<20, l.LogEndOffset())
		if err != nil || len(data) == 0 {
			return out
		}
		for len(data) > 0 {
			// A v2 batch wholly in range that was passed on whole before, in
			// the same bytes, is skipped; anything else is decoded as
			// walkLogEntries does.
			var raw []byte
			if info, err := storage.ParseBatchInfo(data); err == nil && info.Magic >= storage.MagicV2 && info.Size <= int64(len(data)) &&
				info.BaseOffset >= from && info.LastOffset < below {
				raw = data[:info.Size]
				if prev, ok := passed[info.BaseOffset]; ok && bytes.Equal(prev, raw) {
					data = data[info.Size:]
					off = info.LastOffset + 1
					continue
				}
			}
			n, err := storage.DecodeBatchView(data, rb)
			if err != nil || rb.BaseOffset >= below {
				return out
			}
			for _, r := range rb.Records {
				// NB: a control batch's marker (KIP-98) is no record of the
				// application's: the checkers see data records only.
				if r.Offset >= from && r.Offset < below && rb.Attributes&storage.ControlFlagMask == 0 {
					out = append(out, checkers.Entry{Offset: r.Offset, LeaderEpoch: rb.PartitionLeaderEpoch, Value: o.intern(r.Value), Key: o.intern(r.Key)})
				}
			}
			if raw != nil {
				passed[rb.BaseOffset] = append(passed[rb.BaseOffset][:0], raw...)
			}
			data = data[n:]
			off = rb.NextOffset()
		}
	}
	return out
}
