package serve

import (
	"testing"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// syncAnswer is a SyncGroup request of member at generation and its
// answer handing it partitions of topic t.
func syncAnswer(member string, generation int32, partitions ...int32) (*kmsg.SyncGroupRequest, *kmsg.SyncGroupResponse) {
	req := kmsg.NewPtrSyncGroupRequest()
	req.Group, req.MemberID, req.Generation = "g", member, generation
	a := kmsg.ConsumerMemberAssignment{Topics: []kmsg.ConsumerMemberAssignmentTopic{{Topic: "t", Partitions: partitions}}}
	resp := kmsg.NewPtrSyncGroupResponse()
	resp.MemberAssignment = a.AppendTo(nil)
	return req, resp
}

// TestSyncGroupAnswersJudged: the assignments SyncGroup answers give are
// the group checker's Assign operations: two members given t/0 in one
// generation is a double owner; t/0 moving between generations is not,
// and the member that gave it up has it revoked.
func TestSyncGroupAnswersJudged(t *testing.T) {
	for _, c := range []struct {
		name   string
		gens   [2]int32
		result checkers.Result
	}{{"one generation", [2]int32{1, 1}, checkers.ResultViolation}, {"the next generation", [2]int32{1, 2}, checkers.ResultOK}} {
		hs := &historian{rec: checkers.NewRecorder()}
		sync := func(req *kmsg.SyncGroupRequest, resp *kmsg.SyncGroupResponse) { hs.synced(req, resp, 0) }
		sync(syncAnswer("m-a", c.gens[0], 0, 1))
		if c.gens[1] != c.gens[0] {
			sync(syncAnswer("m-a", c.gens[1], 1))
		}
		sync(syncAnswer("m-b", c.gens[1], 0))
		h := hs.rec.Finish(0)
		v := checkers.Groups(h, checkers.Final{})
		if v.Result != c.result || len(h.Consumers) != 2 {
			t.Fatalf("%s: group %v with %d consumers declared, want %v with 2\n%v", c.name, v.Result, len(h.Consumers), c.result, h.Ops)
		}
		revoked := 0
		for _, op := range h.Ops {
			if op.Kind == checkers.Revoke && op.Process == "m-a" && op.Partition == 0 {
				revoked++
			}
		}
		if want := map[bool]int{true: 0, false: 1}[c.gens[0] == c.gens[1]]; revoked != want {
			t.Errorf("%s: m-a's t/0 revoked %d times, want %d", c.name, revoked, want)
		}
	}
}
