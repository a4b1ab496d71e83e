package serve

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/IBM/sarama"
	"github.com/kafkasim/kafkasim/checkers"
)

// TestSaramaThroughALeaderCrash: IBM's sarama, a second Go client with an
// implementation of its own, produces idempotently with acks=all through a
// crash of t/0's leader and reads every partition back.
func TestSaramaThroughALeaderCrash(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	s := startServer(t, 5, nil, nil)
	cfg := sarama.NewConfig()
	cfg.Version = sarama.V2_8_0_0
	cfg.ClientID = "sarama-app"
	cfg.Producer.RequiredAcks = sarama.WaitForAll
	cfg.Producer.Idempotent = true
	cfg.Producer.Return.Successes = true
	cfg.Producer.Retry.Max = 200 // a crashed leader is replaced after its ZooKeeper session expires (18 s virtual)
	cfg.Producer.Retry.Backoff = 100 * time.Millisecond
	cfg.Producer.Partitioner = sarama.NewRoundRobinPartitioner
	cfg.Net.MaxOpenRequests = 1
	cfg.Metadata.Retry.Backoff = 50 * time.Millisecond
	prod, err := sarama.NewSyncProducer(s.Addrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	produce := func(from, to int) {
		for i := from; i < to; i++ {
			if _, _, err := prod.SendMessage(&sarama.ProducerMessage{Topic: "t", Value: sarama.StringEncoder(fmt.Sprintf("s%d", i))}); err != nil {
				t.Fatalf("produce s%d: %v", i, err)
			}
		}
	}
	produce(0, 30)
	if a := s.Command("crash-leader t/0"); !strings.HasPrefix(a, "ok") {
		t.Fatalf("crash-leader: %s", a)
	}
	produce(30, 60)
	if err := prod.Close(); err != nil {
		t.Fatal(err)
	}

	cons, err := sarama.NewConsumer(s.Addrs(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer cons.Close()
	var got []string
	for p := int32(0); p < 3; p++ {
		pc, err := cons.ConsumePartition("t", p, sarama.OffsetOldest)
		if err != nil {
			t.Fatalf("consume t/%d: %v", p, err)
		}
		deadline := time.After(30 * time.Second)
	read:
		for {
			select {
			case m := <-pc.Messages():
				got = append(got, string(m.Value))
				if m.Offset+1 >= pc.HighWaterMarkOffset() {
					break read
				}
			case err := <-pc.Errors():
				t.Fatalf("consume t/%d: %v", p, err)
			case <-deadline:
				t.Fatalf("consume t/%d: nothing more within 30s after %d records", p, len(got))
			}
		}
		pc.Close()
	}
	readBackAll(t, "sarama", got, "s", 60)
	res := stopAndWait(t, s)
	for _, v := range res.Verdicts {
		if v.Checker == "acked-loss" && v.Result != checkers.ResultOK {
			t.Fatalf("acked-loss: %v", v)
		}
	}
}
