package reports

import (
	"bytes"
	"image/png"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/scenarios"
	"github.com/kafkasim/kafkasim/scenarios/harness"
)

func runScenario(t *testing.T, name, variant string) *harness.Result {
	t.Helper()
	s, err := scenarios.Load(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := harness.Run(s, variant, harness.Options{Seed: 1, Timeline: true})
	if err != nil || res.Failed != "" {
		t.Fatal(err, res.Failed)
	}
	return res
}

// shapesWith returns the timeline's shapes of a class whose title holds text.
func shapesWith(dr *drawing, class, text string) []shape {
	var out []shape
	for _, s := range dr.Shapes {
		if s.Class == class && strings.Contains(s.Title, text) {
			out = append(out, s)
		}
	}
	return out
}

// TestTimelineTellsKIP101: KIP-101's first scenario as the KIP draws it.
// Under HW truncation b1 leads epoch 0 and acknowledges m2; b0 restarts
// and truncates m2 away; b1 crashes; b0 leads epoch 1; b1 comes back and
// truncates m2 too. The timeline shows both leaderships with their epochs,
// the crash as a band on b1's lanes, m2 acknowledged on b1's lane and the
// two truncations that removed it on the lanes of the replicas that made
// them, in time order.
func TestTimelineTellsKIP101(t *testing.T) {
	res := runScenario(t, "kip101-hw-lag", "hw")
	var d htmlReport
	d.timeline(res)
	dr := d.timelineDrawing
	if dr == nil {
		t.Fatal("no timeline")
	}
	lead0, lead1 := shapesWith(dr, "lead", "b1 leader e0"), shapesWith(dr, "lead", "b0 leader e1")
	if len(lead0) != 1 || len(lead1) != 1 || lead1[0].X < lead0[0].X+lead0[0].W-1 {
		t.Fatalf("leaderships: b1 e0 %+v, b0 e1 %+v (b0's must start as b1's ends)", lead0, lead1)
	}
	acked := shapesWith(dr, "acked-lost", "acknowledged m2 at offset 1")
	if len(acked) != 1 || acked[0].Y < lead0[0].Y || acked[0].Y > lead0[0].Y+lead0[0].H {
		t.Fatalf("m2's acknowledgement is not on b1's lane: %+v", acked)
	}
	b0cut, b1cut := shapesWith(dr, "truncated-lost", "b0 at "), shapesWith(dr, "truncated-lost", "b1 at ")
	if len(b0cut) != 1 || len(b1cut) != 1 {
		t.Fatalf("truncations of m2: b0 %+v, b1 %+v; want one each", b0cut, b1cut)
	}
	if b0cut[0].Y < lead1[0].Y || b0cut[0].Y > lead1[0].Y+lead1[0].H || !(acked[0].X <= b0cut[0].X+2 && b0cut[0].X < b1cut[0].X) {
		t.Errorf("b0's truncation is not on b0's lane, or the marks are out of order: ack x=%v, b0 cut %+v, b1 cut %+v", acked[0].X, b0cut[0], b1cut[0])
	}
	crash := shapesWith(dr, "fault crash", "crash b1 ")
	if len(crash) < 2 {
		t.Errorf("b1's crash covers %d lanes, want its replica lane and its event lane", len(crash))
	}
	var svg bytes.Buffer
	if err := dr.svg(&svg, "timeline"); err != nil {
		t.Fatal(err)
	}
	// One seed, one picture: the timeline is deterministic.
	var again htmlReport
	again.timeline(runScenario(t, "kip101-hw-lag", "hw"))
	var svg2 bytes.Buffer
	if err := again.timelineDrawing.svg(&svg2, "timeline"); err != nil || svg.String() != svg2.String() {
		t.Error("two runs of one seed drew different timelines")
	}
	var pic bytes.Buffer
	if err := WriteTimeline(&pic, res, "png"); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&pic)
	if err != nil || img.Bounds().Dx() < int(timelineWidth) {
		t.Fatalf("timeline.png: %v, %v", err, img.Bounds())
	}
	if err := WriteTimeline(&pic, res, "pdf"); err == nil || !strings.Contains(err.Error(), "want svg or png") {
		t.Errorf("an unknown format: %v", err)
	}
}

// TestTimelineKRaftQuorumLane: a KRaft run's timeline has a lane for the
// controller quorum's leader, one term per leader, each with its epoch,
// and a ZooKeeper run's has none.
func TestTimelineKRaftQuorumLane(t *testing.T) {
	var d htmlReport
	d.timeline(runScenario(t, "kraft-controller-failover", ""))
	terms := shapesWith(d.timelineDrawing, "quorum", "quorum leader ")
	if len(terms) < 2 || !d.HasQuorum {
		t.Fatalf("%d quorum terms drawn, want the first leader's and its successor's", len(terms))
	}
	if !strings.Contains(terms[0].Title, " e1 ") || !strings.Contains(terms[1].Title, " e2 ") {
		t.Errorf("terms: %q, %q", terms[0].Title, terms[1].Title)
	}
	var zk htmlReport
	zk.timeline(runScenario(t, "kip101-hw-lag", "hw"))
	if zk.HasQuorum || len(shapesWith(zk.timelineDrawing, "quorum", "")) > 0 {
		t.Error("a ZooKeeper run has a quorum lane")
	}
}
