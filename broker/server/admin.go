package server

// This file routes the admin APIs (one file each: delete_topics.go,
// create_partitions.go, alter_configs.go, elect_leaders.go,
// delete_records.go, describe_cluster.go, delete_groups.go,
// describe_producers.go, describe_transactions.go, describe_log_dirs.go),
// relays the ones a KRaft broker forwards to the active controller
// (KIP-590), and keeps the ZooKeeper-mode answers that wait for the
// metadata cache or the followers to show their outcome (Kafka's
// DelayedDeleteTopics, DelayedCreatePartitions, DelayedDeleteRecords).

import (
	"slices"

	"github.com/kafkasim/kafkasim/broker/kraft"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

const timerAdminWait = "admin-wait"

// metadataWait is an answer waiting for the metadata cache or the
// followers.
type metadataWait struct {
	ready func() bool
	done  func()
	timer sim.TimerID
}

// serveAdmin serves the admin APIs and reports whether req was one.
func (b *Broker) serveAdmin(from sim.NodeID, req *wire.Request) bool {
	switch body := req.Body.(type) {
	case *kmsg.DeleteTopicsRequest:
		b.handleDeleteTopics(from, req, body)
	case *kmsg.CreatePartitionsRequest:
		b.handleCreatePartitions(from, req, body)
	case *kmsg.AlterConfigsRequest:
		b.handleAlterConfigs(from, req, body)
	case *kmsg.IncrementalAlterConfigsRequest:
		b.handleIncrementalAlterConfigs(from, req, body)
	case *kmsg.ElectLeadersRequest:
		b.handleElectLeaders(from, req, body)
	case *kmsg.DeleteRecordsRequest:
		b.handleDeleteRecords(from, req, body)
	case *kmsg.DescribeClusterRequest:
		b.respond(from, req, b.describeCluster(body))
	case *kmsg.DeleteGroupsRequest:
		b.handleDeleteGroups(from, req, body)
	case *kmsg.OffsetDeleteRequest:
		b.handleOffsetDelete(from, req, body)
	case *kmsg.DescribeProducersRequest:
		b.respond(from, req, b.describeProducers(body))
	case *kmsg.DescribeTransactionsRequest:
		b.respond(from, req, b.describeTransactions(body))
	case *kmsg.ListTransactionsRequest:
		b.respond(from, req, b.listTransactions(body))
	case *kmsg.DescribeLogDirsRequest:
		b.respond(from, req, b.describeLogDirs(body))
	default:
		return false
	}
	return true
}

// forwardAdmin relays body, a controller API's request, to the active
// controller and its answer back; a forward that fails (no controller
// known, no answer within controller.socket.timeout.ms) answers every
// entry NOT_CONTROLLER, which clients retry (Kafka's ForwardingManager
// retries by itself).
func (b *Broker) forwardAdmin(from sim.NodeID, req *wire.Request, body kmsg.Request) {
	b.forwardToController(body, func(r kmsg.Response, err error) {
		if err != nil || r == nil || r.Key() != body.Key() {
			r = kraft.ErrorResponse(body, kerr.NotController)
		}
		b.respond(from, req, r)
	})
}

// forwardedToController reports whether a KRaft broker forwards body to
// the active controller (a combined node whose controller is active, or a
// request on the controller listener, is answered by the local
// controller instead: kraft.go).
func forwardedToController(body kmsg.Request) bool {
	switch body.(type) {
	case *kmsg.CreateTopicsRequest, *kmsg.DeleteTopicsRequest, *kmsg.CreatePartitionsRequest,
		*kmsg.AlterConfigsRequest, *kmsg.IncrementalAlterConfigsRequest, *kmsg.ElectLeadersRequest:
		return true
	}
	return false
}

// waitMetadata calls done once ready holds after a metadata update, or
// after timeout (done then checks what is still missing). ready is tried
// at once.
func (b *Broker) waitFor(timeout sim.Duration, ready func() bool, done func()) {
	if ready() {
		done()
		return
	}
	w := &metadataWait{ready: ready, done: done, timer: b.ctx.SetTimer(timeout, timerAdminWait)}
	b.waits = append(b.waits, w)
}

// completeAdminWaits answers the waits whose outcome has come: it runs
// after every metadata update and, while one waits, every follower fetch.
func (b *Broker) completeAdminWaits() {
	var done []*metadataWait
	b.waits = slices.DeleteFunc(b.waits, func(w *metadataWait) bool {
		if w.ready() {
			done = append(done, w)
			return true
		}
		return false
	})
	for _, w := range done {
		b.ctx.CancelTimer(w.timer)
		w.done()
	}
}

// handleAdminTimer expires a metadata wait.
func (b *Broker) handleAdminTimer(id sim.TimerID, name string) bool {
	if name != timerAdminWait {
		return false
	}
	for i, w := range b.waits {
		if w.timer == id {
			b.waits = slices.Delete(b.waits, i, i+1)
			w.done()
			break
		}
	}
	return true
}
