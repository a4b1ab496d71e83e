package serve

import (
	"context"
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kafkasim/kafkasim/checkers"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestKadmAdminAPIs: franz-go's admin client, unmodified, against the
// served cluster in both modes: it creates a topic, adds partitions to
// it, alters its configs incrementally and as a whole state, describes
// the cluster, deletes records and deletes the topic; then, after writing
// to the scenario's own topic t, it deletes t (ZooKeeper mode) or t-0's
// records (KRaft mode). The served run is judged: deleting lost nothing
// (checkers/deletion.go), and the tape replays to the same trace.
func TestKadmAdminAPIs(t *testing.T) {
	if testing.Short() {
		t.Skip("real client over TCP: skipped with -short")
	}
	for _, mode := range []string{"zk", "kraft"} {
		t.Run(mode, func(t *testing.T) {
			var set map[string]string
			if mode == "kraft" {
				set = map[string]string{"inter.broker.protocol.version": "4.0"}
			}
			var tape strings.Builder
			s := startServer(t, 5, &tape, set)
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			cl, err := kgo.NewClient(kgo.SeedBrokers(s.Addrs()...), kgo.ClientID("admin"), kgo.ProducerLinger(0), kgo.RecordPartitioner(kgo.ManualPartitioner()))
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			adm := kadm.NewClient(cl)

			if _, err := adm.CreateTopic(ctx, 2, 3, nil, "adm"); err != nil {
				t.Fatalf("CreateTopic: %v", err)
			}
			for i := range 4 {
				r := &kgo.Record{Topic: "adm", Partition: int32(i % 2), Value: []byte(fmt.Sprintf("a%d", i))}
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatalf("produce to adm: %v", err)
				}
			}

			// CreatePartitions: 2 -> 4.
			cps, err := adm.CreatePartitions(ctx, 2, "adm")
			if err != nil || cps["adm"].Err != nil {
				t.Fatalf("CreatePartitions: %v %v", err, cps["adm"].Err)
			}
			waitFor(t, ctx, "adm to have 4 partitions with leaders", func() bool {
				td, err := adm.ListTopics(ctx, "adm")
				if err != nil || td["adm"].Err != nil || len(td["adm"].Partitions) != 4 {
					return false
				}
				for _, p := range td["adm"].Partitions {
					if p.Leader < 0 {
						return false
					}
				}
				return true
			})

			// IncrementalAlterConfigs, then AlterConfigs (the whole state).
			retention := func() string {
				rcs, err := adm.DescribeTopicConfigs(ctx, "adm")
				if err != nil {
					t.Fatalf("DescribeTopicConfigs: %v", err)
				}
				rc, err := rcs.On("adm", nil)
				if err != nil {
					t.Fatalf("DescribeTopicConfigs adm: %v", err)
				}
				for _, c := range rc.Configs {
					if c.Key == "retention.ms" {
						return c.MaybeValue()
					}
				}
				return ""
			}
			acs, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kadm.StringPtr("60000")}}, "adm")
			if err != nil || acs[0].Err != nil {
				t.Fatalf("AlterTopicConfigs: %v %+v", err, acs)
			}
			waitFor(t, ctx, "retention.ms 60000", func() bool { return retention() == "60000" })
			acs, err = adm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{{Name: "retention.ms", Value: kadm.StringPtr("120000")}}, "adm")
			if err != nil || acs[0].Err != nil {
				t.Fatalf("AlterTopicConfigsState: %v %+v", err, acs)
			}
			waitFor(t, ctx, "retention.ms 120000", func() bool { return retention() == "120000" })
			acs, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "no.such.config", Value: kadm.StringPtr("1")}}, "adm")
			if err != nil || acs[0].Err == nil {
				t.Fatalf("AlterTopicConfigs of an unknown config: %v %+v", err, acs)
			}

			// DescribeCluster names the 3 brokers at their listeners.
			dc, err := kmsg.NewPtrDescribeClusterRequest().RequestWith(ctx, cl)
			if err != nil || dc.ErrorCode != 0 || len(dc.Brokers) != 3 {
				t.Fatalf("DescribeCluster: %v %+v", err, dc)
			}
			for _, b := range dc.Brokers {
				if addr := net.JoinHostPort(b.Host, strconv.Itoa(int(b.Port))); !slices.Contains(s.Addrs(), addr) {
					t.Fatalf("DescribeCluster: broker %d at %s, not a listener of %v", b.NodeID, addr, s.Addrs())
				}
			}

			// DeleteRecords below offset 1 of adm-0.
			os := kadm.Offsets{}
			os.Add(kadm.Offset{Topic: "adm", Partition: 0, At: 1})
			drs, err := adm.DeleteRecords(ctx, os)
			if err != nil {
				t.Fatalf("DeleteRecords: %v", err)
			}
			if dr, ok := drs.Lookup("adm", 0); !ok || dr.Err != nil || dr.LowWatermark != 1 {
				t.Fatalf("DeleteRecords adm-0: %+v", dr)
			}

			// DeleteTopics.
			dts, err := adm.DeleteTopics(ctx, "adm")
			if err != nil || dts["adm"].Err != nil {
				t.Fatalf("DeleteTopics: %v %v", err, dts["adm"].Err)
			}
			waitFor(t, ctx, "adm to be gone", func() bool {
				td, err := adm.ListTopics(ctx)
				return err == nil && !slices.Contains(td.Names(), "adm")
			})

			// The scenario's topic: written, then deleted.
			for i := range 6 {
				r := &kgo.Record{Topic: "t", Partition: int32(i % 3), Value: []byte(fmt.Sprintf("t%d", i))}
				if err := cl.ProduceSync(ctx, r).FirstErr(); err != nil {
					t.Fatalf("produce to t: %v", err)
				}
			}
			// ZooKeeper mode deletes t; KRaft mode deletes t-0's records.
			wantNote := "deleted by DeleteTopics set aside"
			if mode == "zk" {
				if dts, err := adm.DeleteTopics(ctx, "t"); err != nil || dts["t"].Err != nil {
					t.Fatalf("DeleteTopics t: %v %v", err, dts["t"].Err)
				}
			} else {
				wantNote = "2 acknowledged sends below the log start offset DeleteRecords set"
				os := kadm.Offsets{}
				os.Add(kadm.Offset{Topic: "t", Partition: 0, At: 2})
				drs, err := adm.DeleteRecords(ctx, os)
				if dr, ok := drs.Lookup("t", 0); err != nil || !ok || dr.Err != nil || dr.LowWatermark != 2 {
					t.Fatalf("DeleteRecords t-0: %v %+v", err, dr)
				}
			}
			cl.Close()

			res := stopAndWait(t, s)
			if mode == "zk" && res.Stats.SetAside < 6 {
				t.Errorf("set aside %d operations after deleting t: want its 6 sends at least, counted apart from the acknowledged", res.Stats.SetAside)
			}
			for _, v := range res.Verdicts {
				if v.Checker == checkers.NameAckedLoss {
					if v.Result == checkers.ResultViolation {
						t.Errorf("acked-loss after deleting t: %v", v)
					}
					if !strings.Contains(strings.Join(v.Notes, "\n"), wantNote) {
						t.Errorf("acked-loss notes %q: want %q", v.Notes, wantNote)
					}
				}
				if v.ContractBroken() {
					t.Errorf("%s: %v", v.Checker, v)
				}
			}
			replaysTo(t, tape.String(), res, 1)
		})
	}
}
