package storage

import (
	"io/fs"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/kafkasim/kafkasim/sim"
)

func TestManagerPlacementAndCheckpoints(t *testing.T) {
	d := newDisk(t, nil)
	cfg := smallConfig()
	cfg.LogDirs = []string{"/d1", "/d2", "/d3"}
	m, err := OpenManager(d, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for p := int32(0); p < 7; p++ {
		tp := TopicPartition{"t", p}
		l, err := m.GetOrCreateLog(tp, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		appendN(t, l, 5, 0, 0)
		dirs = append(dirs, m.LogDir(tp))
	}
	if diff := cmp.Diff([]string{"/d1", "/d2", "/d3", "/d1", "/d2", "/d3", "/d1"}, dirs); diff != "" {
		t.Fatalf("placement (-want +got):\n%s", diff)
	}
	if err := m.DeleteLog(TopicPartition{"t", 1}); err != nil {
		t.Fatal(err)
	}
	m.GetOrCreateLog(TopicPartition{"u", 0}, nil, 0)
	if got := m.LogDir(TopicPartition{"u", 0}); got != "/d2" {
		t.Fatalf("after deleting t-1 the emptiest directory is /d2, got %s", got)
	}
	compact := cfg
	compact.CleanupPolicy = CleanupCompact
	if l, _ := m.GetOrCreateLog(TopicPartition{"__consumer_offsets", 0}, &compact, 0); !l.cfg.compact() {
		t.Fatal("topic config override ignored")
	}
	if err := m.WriteHighWatermarks([]PartitionOffset{{TopicPartition{"t", 0}, 3}, {TopicPartition{"t", 3}, 2}}); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteHighWatermarks([]PartitionOffset{{TopicPartition{"nope", 0}, 3}}); err == nil {
		t.Fatal("high watermark of an unknown partition accepted")
	}
	b, _ := d.ReadFile("/d1/replication-offset-checkpoint")
	if string(b) != "0\n2\nt 0 3\nt 3 2\n" {
		t.Fatalf("replication-offset-checkpoint %q", b)
	}
	if err := m.Tick(sim.Time(61*sim.Second), nil); err != nil {
		t.Fatal(err)
	}
	b, _ = d.ReadFile("/d1/recovery-point-offset-checkpoint")
	if string(b) != "0\n3\nt 0 0\nt 3 0\nt 6 0\n" {
		t.Fatalf("recovery-point-offset-checkpoint %q", b)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	d.PowerLoss()
	m2, err := OpenManager(d, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(m2.Partitions()) != 8 || d.Exists("/d1/"+CleanShutdownFile) {
		t.Fatalf("reopened %v", m2.Partitions())
	}
	for _, tp := range m2.Partitions() {
		l, _ := m2.Log(tp)
		if l.Recovery().RecoveredSegments != 0 {
			t.Fatalf("%s recovered after a clean shutdown", tp)
		}
		if tp.Topic == "t" && l.LogEndOffset() != 5 {
			t.Fatalf("%s LEO %d", tp, l.LogEndOffset())
		}
	}
	hws, err := m2.ReadHighWatermarks()
	if err != nil || len(hws) != 2 {
		t.Fatalf("high watermarks %v %v", hws, err)
	}
	// Export for Kafka's tools: the files, with Kafka's names.
	out := t.TempDir()
	if err := m2.Export(out, true); err != nil {
		t.Fatal(err)
	}
	var names []string
	filepath.WalkDir(out, func(p string, e fs.DirEntry, err error) error {
		if err == nil && !e.IsDir() {
			rel, _ := filepath.Rel(out, p)
			names = append(names, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(names)
	for _, want := range []string{"d1/t-0/00000000000000000000.log", "d1/t-0/00000000000000000000.index", "d1/t-0/leader-epoch-checkpoint", "d2/replication-offset-checkpoint", "d3/log-start-offset-checkpoint"} {
		if i := sort.SearchStrings(names, want); i == len(names) || names[i] != want {
			t.Errorf("export lacks %s (has %v)", want, names)
		}
	}
}

func TestManagerRecoversAfterCrash(t *testing.T) {
	d := newDisk(t, nil)
	cfg := smallConfig()
	m, _ := OpenManager(d, cfg, 0)
	l, _ := m.GetOrCreateLog(tp0, nil, 0)
	appendN(t, l, 40, 0, 0)
	l.Flush()
	m.CheckpointRecoveryPoints()
	appendN(t, l, 10, 0, 0)
	d.PowerLoss()
	m2, err := OpenManager(d, cfg, 0)
	if err != nil {
		t.Fatal(err)
	}
	l2, _ := m2.Log(tp0)
	if l2.LogEndOffset() != 40 || l2.RecoveryPoint() != 40 || l2.Recovery().RecoveredSegments != 1 {
		t.Fatalf("LEO %d recovery point %d recovered %d", l2.LogEndOffset(), l2.RecoveryPoint(), l2.Recovery().RecoveredSegments)
	}
	if err := writeFileAtomic(d, "/data/recovery-point-offset-checkpoint", []byte("0\n1\nt 0\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenManager(d, cfg, 0); err == nil {
		t.Fatal("a malformed recovery-point-offset-checkpoint loads")
	}
}
