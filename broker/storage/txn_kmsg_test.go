package storage

import (
	"hash/crc32"
	"testing"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestControlBatchReadByKmsg: an independent Kafka codec (franz-go's kmsg)
// reads kafkasim's COMMIT control batch: the batch header (CRC-32C over
// everything after the CRC, attributes transactional|control, producer id
// and epoch, no sequence), then the record, its ControlRecordKey and its
// EndTxnMarker.
func TestControlBatchReadByKmsg(t *testing.T) {
	b := NewControlBatch(77, 4, 9, true, 5000)
	b.BaseOffset, b.PartitionLeaderEpoch, b.Records[0].Offset = 10, 2, 10
	raw := b.AppendTo(nil)
	var kb kmsg.RecordBatch
	if err := kb.ReadFrom(raw); err != nil {
		t.Fatal(err)
	}
	if kb.FirstOffset != 10 || kb.Magic != 2 || kb.Attributes != 0x30 || kb.ProducerID != 77 || kb.ProducerEpoch != 4 ||
		kb.FirstSequence != -1 || kb.NumRecords != 1 || kb.PartitionLeaderEpoch != 2 {
		t.Fatalf("kmsg read %+v", kb)
	}
	if crc := int32(crc32.Checksum(raw[21:], crc32.MakeTable(crc32.Castagnoli))); crc != kb.CRC {
		t.Fatalf("CRC %d, kmsg read %d", crc, kb.CRC)
	}
	var rec kmsg.Record
	if err := rec.ReadFrom(kb.Records); err != nil {
		t.Fatal(err)
	}
	var key kmsg.ControlRecordKey
	if err := key.ReadFrom(rec.Key); err != nil || key.Version != 0 || key.Type != kmsg.ControlRecordKeyTypeCommit {
		t.Fatalf("control key %+v, %v", key, err)
	}
	var m kmsg.EndTxnMarker
	if err := m.ReadFrom(rec.Value); err != nil || m.Version != 0 || m.CoordinatorEpoch != 9 {
		t.Fatalf("marker %+v, %v", m, err)
	}
}
