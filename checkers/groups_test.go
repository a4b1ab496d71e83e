package checkers

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/sim"
)

// TestAckedLossGroupsCountEveryRecord: 300 records lost, half excused by
// the acks=1 leader's crash and half not (acks=all), make two groups that
// count all 300, also the 100 past MaxAnomalies the verdict only counts,
// and every listed anomaly belongs to exactly one group.
func TestAckedLossGroupsCountEveryRecord(t *testing.T) {
	var h History
	for i := range 300 {
		acks := int16(1)
		if i >= 150 {
			acks = -1
		}
		op := send(i, "p1", "m"+strconv.Itoa(i), acks, sim.Time(i)*ms, sim.Time(i)*ms+ms/2, OK, int64(i))
		op.Leader = 1
		h.Ops = append(h.Ops, op)
	}
	f := final1(0, 1, Facts{ReplicationFactor: 2, Failures: []Failure{{Broker: 1, Kind: Crash, Time: 400 * ms}}},
		replica(0, Leader, 1, 0), dead(replica(1, NoRole, 0, 0)))
	v := AckedLoss(h, f)
	if len(v.Anomalies) != MaxAnomalies || v.Omitted != 100 {
		t.Fatalf("listed %d, omitted %d; want %d and 100", len(v.Anomalies), v.Omitted, MaxAnomalies)
	}
	if len(v.Groups) != 2 {
		t.Fatalf("%d groups, want 2: %v", len(v.Groups), v.Groups)
	}
	want := []AnomalyGroup{
		{Kind: "lost", Topic: "t", Count: 150, Listed: 150, From: 0, To: 149, AckedFrom: ms / 2, AckedTo: 149*ms + ms/2, Permitted: true, Acks: 1},
		{Kind: "lost", Topic: "t", Count: 150, Listed: 50, From: 150, To: 299, AckedFrom: 150*ms + ms/2, AckedTo: 299*ms + ms/2, Permitted: false, Acks: -1},
	}
	for i, g := range v.Groups {
		w := want[i]
		w.Reason = g.Reason
		if !reflect.DeepEqual(g, w) {
			t.Errorf("group %d = %+v, want %+v", i, g, w)
		}
	}
	if !strings.Contains(v.Groups[0].Reason, "acks=1 and the leader b1 failed") || !strings.HasPrefix(v.Groups[1].Reason, "not permitted") {
		t.Errorf("reasons: %q, %q", v.Groups[0].Reason, v.Groups[1].Reason)
	}
	for _, a := range v.Anomalies {
		g := v.Groups[a.Group-1]
		if a.Group < 1 || !g.sameGroup(a, h.Ops[a.Ops[0]].Acks) || !strings.HasSuffix(a.Description, "; "+a.Reason) {
			t.Fatalf("anomaly in group %d, or its description does not end with its reason: %s", a.Group, a)
		}
	}
	if got := v.Groups[0].String(); got != "150 records lost, offsets 0–149 of t-0, acknowledged (acks=1) 500.000µs–149.500ms simulated; "+v.Groups[0].Reason {
		t.Errorf("String = %q", got)
	}
}

// TestGroupNamesFewValues: a group of up to three records names them; a
// larger one only counts.
func TestGroupNamesFewValues(t *testing.T) {
	var gr grouper
	for i := range 4 {
		gr.add(Anomaly{Kind: "lost", Topic: "t", Value: "m" + strconv.Itoa(i), Reason: "r"}, -1, int64(i), ms, true)
		if i == 1 && !strings.HasPrefix(gr.groups[0].String(), "2 records lost (m0, m1), offsets 0–1 of t-0, acknowledged (acks=-1) 1.000ms simulated; r") {
			t.Errorf("two records: %s", gr.groups[0])
		}
	}
	if g := gr.groups[0]; g.Values != nil || !strings.HasPrefix(g.String(), "4 records lost, offsets 0–3") {
		t.Errorf("four records: %s", g)
	}
}
