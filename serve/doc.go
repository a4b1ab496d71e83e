// Package serve puts a simulated cluster behind real sockets: `kafkasim
// serve`. Each broker of a scenario's world gets a TCP listener that
// speaks Kafka's wire protocol, so unmodified clients (franz-go, librdkafka
// through kcat, the Java client) produce and consume against brokers that
// really crash, lag and truncate, while the scenario's steps and live
// commands inject the faults and the checkers judge what the brokers saw.
//
// One world, one goroutine: the world runs on the caller's goroutine
// (harness.Run with a Pacer, pacer.go), held to the wall clock. The socket
// goroutines (socket.go) only move bytes between connections and the
// world's inbox; everything that decides anything happens in the world,
// at points a tape records (tape.go), so a served run replays.
//
// Files: frame.go (Kafka framing), gateway.go (connections as nodes of the
// world), history.go (the brokers' side of the history), pacer.go,
// socket.go, tape.go, server.go, faults.go (-faults: the swarm's faults on
// a schedule the seed draws inside the world, harness/faults.go). Compressed batches pass through as
// produced: the simulated brokers store them so (broker/storage).
package serve
