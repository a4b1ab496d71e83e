// Package broker is the root of everything that is Kafka in kafkasim. Its
// sub-packages hold the log storage (storage), the configuration (config),
// the simulated ZooKeeper (zk), and, as they land, the protocol messages,
// partition replication, the controller, the group coordinator, the
// transaction coordinator (txn) and the clients. Code here is pure: it acts on the world only through a
// *sim.Context (see package sim), which internal/detlint enforces.
package broker
