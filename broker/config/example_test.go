package config_test

import (
	"fmt"

	"github.com/kafkasim/kafkasim/broker/config"
)

// Example parses what a user types on the command line, checks it against
// the cluster, and prints what a replay command needs.
func Example() {
	cfg, err := config.Parse(map[string]string{
		"acks":                "all",
		"min.insync.replicas": "2",
		"truncation":          "hw",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := cfg.Validate(3, 3); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Broker.Truncation, cfg.Broker.InterBrokerProtocolVersion, cfg.Broker.ReplicaLagTimeMax)
	for _, kv := range cfg.NonDefaultPairs() {
		fmt.Println(kv)
	}
	_, err = config.Parse(map[string]string{"acks": "maybe"})
	fmt.Println(err)
	_, err = config.Parse(map[string]string{"min.insync.replica": "2"})
	fmt.Println(err)
	cfg, _ = config.Parse(map[string]string{"min.insync.replicas": "3"})
	fmt.Println(cfg.Validate(3, 2))
	// Output:
	// hw 0.10.2 10.000s
	// delete.topic.enable=false
	// inter.broker.protocol.version=0.10.2
	// kafkasim.leader.epoch.fencing=false
	// kafkasim.truncation.in.fetch=false
	// log.message.format.version=0.10.2
	// message.max.bytes=1000012
	// min.insync.replicas=2
	// replica.lag.time.max.ms=10000
	// transaction.partition.verification.enable=false
	// truncation=hw
	// unclean.leader.election.enable=true
	// zookeeper.session.timeout.ms=6000
	// config: acks = "maybe": not one of the allowed values; allowed: 0, 1, -1, all
	// config: unknown property "min.insync.replica"; did you mean "min.insync.replicas"?
	// config: min.insync.replicas = 3 conflicts with replication factor = 2: every acks=all produce would fail with NOT_ENOUGH_REPLICAS; allowed: min.insync.replicas in [1, 2]
}
