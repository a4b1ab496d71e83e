package server

// This file adds the consumer group protocol's APIs (KIP-848) to
// handlerVersions: ConsumerGroupHeartbeat 0-1 and ConsumerGroupDescribe
// 0-1, served from 4.0 in KRaft mode with the protocol on (kraftOnly; see
// api_versions.go's file comment). They sit apart so the table's
// alignment stays as it was.

func init() {
	handlerVersions[68] = handlerRange{min: 0, max: 1, kraftOnly: true} // ConsumerGroupHeartbeat
	handlerVersions[69] = handlerRange{min: 0, max: 1, kraftOnly: true} // ConsumerGroupDescribe
}
