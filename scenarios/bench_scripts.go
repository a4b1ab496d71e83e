package scenarios

// GroupSwarmBench is the consumer-group benchmark's script
// (BenchmarkConsumerGroupSwarm and `kafkasim bench`'s group-swarm): 3
// consumers of one group read a 6-partition topic while the swarm sends
// and injects faults for 100 s.
const GroupSwarmBench = `
describe a group of 3 consumers reads a 6-partition topic under swarm faults
brokers 3
topic t partitions=6 rf=3
set min.insync.replicas=2 zookeeper.session.timeout.ms=6000 replica.lag.time.max.ms=10000 offsets.topic.num.partitions=6 offsets.topic.replication.factor=3 group.initial.rebalance.delay.ms=0
run 3s
consumer c1 group.id=g topic=t poll=20ms process=1ms session.timeout.ms=6000 heartbeat.interval.ms=1000 request.timeout.ms=3000
consumer c2 group.id=g topic=t poll=20ms process=1ms session.timeout.ms=6000 heartbeat.interval.ms=1000 request.timeout.ms=3000
consumer c3 group.id=g topic=t poll=20ms process=1ms session.timeout.ms=6000 heartbeat.interval.ms=1000 request.timeout.ms=3000
swarm 100s clients=5 interval=50ms acks=all fault-every=5s crash=0.3 power-loss=0 pause=0.1 partition=0.2 heal=0.4
heal
restart-all
run 30s
`
