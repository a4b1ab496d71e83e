package cluster

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// fuzzStrings and fuzzInts are the values the filler draws: names that
// exist, do not, or are illegal, and the numbers Kafka gives meaning to.
var (
	fuzzStrings = []string{"t", "g", "", "tx", "__consumer_offsets", "bad name!", "new-topic", "consumer", "range"}
	fuzzInts    = []int64{-1, 0, 1, 2, 3, -2, 100, 1 << 20}
)

// fill sets every settable field of v from r: strings and numbers from the
// lists above, short slices, nil or set pointers, and for byte slices nil,
// a valid record batch or garbage.
func fill(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if r.IntN(3) == 0 {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		v.Set(reflect.New(v.Type().Elem()))
		fill(r, v.Elem(), depth+1)
	case reflect.Struct:
		for i := range v.NumField() {
			f, name := v.Field(i), v.Type().Field(i).Name
			if !f.CanSet() || name == "Version" || name == "UnknownTags" {
				continue
			}
			fill(r, f, depth+1)
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			switch r.IntN(3) {
			case 0:
				v.SetBytes(nil)
			case 1:
				b := storage.NewBatch(0, []storage.Record{{Value: []byte("v")}})
				v.SetBytes(b.AppendTo(nil))
			default:
				v.SetBytes([]byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20})
			}
			return
		}
		n := 0
		if depth < 6 {
			n = r.IntN(3)
		}
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fill(r, s.Index(i), depth+1)
		}
		v.Set(s)
	case reflect.String:
		v.SetString(fuzzStrings[r.IntN(len(fuzzStrings))])
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n := fuzzInts[r.IntN(len(fuzzInts))]
		if v.OverflowInt(n) {
			n = -1
		}
		v.SetInt(n)
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	}
}

// clientKeys are the APIs a client may send; the inter-broker ones
// (LeaderAndIsr, StopReplica, UpdateMetadata, WriteTxnMarkers) are left
// out: a bogus controller command may rightly break a broker's invariants.
var brokerOnlyKeys = map[int16]bool{4: true, 5: true, 6: true, 27: true}

// Requests with arbitrary field values at every advertised version of the
// client APIs never crash a broker: each is answered (or, for Produce with
// acks 0, not) and the run goes on.
func TestArbitraryRequestsNeverCrashABroker(t *testing.T) {
	for i, ibp := range []string{"2.4", "3.9", "4.0", "3.9", "4.0", "4.1"} {
		t.Run(ibp, func(t *testing.T) {
			a := newAPICluster(t, map[string]string{"kafkasim.transactions": "true", "inter.broker.protocol.version": ibp,
				"group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "2", "transaction.state.log.num.partitions": "2"},
				func(s *Spec) { s.OffsetsTopic = true })
			r := rand.New(rand.NewPCG(uint64(i), 2))
			sent := 0
			for _, api := range a.c.SupportedAPIs(0) {
				if brokerOnlyKeys[api.Key] {
					continue
				}
				for v := api.Min; v <= api.Max; v++ {
					for range 15 {
						req := kmsg.RequestForKey(api.Key)
						fill(r, reflect.ValueOf(req).Elem(), 0)
						req.SetVersion(v)
						fresh := kmsg.RequestForKey(api.Key)
						fresh.SetVersion(v)
						if err := fresh.ReadFrom(req.AppendTo(nil)); err != nil {
							continue // not encodable at this version
						}
						a.send(r.IntN(3), fresh)
						sent++
					}
					if res := a.c.World.RunFor(200 * sim.Millisecond); res.Reason == sim.Panicked {
						t.Fatalf("%s v%d: %v\n%s", kmsg.NameForKey(api.Key), v, res.Panic, res.Panic.Stack)
					}
				}
			}
			if res := a.c.World.RunFor(30 * sim.Second); res.Reason == sim.Panicked {
				t.Fatalf("after the requests: %v\n%s", res.Panic, res.Panic.Stack)
			}
			for i := range a.c.Brokers {
				if b := a.c.Broker(i); b == nil || b.Halted() {
					t.Fatalf("broker %d is down after %d arbitrary requests", i, sent)
				}
			}
			t.Logf("%d arbitrary requests", sent)
			if sent < 500 {
				t.Fatalf("only %d requests encoded", sent)
			}
		})
	}
}
