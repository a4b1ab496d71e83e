// Package scenarios holds the named fault scenarios: the cluster, topics,
// configuration, workload and fault schedule of each, and the verdict
// expected under each truncation protocol (hw, kip101, kip279). The
// published failure traces (KIP-101, KIP-279, KAFKA-7164) are scripts in
// testdata with golden output.
package scenarios
