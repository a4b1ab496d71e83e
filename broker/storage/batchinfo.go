package storage

// BatchInfo is what a batch's header says, without its records: enough to
// rebuild producer state (Kafka's ProducerStateManager reads the same
// fields) or walk a log.
type BatchInfo struct {
	BaseOffset, LastOffset int64
	Size                   int64
	Magic                  int8
	LeaderEpoch            int32 // -1 below magic 2
	ProducerID             int64 // NoProducerID below magic 2
	ProducerEpoch          int16
	BaseSequence           int32
	Count                  int32
	Attributes             int16 // 0 below magic 2
}

// IsTransactional reports attribute bit 4: the batch belongs to a
// transaction (KIP-98).
func (b BatchInfo) IsTransactional() bool { return b.Attributes&TransactionalFlagMask != 0 }

// IsControl reports attribute bit 5: the batch holds a control record (a
// transaction marker), never returned to applications.
func (b BatchInfo) IsControl() bool { return b.Attributes&ControlFlagMask != 0 }

// LastSequence returns the sequence of the batch's last record, wrapping
// at the int32 limit as Kafka does.
func (b BatchInfo) LastSequence() int32 {
	if b.BaseSequence < 0 {
		return b.BaseSequence
	}
	return int32((int64(b.BaseSequence) + int64(b.Count) - 1) % (1 << 31))
}

// ParseBatchInfo reads the header of the batch at the start of b. It checks
// lengths (not the CRC) and never panics.
func ParseBatchInfo(b []byte) (BatchInfo, error) {
	h, err := parseHeader(b)
	if err != nil {
		return BatchInfo{}, err
	}
	info := BatchInfo{BaseOffset: h.baseOffset, LastOffset: h.lastOffset, Size: h.size, Magic: h.magic,
		LeaderEpoch: h.leaderEpoch, ProducerID: NoProducerID, ProducerEpoch: NoProducerEpoch, BaseSequence: NoSequence, Count: h.count}
	if h.magic >= MagicV2 {
		info.ProducerID, info.ProducerEpoch, info.BaseSequence = h.producerID, h.producerEpoch, h.baseSequence
		info.Attributes = h.attrs
	}
	return info, nil
}

// Batches calls fn with the header of every batch from offset on, in order,
// across segments.
func (l *Log) Batches(from int64, fn func(BatchInfo)) error {
	off := max(from, l.logStartOffset)
	leo := l.LogEndOffset()
	for off < leo {
		data, err := l.Read(off, 1<<20, leo)
		if err != nil {
			return err
		}
		if len(data) == 0 {
			break
		}
		for len(data) > 0 {
			info, err := ParseBatchInfo(data)
			if err != nil {
				return err
			}
			fn(info)
			data = data[info.Size:]
			off = info.LastOffset + 1
		}
	}
	return nil
}
