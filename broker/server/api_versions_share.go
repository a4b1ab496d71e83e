package server

// This file adds share groups' APIs (KIP-932) to handlerVersions:
// ShareGroupHeartbeat 1, ShareGroupDescribe 1, ShareFetch 1-2 and
// ShareAcknowledge 1-2 (v2: Kafka 4.2's KIP-1206 and KIP-1222), and the
// share coordinator's InitializeShareGroupState 0, ReadShareGroupState 0,
// WriteShareGroupState 0-1, DeleteShareGroupState 0 and
// ReadShareGroupStateSummary 0-1 (share_coordinator.go), and the admin
// APIs DescribeShareGroupOffsets 0-1, AlterShareGroupOffsets 0 and
// DeleteShareGroupOffsets 0 (share_admin.go), served
// in KRaft mode with share.version 1 (from 4.2; shareOnly, see
// api_versions.go). Version 0 was 4.0's early access, never advertised
// by a released broker. They sit apart so the table's alignment stays as
// it was.

func init() {
	handlerVersions[76] = handlerRange{min: 1, max: 1, shareOnly: true} // ShareGroupHeartbeat
	handlerVersions[77] = handlerRange{min: 1, max: 1, shareOnly: true} // ShareGroupDescribe
	handlerVersions[78] = handlerRange{min: 1, max: 2, shareOnly: true} // ShareFetch
	handlerVersions[79] = handlerRange{min: 1, max: 2, shareOnly: true} // ShareAcknowledge
	handlerVersions[83] = handlerRange{min: 0, max: 0, shareOnly: true} // InitializeShareGroupState
	handlerVersions[84] = handlerRange{min: 0, max: 0, shareOnly: true} // ReadShareGroupState
	handlerVersions[85] = handlerRange{min: 0, max: 1, shareOnly: true} // WriteShareGroupState
	handlerVersions[86] = handlerRange{min: 0, max: 0, shareOnly: true} // DeleteShareGroupState
	handlerVersions[87] = handlerRange{min: 0, max: 1, shareOnly: true} // ReadShareGroupStateSummary
	handlerVersions[90] = handlerRange{min: 0, max: 1, shareOnly: true} // DescribeShareGroupOffsets
	handlerVersions[91] = handlerRange{min: 0, max: 0, shareOnly: true} // AlterShareGroupOffsets
	handlerVersions[92] = handlerRange{min: 0, max: 0, shareOnly: true} // DeleteShareGroupOffsets
}
