package serve

// This file records a served run's history from the brokers' side of the
// sockets, in the checkers' terms: every record of a client's Produce
// request is a send, completed by the answer (ok at its offset, fail when
// the broker's error says nothing was appended, info otherwise), and every
// partition of a client's Fetch is a poll that saw the records returned.
//
// What it simplifies:
//   - Each produce request is its own operation: a client's retry of a
//     record is a second send of the same value (an idempotent producer's
//     retry is acknowledged at the first one's offset).
//   - The process of an operation is the request header's client.id, with
//     the producer id for an idempotent producer ("app/pid3") so that its
//     promise of no duplicates and kept order is judged per producer
//     session. A producer without idempotence is declared with Kafka's
//     default retries and max.in.flight of 5, which permit duplicates and
//     reordering: the lenient reading, since the broker cannot see its
//     settings.
//   - Every topic is judged, the scenario's and those clients create
//     (auto-creation, CreateTopics): a client's topic is observed from
//     the first request or answer that names it once the metadata store
//     assigned it (harness.Runner.ObserveTopic), and every topic the store
//     holds at stop is. The internal topics are not (as in any run).
//   - Transactional records are not sends of this history: the run is
//     judged as a transactional one (harness.Runner.ServesTransactions),
//     so linearizability leaves the partitions holding transactions to
//     the transactions checker, which reads their fate from the final log.
//     The transactions themselves (which records each committed) are not
//     reconstructed from the requests.
//   - A topic a client deleted (DeleteTopics) takes from memory the
//     operations on it before the deletion, as its answer arrives: the
//     judgement at stop sets them aside anyway, and counts them in its
//     note (harness.Runner.ForgetDeleted). What memory still grows with
//     is the operations on the topics that live (docs/serve.md, "Memory").
//   - Values are the evidence the checkers compare, not records'
//     identities: an idempotent producer's record is its (producer id,
//     epoch, sequence), recorded with each send, so equal values from two
//     producer sessions are two records, not duplicates (issue 28); a
//     producer without idempotence cannot be judged for duplicates, each
//     request being its own record. Equal values still make the other
//     verdicts' evidence less precise.

import (
	"encoding/binary"
	"math"
	"strconv"

	"github.com/kafkasim/kafkasim/broker/client"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/checkers"
	"github.com/kafkasim/kafkasim/scenarios/harness"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// historian writes a served run's operations into the runner's recorder.
type historian struct {
	rec *checkers.Recorder
	// judged are the topics the run observes, as far as asked (judges).
	judged   map[string]bool
	declared map[string]bool
	r        *harness.Runner
	txn      bool
	// members are each group member's partitions, as its last SyncGroup
	// answer gave them (groups.go).
	members map[groupKey]map[partKey]bool
	// topicNames maps the topic ids Metadata answers carried (v10+) to
	// names, for KIP-848 assignments (groups848.go).
	topicNames map[[16]byte]string
}

// recorded are the operations one request opened.
type recorded struct {
	sends []partSends
	polls []partPoll
	acks  int16
}

type partSends struct {
	topic     string
	partition int32
	ids       []checkers.OpID
}

type partPoll struct {
	topic     string
	partition int32
	offset    int64
	id        checkers.OpID
}

func clientName(h Header) string {
	if h.ClientID == "" {
		return "client"
	}
	return h.ClientID
}

// judges reports whether the run judges topic, observing it first if it
// is a client's that the metadata store now holds.
func (hs *historian) judges(topic string) bool {
	if hs.judged[topic] {
		return true
	}
	if hs.r.ObserveTopic(topic) {
		hs.judged[topic] = true
		return true
	}
	return false
}

// sent records the operations of a request as the connection sends it to
// its broker.
func (hs *historian) sent(c *connNode, cl *call, now sim.Time) {
	switch req := cl.req.(type) {
	case *kmsg.ProduceRequest:
		cl.rec.acks = req.Acks
		for _, t := range req.Topics {
			if !hs.judges(t.Topic) {
				continue
			}
			for _, p := range t.Partitions {
				ps := partSends{topic: t.Topic, partition: p.Partition}
				eachRecord(p.Records, func(b *kmsg.RecordBatch, r *kmsg.Record) {
					if b.Attributes&0x10 != 0 {
						// A transactional record: whether it is ever
						// visible depends on its transaction's end, which
						// the transactions checker judges from the log.
						hs.transactional()
						return
					}
					process := clientName(cl.h)
					if b.ProducerID >= 0 {
						process += "/pid" + strconv.FormatInt(b.ProducerID, 10)
					}
					hs.declare(process, req.Acks, b.ProducerID >= 0)
					id := hs.rec.Send(now, process, t.Topic, p.Partition, string(r.Key), string(r.Value), req.Acks)
					hs.rec.SetLeader(id, c.broker)
					if b.ProducerID >= 0 {
						hs.rec.SetProducerID(id, b.ProducerID, b.ProducerEpoch, b.FirstSequence+r.OffsetDelta)
					}
					ps.ids = append(ps.ids, id)
				})
				cl.rec.sends = append(cl.rec.sends, ps)
			}
		}
	case *kmsg.FetchRequest:
		if req.ReplicaID >= 0 || req.ReplicaState.ID >= 0 {
			return // a follower's fetch: not a client's
		}
		for _, t := range req.Topics {
			if !hs.judges(t.Topic) {
				continue
			}
			for _, p := range t.Partitions {
				id := hs.rec.Poll(now, clientName(cl.h), t.Topic, p.Partition, p.FetchOffset)
				hs.rec.SetLeader(id, c.broker)
				cl.rec.polls = append(cl.rec.polls, partPoll{topic: t.Topic, partition: p.Partition, offset: p.FetchOffset, id: id})
			}
		}
	}
}

// transactional notes, once, that the run holds transactions.
func (hs *historian) transactional() {
	if !hs.txn {
		hs.txn = true
		hs.r.ServesTransactions()
	}
}

// declare names a producing process's promises the first time it sends.
func (hs *historian) declare(process string, acks int16, idempotent bool) {
	if hs.declared[process] {
		return
	}
	hs.declared[process] = true
	a := strconv.Itoa(int(acks))
	if acks == -1 {
		a = "all"
	}
	hs.rec.Producer(checkers.Producer{Process: process, Acks: a, Idempotent: idempotent, MaxInFlight: 5, Retries: math.MaxInt32})
}

// answered completes a request's operations with its response. A
// Metadata or CreateTopics answer naming a topic starts its observation,
// before any record is written to it.
func (hs *historian) answered(c *connNode, cl *call, resp kmsg.Response, now sim.Time) {
	switch r := resp.(type) {
	case *kmsg.MetadataResponse:
		for _, t := range r.Topics {
			if t.Topic != nil && t.ErrorCode == 0 {
				hs.judges(*t.Topic)
				hs.topicID(t.TopicID, *t.Topic)
			}
		}
	case *kmsg.CreateTopicsResponse:
		for _, t := range r.Topics {
			if t.ErrorCode == 0 {
				hs.judges(t.Topic)
			}
		}
	case *kmsg.DeleteTopicsResponse:
		// The topics it deleted are deleted in the trace by now (the
		// answer waits for it): what that sets aside leaves memory
		// (harness.Runner.ForgetDeleted).
		// A topic deleted is asked about again when next named: one
		// created again is observed as new (harness.Runner.ObserveTopic).
		forget := false
		for _, t := range r.Topics {
			if t.ErrorCode == 0 {
				forget = true
				if t.Topic != nil {
					delete(hs.judged, *t.Topic)
				}
			}
		}
		if forget {
			hs.r.ForgetDeleted()
		}
	case *kmsg.SyncGroupResponse:
		if req, ok := cl.req.(*kmsg.SyncGroupRequest); ok {
			hs.synced(req, r, now)
		}
	case *kmsg.ConsumerGroupHeartbeatResponse:
		if req, ok := cl.req.(*kmsg.ConsumerGroupHeartbeatRequest); ok {
			hs.heartbeat848(req, r, now)
		}
	case *kmsg.ProduceResponse:
		for _, ps := range cl.rec.sends {
			rp := findProducePartition(r, ps.topic, ps.partition)
			for i, id := range ps.ids {
				switch {
				case rp == nil:
					hs.rec.Info(id, now, "partition missing from the response")
				case rp.ErrorCode == 0:
					hs.rec.Acked(id, now, rp.BaseOffset+int64(i))
				case client.DefiniteProduceError(rp.ErrorCode, cl.rec.acks):
					hs.rec.Fail(id, now, errName(rp.ErrorCode))
				default:
					hs.rec.Info(id, now, errName(rp.ErrorCode))
				}
			}
		}
	case *kmsg.FetchResponse:
		for _, pp := range cl.rec.polls {
			rp := findFetchPartition(r, pp.topic, pp.partition)
			switch {
			case rp == nil:
				hs.rec.Info(pp.id, now, "partition missing from the response")
			case rp.ErrorCode != 0 || r.ErrorCode != 0:
				code := rp.ErrorCode
				if code == 0 {
					code = r.ErrorCode
				}
				hs.rec.Fail(pp.id, now, errName(code))
			default:
				var seen []checkers.Record
				eachRecord(rp.RecordBatches, func(b *kmsg.RecordBatch, rec *kmsg.Record) {
					if off := b.FirstOffset + int64(rec.OffsetDelta); off >= pp.offset {
						seen = append(seen, checkers.Record{Offset: off, Value: string(rec.Value)})
					}
				})
				hs.rec.Polled(pp.id, now, seen)
			}
		}
	}
	cl.rec = recorded{}
}

// unknown completes a request's operations as info: no answer came.
func (hs *historian) unknown(cl *call, now sim.Time, why string) {
	for _, ps := range cl.rec.sends {
		for _, id := range ps.ids {
			hs.rec.Info(id, now, why)
		}
	}
	for _, pp := range cl.rec.polls {
		hs.rec.Info(pp.id, now, why)
	}
	cl.rec = recorded{}
}

func errName(code int16) string {
	if e, ok := kerr.ErrorForCode(code).(*kerr.Error); ok {
		return e.Message
	}
	return "error code " + strconv.Itoa(int(code))
}

func findProducePartition(r *kmsg.ProduceResponse, topic string, p int32) *kmsg.ProduceResponseTopicPartition {
	for ti := range r.Topics {
		if r.Topics[ti].Topic != topic {
			continue
		}
		for pi := range r.Topics[ti].Partitions {
			if rp := &r.Topics[ti].Partitions[pi]; rp.Partition == p {
				return rp
			}
		}
	}
	return nil
}

func findFetchPartition(r *kmsg.FetchResponse, topic string, p int32) *kmsg.FetchResponseTopicPartition {
	for ti := range r.Topics {
		if r.Topics[ti].Topic != topic {
			continue
		}
		for pi := range r.Topics[ti].Partitions {
			if rp := &r.Topics[ti].Partitions[pi]; rp.Partition == p {
				return rp
			}
		}
	}
	return nil
}

// eachRecord calls fn for every record of the v2 batches in data, control
// batches left out; a compressed batch's records are decompressed
// (storage.Decompress: the codecs the broker stores batches in). A batch
// cut short (a fetch answer ends where its size limit fell), or whose
// records do not decode, ends the walk, as a consumer stops there.
func eachRecord(data []byte, fn func(*kmsg.RecordBatch, *kmsg.Record)) {
	for len(data) >= 61 {
		n := int(int32(binary.BigEndian.Uint32(data[8:]))) + 12
		if n < 61 || n > len(data) || data[16] != 2 {
			return
		}
		var b kmsg.RecordBatch
		if err := b.ReadFrom(data[:n]); err != nil {
			return
		}
		data = data[n:]
		if b.Attributes&0x20 != 0 {
			continue // a control batch
		}
		recs := b.Records
		if codec := b.Attributes & storage.CompressionCodecMask; codec != storage.CodecNone {
			plain, err := storage.Decompress(codec, recs)
			if err != nil {
				return
			}
			recs = plain
		}
		for i := int32(0); i < b.NumRecords && len(recs) > 0; i++ {
			l, sz := binary.Varint(recs)
			if sz <= 0 || l < 0 || int(l) > len(recs)-sz {
				return
			}
			var r kmsg.Record
			if err := r.ReadFrom(recs[:sz+int(l)]); err != nil {
				return
			}
			recs = recs[sz+int(l):]
			fn(&b, &r)
		}
	}
}
