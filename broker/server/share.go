package server

// This file hosts share groups (KIP-932, package share) in the broker:
// the share group coordinator beside the group coordinator (a share
// group is coordinated by the leader of its __consumer_offsets partition,
// as every group), the share-partitions of the partitions this broker
// leads, the share session cache, and their timers. It serves
// ShareGroupHeartbeat (api key 76) and ShareGroupDescribe (77);
// ShareFetch (78) and ShareAcknowledge (79) are share_fetch.go's.
//
// A share-partition belongs to the leader epoch it was created in: one
// found under an older epoch (this broker lost and regained leadership)
// is dropped and created again, as Kafka's SharePartitionManager drops
// its share-partitions when the replica stops leading.
//
// Simplifications: ClientId and ClientHost in ShareGroupDescribe are
// empty (the simulated request header carries no client id); the
// share-partitions' state is read from and written to the share
// coordinator (share_persist.go, share_coordinator.go).

import (
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/coordinator"
	"github.com/kafkasim/kafkasim/broker/share"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Timer names of share groups.
const (
	timerShareGroup = "share-group"
	timerShareLocks = "share-locks"
	timerShareWait  = "share-fetch-wait"
	timerShareLater = "share-later"
)

// groupConfigResource is Kafka's ConfigResource.Type GROUP (KIP-848's
// group configs).
const groupConfigResource = 32

type sharePartKey struct {
	group string
	tp    storage.TopicPartition
}

// shareHost is the broker's share group state.
type shareHost struct {
	coord    *share.Coordinator // nil: share groups are off
	state    *share.StateStore  // the share coordinator (share_coordinator.go)
	sessions *share.Sessions
	parts    map[sharePartKey]*share.Partition
	keys     []sharePartKey // parts' keys, sorted, for deterministic walks
	meta     map[sharePartKey]*sharePersist
	retryT   deadlineTimer
	later    map[sim.TimerID]func() // shareLater's callbacks
	groupT   deadlineTimer
	locksT   deadlineTimer
	waits    []*shareWait
	// loads are the share-partitions initialized from persisted state,
	// for TakeShareStateLoads.
	loads []share.StateLoad
}

func (b *Broker) startShare() {
	b.share = shareHost{parts: map[sharePartKey]*share.Partition{}, meta: map[sharePartKey]*sharePersist{}, later: map[sim.TimerID]func(){}}
	if !b.cfg.sharesEnabled() {
		return
	}
	b.share.sessions = share.NewSessions(b.cfg.Share.MaxShareSessions)
	b.share.state = share.NewStateStore(b.cfg.Share.StatePartitions)
	b.share.coord = share.NewCoordinator(b.cfg.Share, share.Env{
		Topics:      b.consumerGroupTopics,
		Check:       b.shareGroupCheck,
		OtherType:   b.otherGroupType,
		GroupConfig: b.groupConfig,
		Log:         func(kind string, fields ...sim.Field) { b.ctx.Log(kind, fields...) },
	})
}

// shareGroupCheck says whether this broker coordinates group.
func (b *Broker) shareGroupCheck(group string) *kerr.Error {
	partition := b.group.coord.PartitionFor(group)
	p := b.partitions[storage.TopicPartition{Topic: coordinator.OffsetsTopic, Partition: partition}]
	switch {
	case p == nil || p.role != Leader:
		return kerr.NotCoordinator
	case b.group.coord.Loading(partition):
		return kerr.CoordinatorLoadInProgress
	}
	return nil
}

// otherGroupType reports whether group is a classic or consumer group.
func (b *Broker) otherGroupType(group string) bool {
	if b.group.coord.ConsumerGroupHasMembers(group) {
		return true
	}
	g := b.group.coord.DescribeGroup(group, false)
	return g.ErrorCode == 0 && g.State != "Dead"
}

// groupConfig returns a group's dynamic config from the metadata image
// ("" when unset or in ZooKeeper mode).
func (b *Broker) groupConfig(group, name string) string {
	if b.kraft == nil || b.kraft.meta == nil || b.kraft.meta.img == nil {
		return ""
	}
	v, _ := b.kraft.meta.img.Config(groupConfigResource, group, name)
	return v
}

// shareOffsetsChanged drops the share groups of __consumer_offsets
// partition, which this broker now leads afresh or no longer leads.
func (b *Broker) shareOffsetsChanged(partition int32) {
	if b.share.coord == nil {
		return
	}
	b.share.coord.Unload(func(g string) bool { return b.group.coord.PartitionFor(g) != partition })
}

// serveShare serves the share group APIs and reports whether req was one.
func (b *Broker) serveShare(from sim.NodeID, req *wire.Request) bool {
	switch body := req.Body.(type) {
	case *kmsg.ShareGroupHeartbeatRequest:
		if b.share.coord == nil {
			r := body.ResponseKind().(*kmsg.ShareGroupHeartbeatResponse)
			r.ErrorCode = kerr.UnsupportedVersion.Code
			b.respond(from, req, r)
			return true
		}
		b.respond(from, req, b.share.coord.Heartbeat(b.ctx.Now(), body, "", ""))
		b.armShareGroupTimer()
	case *kmsg.ShareGroupDescribeRequest:
		if b.share.coord == nil {
			r := body.ResponseKind().(*kmsg.ShareGroupDescribeResponse)
			for _, g := range body.GroupIDs {
				r.Groups = append(r.Groups, kmsg.ShareGroupDescribeResponseGroup{GroupID: g, ErrorCode: kerr.UnsupportedVersion.Code})
			}
			b.respond(from, req, r)
			return true
		}
		b.respond(from, req, b.share.coord.Describe(body))
	case *kmsg.ShareFetchRequest:
		b.handleShareFetch(from, req, body)
	case *kmsg.ShareAcknowledgeRequest:
		b.handleShareAcknowledge(from, req, body)
	default:
		return b.serveShareState(from, req) || b.serveShareAdmin(from, req)
	}
	return true
}

// sharePartition returns group's share-partition of tp, led here in the
// current leader epoch, creating it (create) at the group's
// share.auto.offset.reset if there is none; nil when create is false and
// there is none.
func (b *Broker) sharePartition(group string, p *Partition, create bool) *share.Partition {
	key := sharePartKey{group: group, tp: p.tp}
	sp := b.share.parts[key]
	if sp != nil && sp.LeaderEpoch != p.leaderEpoch {
		b.dropSharePartition(key, "leader-epoch")
		sp = nil
	}
	if sp != nil || !create {
		return sp
	}
	sp = share.NewPartition(group, p.hw, b.sharePartitionConfig(group))
	sp.LeaderEpoch = p.leaderEpoch
	b.share.parts[key] = sp
	b.share.meta[key] = &sharePersist{}
	i, _ := slices.BinarySearchFunc(b.share.keys, key, compareShareKey)
	b.share.keys = slices.Insert(b.share.keys, i, key)
	b.loadShareState(key)
	return sp
}

func compareShareKey(a, c sharePartKey) int {
	if a.group != c.group {
		if a.group < c.group {
			return -1
		}
		return 1
	}
	return storage.CompareTP(a.tp, c.tp)
}

func (b *Broker) dropSharePartition(key sharePartKey, why string) {
	if m := b.share.meta[key]; m != nil {
		waiting := m.next
		m.next = nil
		for _, f := range waiting {
			f(kerr.NotLeaderForPartition)
		}
	}
	delete(b.share.meta, key)
	delete(b.share.parts, key)
	if i, ok := slices.BinarySearchFunc(b.share.keys, key, compareShareKey); ok {
		b.share.keys = slices.Delete(b.share.keys, i, i+1)
	}
	b.ctx.Log("share-partition-dropped", sim.S("group", key.group), sim.S("partition", key.tp.String()), sim.S("why", why))
}

// sharePartitionConfig is group's lock duration and limits.
func (b *Broker) sharePartitionConfig(group string) share.PartitionConfig {
	c := share.PartitionConfig{LockDuration: b.cfg.Share.RecordLockDuration, DeliveryCountLimit: b.cfg.Share.DeliveryCountLimit,
		MaxRecordLocks: b.cfg.Share.PartitionMaxRecordLocks}
	if v := b.groupConfig(group, share.GroupRecordLockDuration); v != "" {
		if n, ok := parseInt64(v); ok && n > 0 {
			c.LockDuration = sim.Ms(n)
		}
	}
	if v := b.groupConfig(group, share.GroupDeliveryCountLimit); v != "" {
		if n, ok := parseInt64(v); ok && n >= 2 {
			c.DeliveryCountLimit = int(n)
		}
	}
	return c
}

func parseInt64(s string) (int64, bool) {
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// handleShareTimer handles the share timers.
func (b *Broker) handleShareTimer(id sim.TimerID, name string) bool {
	switch name {
	case timerShareGroup:
		if b.share.groupT.fired(id) && b.share.coord != nil {
			b.share.coord.Tick(b.ctx.Now())
		}
		b.armShareGroupTimer()
	case timerShareLocks:
		if b.share.locksT.fired(id) {
			b.expireShareLocks()
		}
	case timerShareWait:
		b.expireShareWait(id)
	case timerShareLater:
		if f, ok := b.share.later[id]; ok {
			delete(b.share.later, id)
			f()
		}
	case timerShareRetry:
		if b.share.retryT.fired(id) {
			b.shareStateRetry()
		}
	default:
		return false
	}
	return true
}

func (b *Broker) armShareGroupTimer() {
	if b.share.coord == nil {
		return
	}
	at, ok := b.share.coord.NextDeadline()
	b.share.groupT.arm(b.ctx, at, ok, timerShareGroup)
}

// armShareLocks sets the lock timer for the earliest acquisition lock.
func (b *Broker) armShareLocks() {
	var at sim.Time
	ok := false
	for _, k := range b.share.keys {
		if t, has := b.share.parts[k].NextDeadline(); has && (!ok || t < at) {
			at, ok = t, true
		}
	}
	b.share.locksT.arm(b.ctx, at, ok, timerShareLocks)
}

// expireShareLocks releases the records whose locks expired.
func (b *Broker) expireShareLocks() {
	now := b.ctx.Now()
	released := false
	for _, k := range b.share.keys {
		sp := b.share.parts[k]
		if offs := sp.Expire(now); len(offs) > 0 {
			released = true
			b.persistShare(k, nil)
			b.ctx.Log("share-lock-expired", sim.S("group", k.group), sim.S("partition", k.tp.String()),
				sim.S("offsets", fmtOffsets(offs)), sim.I("spso", sp.StartOffset()))
		}
	}
	b.armShareLocks()
	if released {
		b.completeShareFetches()
	}
}

// fmtOffsets renders sorted offsets as ranges: "3-5,9".
func fmtOffsets(offs []int64) string {
	s := ""
	for i := 0; i < len(offs); {
		j := i
		for j+1 < len(offs) && offs[j+1] == offs[j]+1 {
			j++
		}
		if s != "" {
			s += ","
		}
		s += itoa(offs[i])
		if j > i {
			s += "-" + itoa(offs[j])
		}
		i = j + 1
	}
	return s
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TakeShareStateLoads returns and forgets the share-partitions this
// broker initialized from persisted state since the last call, in order
// (for the history; see share.StateLoad).
func (b *Broker) TakeShareStateLoads() []share.StateLoad {
	out := b.share.loads
	b.share.loads = nil
	return out
}

// deleteShareGroup deletes an empty share group and this broker's
// share-partitions of it.
func (b *Broker) deleteShareGroup(group string) *kerr.Error {
	if err := b.share.coord.Delete(group); err != nil {
		return err
	}
	for _, k := range slices.Clone(b.share.keys) {
		if k.group == group {
			b.dropSharePartition(k, "group-deleted")
		}
	}
	return nil
}

// withShareGroups adds this broker's share groups to a ListGroups answer
// (ProtocolType "share", states Empty or Stable, as Kafka lists them at
// every version), sets v5's GroupType, and applies v5's types filter.
func (b *Broker) withShareGroups(groups []kmsg.ListGroupsResponseGroup, states []string, body *kmsg.ListGroupsRequest) []kmsg.ListGroupsResponseGroup {
	for i := range groups {
		groups[i].GroupType = "classic"
	}
	if b.share.coord != nil {
		for _, g := range b.share.coord.Groups() {
			if b.shareGroupCheck(g.ID) != nil {
				continue
			}
			if len(states) > 0 && !slices.ContainsFunc(states, func(s string) bool { return strings.EqualFold(s, g.State) }) {
				continue
			}
			lg := kmsg.NewListGroupsResponseGroup()
			lg.Group, lg.ProtocolType, lg.GroupState, lg.GroupType = g.ID, "share", g.State, "share"
			groups = append(groups, lg)
		}
	}
	if body.Version >= 5 && len(body.TypesFilter) > 0 {
		groups = slices.DeleteFunc(groups, func(g kmsg.ListGroupsResponseGroup) bool {
			return !slices.ContainsFunc(body.TypesFilter, func(t string) bool { return strings.EqualFold(t, g.GroupType) })
		})
	}
	return groups
}

// sharesEnabled reports whether the broker serves share groups:
// share.version 1, release 4.2 or later, a KRaft broker.
func (c Config) sharesEnabled() bool {
	return c.Share.Enabled && c.release() >= config.V4_2 && c.KRaft != nil && c.KRaft.Broker
}

// shareLater calls f after d (an admin call's retry).
func (b *Broker) shareLater(d sim.Duration, f func()) {
	b.share.later[b.ctx.SetTimer(d, timerShareLater)] = f
}

// validShareKey reports whether key is "group:topicId:partition" with a
// non-empty group, a 22-character topic id and a partition >= 0 (Kafka's
// SharePartitionKey.getInstance; a group id may hold ':').
func validShareKey(key string) bool {
	i := strings.LastIndexByte(key, ':')
	if i < 0 {
		return false
	}
	n, err := strconv.ParseInt(key[i+1:], 10, 32)
	j := strings.LastIndexByte(key[:i], ':')
	return err == nil && n >= 0 && j > 0 && i-j-1 == 22
}
