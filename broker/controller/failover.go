package controller

// This file is what a newly elected controller does
// (KafkaController.onControllerFailover): bump /controller_epoch with a
// conditional write, read the live brokers and every topic's assignment and
// partition state (setting the watches it lives by), bring every partition
// online (electing where the leader is missing or dead), and tell every
// broker the state with UpdateMetadata and LeaderAndIsr.

import (
	"slices"
	"sort"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
)

func (c *Controller) onControllerFailover() {
	c.env.ZK.GetData(c.ctx, zk.ControllerEpochPath, false, c.guard(func(r *zk.Response) {
		switch r.Code {
		case zk.NoNode:
			c.env.ZK.Create(c.ctx, zk.ControllerEpochPath, zk.EncodeControllerEpoch(1), zk.Persistent, c.guard(func(r *zk.Response) {
				if r.Code != zk.Ok {
					c.log("epoch-error", sim.S("code", r.Code.String()))
					c.watchController()
					return
				}
				c.becomeActive(1, r.Stat.Version)
			}))
		case zk.Ok:
			prev, err := zk.DecodeControllerEpoch(r.Data)
			if err != nil {
				panic(err)
			}
			c.env.ZK.SetData(c.ctx, zk.ControllerEpochPath, zk.EncodeControllerEpoch(prev+1), r.Stat.Version, c.guard(func(w *zk.Response) {
				if w.Code != zk.Ok {
					// Another controller bumped it first (ControllerMovedException).
					c.log("epoch-error", sim.S("code", w.Code.String()))
					c.watchController()
					return
				}
				c.becomeActive(prev+1, w.Stat.Version)
			}))
		default:
			c.log("epoch-error", sim.S("code", r.Code.String()))
		}
	}))
}

func (c *Controller) becomeActive(epoch, zkVersion int32) {
	c.active = true
	c.epoch, c.epochZkVersion = epoch, zkVersion
	c.partitions = map[TP]*partition{}
	c.channels = map[int32]*channel{}
	c.racks = map[int32]string{}
	c.epochs = map[int32]int64{}
	c.live = nil
	c.log("elected", sim.I("epoch", int64(epoch)))
	if c.env.OnBecomeController != nil {
		c.env.OnBecomeController()
	}
	c.enqueue("failover", func(done func()) {
		c.readBrokers(func(live []int32, epochs map[int32]int64) {
			c.live, c.epochs = live, epochs
			// Watch the notification znodes the controller acts on.
			c.env.ZK.GetChildren(c.ctx, zk.IsrChangeNotificationPath, true, c.guard(func(*zk.Response) {}))
			c.env.ZK.Exists(c.ctx, zk.PreferredReplicaElectionPath, true, c.guard(func(*zk.Response) {}))
			c.env.ZK.Exists(c.ctx, zk.ReassignPartitionsPath, true, c.guard(func(r *zk.Response) {
				if r.Code == zk.Ok {
					c.enqueue("reassign", c.onReassign)
				}
			}))
			c.env.ZK.GetChildren(c.ctx, zk.DeleteTopicsPath, true, c.guard(func(r *zk.Response) {
				if len(r.Children) > 0 {
					c.enqueue("delete-topics", c.onDeleteTopics)
				}
			}))
			c.readTopics(func(newTopics []string) {
				all := c.sortedTPs()
				c.bringOnline(all, func() {
					c.writeDecisions(c.removeFromISR(all), func() {
						c.announce(all)
						c.armRebalance()
						done()
					})
				})
			})
		})
	})
}

// readBrokers lists /brokers/ids (watching it) and reads each registration
// and its broker epoch. A lost connection midway starts the read over —
// KafkaZkClient retries until the session expires, when the controller
// resigns — rather than reading it as "no brokers". A registration gone
// between the list and its read is a broker that died.
func (c *Controller) readBrokers(then func(live []int32, epochs map[int32]int64)) {
	c.env.ZK.GetChildren(c.ctx, zk.BrokerIDsPath, true, c.guard(func(r *zk.Response) {
		switch r.Code {
		case zk.Ok:
		case zk.ConnectionLoss:
			c.log("zk-retry", sim.S("path", zk.BrokerIDsPath), sim.I("code", int64(r.Code)))
			c.readBrokers(then) // queued until the client reconnects
			return
		default: // the session is going: the controller resigns; keep its view meanwhile
			then(slices.Clone(c.live), c.epochs)
			return
		}
		var ids []int32
		for _, ch := range r.Children {
			if id, err := strconv.ParseInt(ch, 10, 32); err == nil {
				ids = append(ids, int32(id))
			}
		}
		sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
		epochs := map[int32]int64{}
		failed := false
		next := barrier(len(ids), func() {
			if failed {
				c.readBrokers(then)
				return
			}
			live := slices.DeleteFunc(ids, func(id int32) bool { _, ok := epochs[id]; return !ok })
			then(live, epochs)
		})
		for _, id := range ids {
			id := id
			c.env.ZK.GetData(c.ctx, zk.BrokerIDPath(id), false, c.guard(func(r *zk.Response) {
				var reg zk.BrokerRegistration
				switch {
				case r.Code == zk.Ok && zk.Decode(r.Data, &reg) == nil:
					c.racks[id] = reg.Rack
					epochs[id] = r.Stat.Czxid
				case r.Code == zk.ConnectionLoss:
					failed = true
				}
				next()
			}))
		}
	}))
}

// readTopics lists /brokers/topics (watching it) and loads every topic not
// yet known: its assignment and its partitions' states. It returns the new
// topics.
func (c *Controller) readTopics(then func(newTopics []string)) {
	c.env.ZK.GetChildren(c.ctx, zk.BrokerTopicsPath, true, c.guard(func(r *zk.Response) {
		if r.Code == zk.ConnectionLoss {
			c.readTopics(then) // queued until the client reconnects, as in readBrokers
			return
		}
		known := map[string]bool{}
		for tp := range c.partitions {
			known[tp.Topic] = true
		}
		var fresh []string
		for _, t := range r.Children {
			if !known[t] {
				fresh = append(fresh, t)
			}
		}
		next := barrier(len(fresh), func() { then(fresh) })
		for _, t := range fresh {
			c.loadTopic(t, next)
		}
	}))
}

func (c *Controller) loadTopic(topic string, done func()) {
	c.env.ZK.GetData(c.ctx, zk.TopicPath(topic), false, c.guard(func(r *zk.Response) {
		if r.Code == zk.ConnectionLoss {
			c.loadTopic(topic, done)
			return
		}
		var ta zk.TopicAssignment
		if r.Code != zk.Ok || zk.Decode(r.Data, &ta) != nil {
			c.log("bad-topic", sim.S("topic", topic))
			done()
			return
		}
		parts := make([]int32, 0, len(ta.Partitions))
		for p := range ta.Partitions {
			parts = append(parts, p)
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i] < parts[j] })
		next := barrier(len(parts), done)
		for _, p := range parts {
			tp := TP{topic, p}
			c.partitions[tp] = &partition{replicas: ta.Partitions[p]}
			c.readState(tp, next)
		}
	}))
}

// readState reads one partition's state znode into the cache.
func (c *Controller) readState(tp TP, done func()) {
	c.env.ZK.GetData(c.ctx, zk.TopicPartitionStatePath(tp.Topic, tp.Partition), false, c.guard(func(r *zk.Response) {
		if r.Code == zk.ConnectionLoss {
			c.readState(tp, done)
			return
		}
		p := c.partitions[tp]
		if r.Code == zk.Ok {
			var st zk.PartitionState
			if err := zk.Decode(r.Data, &st); err == nil {
				p.state, p.zkVersion, p.hasState = st, r.Stat.Version, true
			}
		}
		done()
	}))
}
