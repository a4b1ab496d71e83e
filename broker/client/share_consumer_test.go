package client

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fakeShare is a one-broker share group (test-only: one partition t-0,
// every member assigned it, records acquired one per fetch request of each
// member, locks of lock, delivery limit 5): enough of KIP-932's
// SharePartition to drive the client.
type fakeShare struct {
	enc      wire.Encoder
	values   []string
	state    []int8 // 0 available, 1 acquired, 2 acknowledged, 4 archived
	owner    []string
	expires  []sim.Time
	count    []int16
	lock     sim.Duration
	sessions map[string]int32 // member -> expected next epoch
	acks     []string         // "member offset type"
	// hideMeta answers the first hideMeta Metadata requests without the
	// topic; onceAssign sends the assignment only in the first answer to
	// a member (the coordinator sends it when it changes).
	hideMeta   int
	onceAssign bool
	assigned   map[string]bool
}

var fakeTopicID = [16]byte{1}

func (f *fakeShare) Start(*sim.Context)                      {}
func (f *fakeShare) Timer(*sim.Context, sim.TimerID, string) {}

func (f *fakeShare) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	req := m.(*wire.Request)
	var resp kmsg.Response
	switch body := req.Body.(type) {
	case *kmsg.MetadataRequest:
		r := kmsg.NewPtrMetadataResponse()
		r.Brokers = []kmsg.MetadataResponseBroker{{NodeID: 0, Host: "b0", Port: 9092}}
		name := "t"
		r.Topics = []kmsg.MetadataResponseTopic{{Topic: &name, TopicID: fakeTopicID, Partitions: []kmsg.MetadataResponseTopicPartition{{Partition: 0, Leader: 0}}}}
		if f.hideMeta > 0 {
			f.hideMeta--
			r.Topics[0] = kmsg.MetadataResponseTopic{Topic: &name, ErrorCode: kerr.UnknownTopicOrPartition.Code}
		}
		resp = r
	case *kmsg.FindCoordinatorRequest:
		r := kmsg.NewPtrFindCoordinatorResponse()
		r.NodeID = 0
		resp = r
	case *kmsg.ShareGroupHeartbeatRequest:
		r := kmsg.NewPtrShareGroupHeartbeatResponse()
		r.MemberID, r.MemberEpoch, r.HeartbeatIntervalMillis = &body.MemberID, 1, 100
		if body.MemberEpoch >= 0 && !(f.onceAssign && f.assigned[body.MemberID]) {
			if f.assigned == nil {
				f.assigned = map[string]bool{}
			}
			f.assigned[body.MemberID] = true
			r.Assignment = &kmsg.ShareGroupHeartbeatResponseAssignment{TopicPartitions: []kmsg.ShareGroupHeartbeatResponseAssignmentTopicPartition{{TopicID: fakeTopicID, Partitions: []int32{0}}}}
		}
		resp = r
	case *kmsg.ShareFetchRequest:
		resp = f.fetch(ctx, body)
	case *kmsg.ShareAcknowledgeRequest:
		r := kmsg.NewPtrShareAcknowledgeResponse()
		for _, t := range body.Topics {
			rt := kmsg.ShareAcknowledgeResponseTopic{TopicID: t.TopicID}
			for _, p := range t.Partitions {
				var bs []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch
				for _, b := range p.AcknowledgementBatches {
					bs = append(bs, kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch(b))
				}
				rt.Partitions = append(rt.Partitions, kmsg.ShareAcknowledgeResponseTopicPartition{Partition: p.Partition, ErrorCode: f.ack(ctx, *body.MemberID, bs)})
			}
			r.Topics = append(r.Topics, rt)
		}
		if body.ShareSessionEpoch == -1 {
			f.release(*body.MemberID)
		}
		resp = r
	default:
		panic("fake share broker: unexpected " + req.Kind())
	}
	resp.SetVersion(req.Body.GetVersion())
	ctx.Send(from, f.enc.Response(req.CorrelationID, resp))
}

func (f *fakeShare) expire(now sim.Time) {
	for i := range f.state {
		if f.state[i] == 1 && now >= f.expires[i] {
			f.state[i] = 0
			if f.count[i] >= 5 {
				f.state[i] = 4
			}
		}
	}
}

func (f *fakeShare) release(member string) {
	for i := range f.state {
		if f.state[i] == 1 && f.owner[i] == member {
			f.state[i] = 0
		}
	}
}

func (f *fakeShare) ack(ctx *sim.Context, member string, bs []kmsg.ShareFetchRequestTopicPartitionAcknowledgementBatch) int16 {
	f.expire(ctx.Now())
	var code int16
	for _, b := range bs {
		for o := b.FirstOffset; o <= b.LastOffset; o++ {
			f.acks = append(f.acks, fmt.Sprintf("%s %d %d", member, o, b.AcknowledgeTypes[0]))
			if f.state[o] != 1 || f.owner[o] != member {
				code = kerr.InvalidRecordState.Code
				continue
			}
			switch b.AcknowledgeTypes[0] {
			case AckAccept:
				f.state[o] = 2
			case AckReject:
				f.state[o] = 4
			case AckRelease:
				f.state[o] = 0
				if f.count[o] >= 5 {
					f.state[o] = 4
				}
			}
		}
	}
	return code
}

func (f *fakeShare) fetch(ctx *sim.Context, body *kmsg.ShareFetchRequest) kmsg.Response {
	r := kmsg.NewPtrShareFetchResponse()
	member := *body.MemberID
	want, ok := f.sessions[member]
	switch {
	case body.ShareSessionEpoch == 0:
		f.sessions[member] = 1
	case !ok || body.ShareSessionEpoch != want:
		r.ErrorCode = kerr.InvalidShareSessionEpoch.Code
		return r
	default:
		f.sessions[member] = want + 1
	}
	rp := kmsg.ShareFetchResponseTopicPartition{Partition: 0}
	fetching := false
	for _, t := range body.Topics {
		for _, p := range t.Partitions {
			rp.AcknowledgeErrorCode = f.ack(ctx, member, p.AcknowledgementBatches)
			fetching = fetching || p.PartitionMaxBytes > 0
		}
	}
	f.expire(ctx.Now())
	if i := slices.Index(f.state, 0); i >= 0 && fetching {
		f.state[i], f.owner[i], f.expires[i] = 1, member, ctx.Now().Add(f.lock)
		f.count[i]++
		b := storage.NewBatch(int64(i), []storage.Record{{Value: []byte(f.values[i])}})
		rp.Records = b.AppendTo(nil)
		rp.AcquiredRecords = []kmsg.ShareFetchResponseTopicPartitionAcquiredRecord{{FirstOffset: int64(i), LastOffset: int64(i), DeliveryCount: f.count[i]}}
	}
	r.Topics = []kmsg.ShareFetchResponseTopic{{TopicID: fakeTopicID, Partitions: []kmsg.ShareFetchResponseTopicPartition{rp}}}
	return r
}

// shareApp polls a share consumer every 50ms; explicit mode rejects
// values in reject and releases those in release.
type shareApp struct {
	cfg     ShareConsumerConfig
	c       *ShareConsumer
	got     []string // "value#count"
	acked   []string // "offset type code"
	reject  map[string]bool
	release map[string]bool
}

func (a *shareApp) Start(ctx *sim.Context) {
	c, err := NewShareConsumer(a.cfg, []int32{0})
	if err != nil {
		panic(err)
	}
	a.c = c
	c.Hooks.OnAcknowledged = func(ctx *sim.Context, _ any, sent sim.Time, tp TopicPartition, typ int8, offs []int64, code int16, err error) {
		for _, o := range offs {
			a.acked = append(a.acked, fmt.Sprintf("%d %d %d", o, typ, code))
		}
	}
	c.Start(ctx)
	if err := c.Subscribe(ctx, []string{"t"}); err != nil {
		panic(err)
	}
	ctx.SetTimer(50*sim.Millisecond, "app-poll")
}

func (a *shareApp) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
	a.c.HandleMessage(ctx, from, m)
}

func (a *shareApp) Timer(ctx *sim.Context, id sim.TimerID, name string) {
	if a.c.HandleTimer(ctx, id, name) {
		return
	}
	if a.c.Closed() {
		return
	}
	recs, _ := a.c.Poll(ctx)
	for _, r := range recs {
		a.got = append(a.got, fmt.Sprintf("%s#%d", r.Value, r.DeliveryCount))
		if a.cfg.AcknowledgementMode == ShareAckExplicit {
			typ := AckAccept
			if a.reject[string(r.Value)] {
				typ = AckReject
			} else if a.release[string(r.Value)] {
				typ = AckRelease
			}
			if err := a.c.Acknowledge(r, typ); err != nil {
				panic(err)
			}
		}
	}
	ctx.SetTimer(50*sim.Millisecond, "app-poll")
}

func shareWorld(t *testing.T, f *fakeShare, apps ...*shareApp) (*sim.World, []sim.NodeID) {
	t.Helper()
	w, err := sim.New(sim.Config{Seed: 1, KeepTrace: true})
	must(t, err)
	f.sessions = map[string]int32{}
	f.state, f.owner, f.expires, f.count = make([]int8, len(f.values)), make([]string, len(f.values)), make([]sim.Time, len(f.values)), make([]int16, len(f.values))
	b, err := w.AddNode("b0", func() sim.Node { return f }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: b}))
	var ids []sim.NodeID
	for i, a := range apps {
		id, err := w.AddNode(fmt.Sprintf("c%d", i), func() sim.Node { return a }, sim.NodeOptions{})
		must(t, err)
		must(t, w.Inject(sim.Start{Node: id}))
		ids = append(ids, id)
	}
	return w, ids
}

func shareCfg(mode string) ShareConsumerConfig {
	cfg := config.DefaultConsumer()
	cfg.GroupID, cfg.ClientID = "g", "c"
	cfg.FetchMaxWait = 50 * sim.Millisecond
	return ShareConsumerConfig{Consumer: cfg, AcknowledgementMode: mode}
}

// KIP-932 implicit acknowledgement: the next poll accepts what the last
// returned; every record is delivered once and accepted.
func TestShareConsumerImplicitAcceptsOnNextPoll(t *testing.T) {
	f := &fakeShare{values: []string{"m0", "m1", "m2"}, lock: 30 * sim.Second}
	a := &shareApp{cfg: shareCfg(ShareAckImplicit)}
	w, _ := shareWorld(t, f, a)
	run(t, w, 3*sim.Second)
	if want := []string{"m0#1", "m1#1", "m2#1"}; !slices.Equal(a.got, want) {
		t.Fatalf("got %v, want %v", a.got, want)
	}
	if !slices.Equal(f.state, []int8{2, 2, 2}) {
		t.Fatalf("broker states %v, want all accepted (each by the poll after the one that returned it)", f.state)
	}
}

// Explicit acknowledgement: a released record comes back with a higher
// delivery count until the limit archives it; a rejected one never does.
func TestShareConsumerExplicitReleaseAndReject(t *testing.T) {
	f := &fakeShare{values: []string{"poison", "bad", "ok"}, lock: 30 * sim.Second}
	a := &shareApp{cfg: shareCfg(ShareAckExplicit), release: map[string]bool{"poison": true}, reject: map[string]bool{"bad": true}}
	w, _ := shareWorld(t, f, a)
	run(t, w, 5*sim.Second)
	n := 0
	for _, g := range a.got {
		if strings.HasPrefix(g, "poison") {
			n++
		}
	}
	if n != 5 || !slices.Contains(a.got, "poison#5") || !slices.Contains(a.got, "bad#1") || !slices.Contains(a.got, "ok#1") {
		t.Fatalf("got %v: want poison 5 times (#1..#5), bad and ok once", a.got)
	}
	if !slices.Equal(f.state, []int8{4, 4, 2}) {
		t.Fatalf("broker states %v, want [4 4 2] (archived, archived, acknowledged)", f.state)
	}
}

// A crashed member's lock expires and another member gets the record at
// delivery 2; Close releases at once.
func TestShareConsumerCrashLockExpires(t *testing.T) {
	f := &fakeShare{values: []string{"m0"}, lock: 500 * sim.Millisecond}
	a, b := &shareApp{cfg: shareCfg(ShareAckExplicit)}, &shareApp{cfg: shareCfg(ShareAckExplicit)}
	w, ids := shareWorld(t, f, a)
	for i := 0; i < 100 && len(a.got) == 0; i++ {
		run(t, w, 10*sim.Millisecond)
	}
	must(t, w.Inject(sim.Crash{Node: ids[0]}))
	id, err := w.AddNode("c9", func() sim.Node { return b }, sim.NodeOptions{})
	must(t, err)
	must(t, w.Inject(sim.Start{Node: id}))
	run(t, w, 2*sim.Second)
	if !slices.Equal(a.got, []string{"m0#1"}) || !slices.Equal(b.got, []string{"m0#2"}) {
		t.Fatalf("crashed member got %v, the other %v: want m0#1 then m0#2", a.got, b.got)
	}
}

// The coordinator sends an assignment once, when it changes; a member
// whose metadata does not know the topic yet keeps it until it does.
func TestShareConsumerAssignmentBeforeMetadata(t *testing.T) {
	f := &fakeShare{values: []string{"m0"}, lock: 30 * sim.Second, hideMeta: 3, onceAssign: true}
	a := &shareApp{cfg: shareCfg(ShareAckImplicit)}
	w, _ := shareWorld(t, f, a)
	run(t, w, 3*sim.Second)
	if !slices.Equal(a.got, []string{"m0#1"}) {
		t.Fatalf("got %v, want m0#1: the assignment was dropped while the topic was unknown", a.got)
	}
}
