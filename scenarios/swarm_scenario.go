package scenarios

// This file is the randomized scenario's script and the swarm step's
// arguments (the harness runs the step: harness/swarm.go).

import "strings"

const swarmScript = `
describe random crashes, power losses, restarts, pauses and partitions under a steady produce load; replicas must converge after healing
source kafkasim swarm testing (FoundationDB / TigerBeetle style)
brokers 3
topic t partitions=3 rf=3
set zookeeper.session.timeout.ms=6000 replica.lag.time.max.ms=10000
# The clients' idempotence is their release's rule (broker/config/producer.go):
# kip279-safe's 3.9 producer is idempotent by default, hw-unsafe's 0.10.2
# one has none, and a 1.1 producer must ask for it (kip101-safe does). So
# -grid acks=1,all works: with acks=1 given, a 3.9 producer is not
# idempotent, as Kafka's is not (KAFKA-13673), and the run says so.
variant kip279-safe truncation=kip279 min.insync.replicas=2 unclean.leader.election.enable=false $acks=all
variant kip101-safe truncation=kip101 min.insync.replicas=2 unclean.leader.election.enable=false $acks=all enable.idempotence=true
variant hw-unsafe truncation=hw min.insync.replicas=1 unclean.leader.election.enable=true $acks=1
# kip279-flush is kip279-safe with every append fsynced
# (log.flush.interval.messages=1): a power loss may take only what was not
# flushed, so here it takes nothing, and a loss it causes is a bug.
variant kip279-flush truncation=kip279 min.insync.replicas=2 unclean.leader.election.enable=false $acks=all log.flush.interval.messages=1
# Every checker has an expectation. 'permitted' means no contract break
# (ok passes too); 'any' is for what a random schedule shows on some seeds
# and not others. linearizability is 'any': porcupine may run out of its
# budget on a long swarm history (unknown); TestSuiteMeetsExpectations
# still fails on any contract break outside the bug variants.
expect kip279-safe linearizability=any acked-loss=permitted divergence=permitted invariants=permitted duplicates=permitted ordering=permitted liveness=ok
expect kip279-flush linearizability=any acked-loss=permitted divergence=permitted invariants=permitted duplicates=permitted ordering=permitted liveness=ok
# KIP-101 without KIP-279 diverges after fast leader changes (KAFKA-6361,
# seed 34): a protocol bug of Kafka 0.11-1.1, shown on some seeds.
expect kip101-safe linearizability=any acked-loss=permitted divergence=any invariants=permitted duplicates=permitted ordering=permitted liveness=ok
# HW truncation (pre-0.11) diverges and breaks the HW invariants on some
# seeds: the bug KIP-101 fixed.
expect hw-unsafe linearizability=any acked-loss=permitted divergence=any invariants=any duplicates=permitted ordering=permitted liveness=ok

run 3s
swarm 60s clients=2 interval=20ms fault-every=2s crash=0.3 power-loss=0.1 pause=0.1 partition=0.2 heal=0.3 acks=$acks
heal
restart-all
run 30s
`

// Swarm returns the randomized scenario.
func Swarm() *Script {
	s, err := Parse("swarm", "swarm", strings.NewReader(swarmScript))
	if err != nil {
		panic(err)
	}
	return s
}

// SwarmKeys are the swarm step's own arguments, each overridable by the
// script variable of the same name ($crash, $fault-every, $profile, ...).
// The step takes producer properties too (acks, enable.idempotence, ...),
// which configure its clients under those of the run's configuration.
var SwarmKeys = []string{"clients", "interval", "acks", "fault-every", "crash", "power-loss", "pause", "partition", "heal", "consumer-crash", "consumer-stall", "consumer-pause", "wipe-disk", "profile"}

// MaxSwarmClients bounds a swarm step's clients: memory and time grow
// linearly with them (docs/scenarios.md, "What a run costs").
const MaxSwarmClients = 100
