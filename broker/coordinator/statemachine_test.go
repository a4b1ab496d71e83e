package coordinator

import (
	"testing"

	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
	"pgregory.net/rapid"
)

// smClient is the model's view of one consumer: what it was told.
type smClient struct {
	id   string
	gen  int32
	join *joinResult
}

// coordMachine drives a coordinator with random clients and checks it
// against a small model of the classic protocol: what each client was told
// (member id, generation) bounds what the coordinator may answer next.
type coordMachine struct {
	h       *harness
	clients []*smClient
	maxGen  int32
	leaders map[int32]string                             // generation -> leader every join answer named
	owned   map[int32]map[assignor.TopicPartition]string // generation -> partition -> member told it owns it
	commits map[int32]int64                              // partition -> last offset acknowledged
}

const smGroup = "g"

func (m *coordMachine) init(t *rapid.T) {
	cfg := testConfig()
	cfg.InitialRebalanceDelay = sim.Duration(rapid.IntRange(0, 2).Draw(t, "delay")) * sim.Second
	m.h = newHarness(t, cfg)
	m.h.lead(m.h.c.PartitionFor(smGroup))
	for i := 0; i < 3; i++ {
		m.clients = append(m.clients, &smClient{gen: -1})
	}
	m.leaders, m.owned, m.commits = map[int32]string{}, map[int32]map[assignor.TopicPartition]string{}, map[int32]int64{}
}

func (m *coordMachine) client(t *rapid.T) *smClient {
	return m.clients[rapid.IntRange(0, len(m.clients)-1).Draw(t, "client")]
}

// absorb records a join answer that arrived.
func (m *coordMachine) absorb(t *rapid.T, c *smClient) {
	if c.join == nil || c.join.resp == nil {
		return
	}
	r := c.join.resp
	c.join = nil
	switch r.ErrorCode {
	case 0:
		if r.Generation < c.gen {
			t.Fatalf("join answer generation %d below the client's %d", r.Generation, c.gen)
		}
		if l, ok := m.leaders[r.Generation]; ok && l != r.LeaderID {
			t.Fatalf("generation %d has two leaders: %s and %s", r.Generation, l, r.LeaderID)
		}
		m.leaders[r.Generation] = r.LeaderID
		c.id, c.gen = r.MemberID, r.Generation
		if r.LeaderID == c.id {
			resp := m.h.sync(smGroup, c.id, c.gen, rangeAssign(t, r, map[string]int32{"t": 6}))
			m.recordSync(t, c, resp)
		}
	case kerr.UnknownMemberID.Code:
		c.id, c.gen = "", -1
	}
}

// recordSync records the partitions a sync answer gave c, checking that no
// two members of one generation were told they own the same partition.
func (m *coordMachine) recordSync(t *rapid.T, c *smClient, resp *kmsg.SyncGroupResponse) {
	if resp == nil || resp.ErrorCode != 0 {
		return
	}
	tps, err := assignor.DecodeAssignment(resp.MemberAssignment)
	if err != nil {
		t.Fatal(err)
	}
	if m.owned[c.gen] == nil {
		m.owned[c.gen] = map[assignor.TopicPartition]string{}
	}
	for _, tp := range tps {
		if o, ok := m.owned[c.gen][tp]; ok && o != c.id {
			t.Fatalf("generation %d: %v assigned to %s and %s", c.gen, tp, o, c.id)
		}
		m.owned[c.gen][tp] = c.id
	}
}

func (m *coordMachine) Join(t *rapid.T) {
	c := m.client(t)
	if c.join != nil {
		return
	}
	if c.id == "" {
		id, j := m.h.joinFully(smGroup, "t")
		c.id, c.join = id, j
	} else {
		c.join = m.h.join(smGroup, c.id, "t")
	}
	m.absorbAll(t)
}

func (m *coordMachine) Sync(t *rapid.T) {
	c := m.client(t)
	if c.id == "" || c.join != nil {
		return
	}
	m.recordSync(t, c, m.h.sync(smGroup, c.id, c.gen, nil))
}

func (m *coordMachine) Heartbeat(t *rapid.T) {
	c := m.client(t)
	if c.id == "" || c.join != nil {
		return
	}
	code := m.h.heartbeat(smGroup, c.id, c.gen)
	_, gen, _, members, _ := m.h.c.Group(smGroup)
	member := false
	for _, id := range members {
		member = member || id == c.id
	}
	switch code {
	case 0:
		if c.gen != gen || !member {
			t.Fatalf("heartbeat NONE for %s gen %d; group gen %d members %v", c.id, c.gen, gen, members)
		}
	case kerr.IllegalGeneration.Code:
		if c.gen == gen {
			t.Fatalf("ILLEGAL_GENERATION for the current generation %d", gen)
		}
	case kerr.UnknownMemberID.Code:
		c.id, c.gen = "", -1
	}
	if c.gen < gen && code == 0 {
		t.Fatalf("stale generation %d accepted (current %d)", c.gen, gen)
	}
}

func (m *coordMachine) Commit(t *rapid.T) {
	c := m.client(t)
	if c.id == "" || c.join != nil {
		return
	}
	p := int32(rapid.IntRange(0, 5).Draw(t, "partition"))
	off := rapid.Int64Range(0, 100).Draw(t, "offset")
	st, gen, _, _, _ := m.h.c.Group(smGroup)
	code, ok := m.h.commitOffset(smGroup, c.id, c.gen, "t", p, off)
	if !ok {
		t.Fatalf("commit not answered with appends committed at once")
	}
	if code == 0 {
		if c.gen != gen || (st != Stable && st != PreparingRebalance) {
			t.Fatalf("commit NONE at gen %d in %v (group gen %d)", c.gen, st, gen)
		}
		m.commits[p] = off
	}
}

func (m *coordMachine) Leave(t *rapid.T) {
	c := m.client(t)
	if c.id == "" {
		return
	}
	m.h.c.LeaveGroup(m.h.now, leaveRequest(c.id))
	if c.join != nil {
		m.absorb(t, c)
	}
	c.id, c.gen, c.join = "", -1, nil
	m.absorbAll(t)
}

func (m *coordMachine) Advance(t *rapid.T) {
	m.h.advance(sim.Duration(rapid.IntRange(1, 80).Draw(t, "tenths")) * 100 * sim.Millisecond)
	m.absorbAll(t)
}

func (m *coordMachine) absorbAll(t *rapid.T) {
	for _, c := range m.clients {
		m.absorb(t, c)
	}
}

func (m *coordMachine) Check(t *rapid.T) {
	st, gen, leader, members, ok := m.h.c.Group(smGroup)
	if !ok {
		return
	}
	if gen < m.maxGen {
		t.Fatalf("generation went back from %d to %d", m.maxGen, gen)
	}
	m.maxGen = gen
	if (st == Empty) != (len(members) == 0) && st != PreparingRebalance {
		t.Fatalf("state %v with members %v", st, members)
	}
	if len(members) > 0 && leader == "" {
		t.Fatalf("members %v without a leader", members)
	}
	for p, off := range m.commits {
		if got, _ := m.h.fetchOffset(smGroup, "t", p); got != off {
			t.Fatalf("t-%d: fetched %d, last acknowledged commit %d", p, got, off)
		}
	}
}

// TestCoordinatorStateMachine runs random join/sync/heartbeat/commit/leave
// sequences with the clock moving, against the model's expectations.
func TestCoordinatorStateMachine(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := &coordMachine{}
		m.init(t)
		t.Repeat(rapid.StateMachineActions(m))
	})
}
