package txn

// This file answers DescribeTransactions (api key 65) and
// ListTransactions (66) from the coordinator's state (KIP-664, Kafka
// 3.0+'s TransactionCoordinator.handleDescribeTransactions and
// TransactionStateManager.listTransactionStates): an empty id is
// INVALID_REQUEST; an id this coordinator does not lead NOT_COORDINATOR,
// one whose partition is loading COORDINATOR_LOAD_IN_PROGRESS, one it
// does not know (or that is being expired, Dead) TRANSACTIONAL_ID_NOT_FOUND.
// The list leaves out Dead ids and is COORDINATOR_LOAD_IN_PROGRESS while
// a partition loads.

import (
	"github.com/twmb/franz-go/pkg/kerr"
)

// Describe returns a copy of id's metadata, or the error that answers a
// DescribeTransactions for it.
func (c *Coordinator) Describe(id string) (Metadata, *kerr.Error) {
	if id == "" {
		return Metadata{}, kerr.InvalidRequest
	}
	if err := c.check(id); err != nil {
		return Metadata{}, err
	}
	e := c.txns[id]
	if e == nil || e.m.State == Dead {
		return Metadata{}, kerr.TransactionalIDNotFound
	}
	return *e.m.clone(), nil
}

// List returns copies of the metadata of every transactional id this
// coordinator holds (Dead ones left out), sorted by id, or
// COORDINATOR_LOAD_IN_PROGRESS while a partition it leads is loading.
func (c *Coordinator) List() ([]Metadata, *kerr.Error) {
	for _, o := range c.owned { // NB: whether any loads; order does not matter
		if !o.loaded {
			return nil, kerr.CoordinatorLoadInProgress
		}
	}
	var out []Metadata
	for _, id := range c.ids() {
		if e := c.txns[id]; e.m.State != Dead {
			out = append(out, *e.m.clone())
		}
	}
	return out, nil
}

// StateByName returns the state Kafka names name (TransactionState.fromName).
func StateByName(name string) (State, bool) {
	for i, n := range stateNames {
		if n == name {
			return State(i), true
		}
	}
	return 0, false
}
