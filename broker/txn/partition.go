package txn

// This file places transactional ids on __transaction_state partitions,
// bit-exact with Kafka's TransactionStateManager.partitionFor:
// Utils.abs(transactionalId.hashCode) % transactionTopicPartitionCount.

import (
	"github.com/kafkasim/kafkasim/broker/assignor"
	"github.com/kafkasim/kafkasim/broker/coordinator"
)

// StateTopic is the internal topic of the transaction coordinators.
const StateTopic = "__transaction_state"

// PartitionFor returns the __transaction_state partition whose leader
// coordinates transactionalID, with numPartitions =
// transaction.state.log.num.partitions. It panics if numPartitions < 1.
func PartitionFor(transactionalID string, numPartitions int) int32 {
	if numPartitions < 1 {
		panic("txn: transaction.state.log.num.partitions must be >= 1")
	}
	return coordinator.KafkaAbs(assignor.JavaStringHashCode(transactionalID)) % int32(numPartitions)
}
