package cluster

// This file is the standard whole-cluster benchmark workload (issue 4's,
// kept by BenchmarkCluster60s and `kafkasim bench`): 3 brokers, one topic
// "t" with 6 partitions and RF=3, and a Driver sending 10,000 records of
// 100 bytes with acks=all every 5 ms, no faults, for 60 simulated seconds.
// In KRaft mode (metadata.version 4.0, three dedicated controllers) the
// driver starts at 5 s, once the quorum has a leader and the brokers are
// unfenced; in ZooKeeper mode at 1 s.

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/sim"
)

// Workload60sRecords is how many records the workload sends.
const Workload60sRecords = 10000

// Workload60s builds the workload's world with seed; run it for 60
// simulated seconds, then Acked tells how many records were acknowledged.
func Workload60s(seed uint64, kraft bool) (*sim.World, *Driver, error) {
	return Workload(seed, kraft, Workload60sRecords)
}

// Workload is the workload with another number of records.
func Workload(seed uint64, kraft bool, records int) (*sim.World, *Driver, error) {
	props, controllers, start := map[string]string(nil), 0, sim.Second
	if kraft {
		props, controllers, start = map[string]string{config.PropInterBrokerProtocolVersion: "4.0"}, 3, 5*sim.Second
	}
	cfg, err := config.Parse(props)
	if err != nil {
		return nil, nil, err
	}
	w, err := sim.New(sim.Config{Seed: seed})
	if err != nil {
		return nil, nil, err
	}
	if _, err := Build(w, Spec{Brokers: 3, Controllers: controllers, Topics: []Topic{{Name: "t", Partitions: 6, ReplicationFactor: 3}}, Config: cfg}); err != nil {
		return nil, nil, err
	}
	d := &Driver{Topic: "t", Partitions: 6, Records: records, ValueSize: 100, Acks: -1, Interval: 5 * sim.Millisecond, Timeout: 30 * sim.Second, Brokers: 3}
	dn, err := w.AddNode("driver", func() sim.Node { return d }, sim.NodeOptions{})
	if err != nil {
		return nil, nil, err
	}
	w.At(sim.Time(start), "start-driver", func(w *sim.World) { w.Inject(sim.Start{Node: dn}) })
	return w, d, nil
}

// Acked returns how many of the driver's records were acknowledged.
func (d *Driver) Acked() int {
	n := 0
	for _, o := range d.Outcomes {
		if o.Acked() {
			n++
		}
	}
	return n
}

// CheckWorkload60s reports an error unless every record was acknowledged.
func CheckWorkload60s(d *Driver) error {
	if n := d.Acked(); n != Workload60sRecords {
		return fmt.Errorf("only %d of %d records acknowledged", n, Workload60sRecords)
	}
	return nil
}
