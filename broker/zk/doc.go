// Package zk is kafkasim's simulated ZooKeeper: a server node (Server) with
// ZooKeeper's znode tree, sessions, ephemeral and sequential znodes,
// versioned conditional writes, one-shot watches, multi, and a synced
// transaction log it recovers from after a crash; a client library (Client)
// that a broker node embeds; and Kafka's ZooKeeper layout (layout.go): the
// paths /brokers/ids/<id>, /controller, /controller_epoch,
// /brokers/topics/<t>[/partitions/<p>/state], /admin/... and
// /isr_change_notification, with the JSON Kafka writes there.
//
// A broker embeds a Client and forwards its inputs to it:
//
//	type broker struct {
//		id int32
//		zk *zk.Client
//	}
//
//	func (b *broker) Start(ctx *sim.Context) {
//		b.zk = zk.NewClient(zkServer, sim.Ms(18000)) // zookeeper.session.timeout.ms
//		b.zk.OnSession = func(ctx *sim.Context, ev zk.SessionEvent) {
//			if ev.State == zk.SyncConnected { // a new session after Expired, too
//				reg := zk.NewBrokerRegistration("b1", 9092, "", ctx.Now())
//				b.zk.Create(ctx, zk.BrokerIDPath(b.id), zk.Encode(reg), zk.Ephemeral, nil)
//			}
//		}
//		b.zk.OnWatch = func(ctx *sim.Context, ev zk.WatchEvent) { /* re-read ev.Path */ }
//		b.zk.Start(ctx)
//	}
//
//	func (b *broker) Receive(ctx *sim.Context, from sim.NodeID, m sim.Message) {
//		if b.zk.HandleMessage(ctx, from, m) {
//			return
//		}
//		// Kafka requests...
//	}
//
//	func (b *broker) Timer(ctx *sim.Context, id sim.TimerID, name string) {
//		if b.zk.HandleTimer(ctx, id, name) {
//			return
//		}
//		// the broker's own timers...
//	}
//
// A controller elects itself by creating /controller as an ephemeral znode
// and fences its writes with a Multi whose first op is
// CheckOp(ControllerEpochPath, its epoch znode version).
//
// The server is assumed correct (one server, no quorum). Everything is
// deterministic: children and session lists are sorted, watch lists are
// slices, and the only clock is ctx.Now.
package zk
