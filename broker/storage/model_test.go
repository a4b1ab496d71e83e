package storage

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
	"pgregory.net/rapid"
)

// logModel is the in-memory model of a partition log: every record ever
// written at each offset (older history is kept so that segments a crash
// brings back below the log start can still be checked), the batch
// boundaries, and the synced point.
type logModel struct {
	values  map[int64][]byte
	epochs  map[int64]int32
	batches []int64 // base offsets of the live batches, increasing
	leo     int64
	start   int64
	synced  int64 // nothing below it may be lost
}

// truncate removes the batches holding offsets >= to (a batch holding to
// is removed whole).
func (m *logModel) truncate(to int64) {
	for len(m.batches) > 0 && m.leo-1 >= to {
		m.leo = m.batches[len(m.batches)-1]
		m.batches = m.batches[:len(m.batches)-1]
	}
	m.start = min(m.start, m.leo)
	m.synced = min(m.synced, m.leo)
}

// TestLogMatchesModel drives a log through appends, reads, truncations,
// rolls, flushes, retention and power losses, and checks it against the
// model: reads always agree, and nothing below the synced point is lost.
func TestLogMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		cfg := DefaultConfig()
		cfg.LogDirs = []string{"/data"}
		cfg.SegmentBytes = int64(rapid.IntRange(200, 2000).Draw(rt, "segmentBytes"))
		cfg.IndexIntervalBytes = int64(rapid.IntRange(0, 300).Draw(rt, "indexInterval"))
		cfg.RetentionMs = sim.Ms(int64(rapid.IntRange(1000, 20000).Draw(rt, "retentionMs")))
		var ch sim.Chooser
		diskCfg := sim.DiskConfig{}
		if rapid.Bool().Draw(rt, "randomCrash") {
			ch = sim.NewRandom(rapid.Uint64().Draw(rt, "seed"))
			diskCfg.TearProbability = 0.5
		}
		d, err := sim.NewDisk(diskCfg, ch)
		if err != nil {
			rt.Fatal(err)
		}
		open := func(rp, lso int64, now sim.Time) *Log {
			l, err := OpenLog(d, "/data/t-0", tp0, cfg, rp, lso, now)
			if err != nil {
				rt.Fatalf("open: %v", err)
			}
			return l
		}
		l := open(0, 0, 0)
		m := &logModel{values: map[int64][]byte{}, epochs: map[int64]int32{}}
		var now sim.Time
		var epoch int32
		var ckptRP, ckptLSO int64

		checkRecord := func(r Record, batchEpoch int32) {
			want, ok := m.values[r.Offset]
			if !ok || !bytes.Equal(r.Value, want) {
				rt.Fatalf("offset %d holds %q, model %q", r.Offset, r.Value, want)
			}
			if batchEpoch != m.epochs[r.Offset] {
				rt.Fatalf("offset %d has epoch %d, model %d", r.Offset, batchEpoch, m.epochs[r.Offset])
			}
		}

		rt.Repeat(map[string]func(*rapid.T){
			"append": func(rt *rapid.T) {
				if rapid.IntRange(0, 4).Draw(rt, "bump") == 0 {
					epoch++
				}
				n := rapid.IntRange(1, 5).Draw(rt, "n")
				recs := make([]Record, n)
				for i := range recs {
					off := m.leo + int64(i)
					recs[i] = Record{Timestamp: int64(now / sim.Time(sim.Millisecond)), Value: fmt.Appendf(nil, "o%d-%d", off, rapid.IntRange(0, 1<<20).Draw(rt, "v"))}
				}
				info, err := l.AppendAsLeader(recs, epoch, now)
				if err != nil {
					rt.Fatal(err)
				}
				if info.FirstOffset != m.leo {
					rt.Fatalf("appended at %d, model LEO %d", info.FirstOffset, m.leo)
				}
				m.batches = append(m.batches, m.leo)
				for i := range recs {
					m.values[m.leo+int64(i)] = recs[i].Value
					m.epochs[m.leo+int64(i)] = epoch
				}
				m.leo += int64(n)
			},
			"read": func(rt *rapid.T) {
				off := rapid.Int64Range(m.start, m.leo).Draw(rt, "offset")
				maxBytes := rapid.IntRange(1, 3000).Draw(rt, "maxBytes")
				data, err := l.Read(off, maxBytes, m.leo)
				if err != nil {
					rt.Fatalf("read %d: %v", off, err)
				}
				bs, err := DecodeBatches(data)
				if err != nil {
					rt.Fatalf("read %d: %v", off, err)
				}
				if off < m.leo && (len(bs) == 0 || bs[0].BaseOffset > off || bs[0].LastOffset() < off) {
					rt.Fatalf("read %d returned %d batches not starting at it", off, len(bs))
				}
				for _, b := range bs {
					for _, r := range b.Records {
						checkRecord(r, b.PartitionLeaderEpoch)
					}
				}
			},
			"truncate": func(rt *rapid.T) {
				to := rapid.Int64Range(m.start, m.leo).Draw(rt, "to")
				if err := l.TruncateTo(to); err != nil {
					rt.Fatal(err)
				}
				m.truncate(to)
				if epoch > 0 && rapid.Bool().Draw(rt, "newLeader") {
					epoch++
				}
			},
			"roll": func(rt *rapid.T) {
				if err := l.Roll(); err != nil {
					rt.Fatal(err)
				}
				m.synced = m.leo
			},
			"flush": func(rt *rapid.T) {
				if err := l.Flush(); err != nil {
					rt.Fatal(err)
				}
				m.synced = m.leo
			},
			"retention": func(rt *rapid.T) {
				now = now.Add(sim.Duration(rapid.IntRange(0, 5000).Draw(rt, "advanceMs")) * sim.Millisecond)
				if rapid.Bool().Draw(rt, "deleteRecords") {
					to := rapid.Int64Range(m.start, m.leo).Draw(rt, "newStart")
					if err := l.MaybeIncrementLogStartOffset(to); err != nil {
						rt.Fatal(err)
					}
				}
				if _, err := l.DeleteOldSegments(now, m.leo); err != nil {
					rt.Fatal(err)
				}
				if l.LogStartOffset() < m.start {
					rt.Fatalf("log start went back from %d to %d", m.start, l.LogStartOffset())
				}
				m.start = l.LogStartOffset()
			},
			"checkpoint": func(rt *rapid.T) {
				ckptRP, ckptLSO = l.RecoveryPoint(), l.LogStartOffset()
			},
			"crash": func(rt *rapid.T) {
				d.PowerLoss()
				l = open(ckptRP, ckptLSO, now)
				leo := l.LogEndOffset()
				if leo == ckptLSO && l.Size() == 0 && l.LogStartOffset() == leo && m.synced <= leo {
					// The checkpointed log start is past what survived (a
					// truncation below it was not checkpointed): the log
					// restarts empty there, and so does the model.
					m.batches, m.leo, m.start, m.synced = nil, leo, leo, leo
				}
				if leo < m.synced || leo > m.leo {
					rt.Fatalf("after power loss LEO %d, want within [synced %d, LEO %d]", leo, m.synced, m.leo)
				}
				// A log start checkpoint taken before a truncation lowered the
				// log start is stale, and a restart goes back to it.
				if l.LogStartOffset() > max(m.start, ckptLSO) {
					rt.Fatalf("after power loss log start %d, above the model's %d and the checkpoint's %d", l.LogStartOffset(), m.start, ckptLSO)
				}
				for _, r := range readAll(rt, l, l.LogStartOffset()) {
					want := m.values[r.Offset]
					if !bytes.Equal(r.Value, want) {
						rt.Fatalf("after power loss offset %d holds %q, model %q", r.Offset, r.Value, want)
					}
				}
				m.truncate(leo)
				if m.leo != leo {
					rt.Fatalf("recovered LEO %d is not a batch boundary of the model (%d)", leo, m.leo)
				}
				m.start = l.LogStartOffset()
				// What recovery read back came from the disk's durable content.
				m.synced = leo
				if lat := l.EpochCache().LatestEpoch(); lat > epoch {
					rt.Fatalf("epoch cache holds epoch %d above the latest %d", lat, epoch)
				}
				epoch++
			},
			"": func(rt *rapid.T) {
				if l.LogEndOffset() != m.leo || l.LogStartOffset() != m.start {
					rt.Fatalf("LEO %d start %d, model %d %d", l.LogEndOffset(), l.LogStartOffset(), m.leo, m.start)
				}
				if rp := l.RecoveryPoint(); rp > m.leo {
					rt.Fatalf("recovery point %d past the LEO %d", rp, m.leo)
				}
				for _, e := range l.EpochCache().Entries() {
					// An entry may start at the LEO only when truncateFromStart
					// moved it to a log start offset equal to the LEO.
					if e.StartOffset > m.leo || e.StartOffset == m.leo && e.StartOffset != m.start {
						rt.Fatalf("epoch entry %v at or past the LEO %d", e, m.leo)
					}
					if e.StartOffset >= m.start && e.StartOffset < m.leo && m.epochs[e.StartOffset] != e.Epoch {
						rt.Fatalf("epoch entry %v, but the model has epoch %d there", e, m.epochs[e.StartOffset])
					}
				}
			},
		})
	})
}
