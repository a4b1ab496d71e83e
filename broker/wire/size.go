package wire

// This file computes the encoded length of the messages replication sends
// most (Fetch and Produce, requests and responses) without encoding them:
// encoding only to measure copies every record batch once more and, for
// Fetch v12's tagged fields, allocates. Each size function follows the
// message's AppendTo in github.com/twmb/franz-go/pkg/kmsg field by field
// for the versions and forms named; for anything else (a later version,
// unknown tags, a tagged field set) it reports false and the encoder
// measures the old way. TestSizeMatchesEncoding compares both on random
// messages of every version covered.

import "github.com/twmb/franz-go/pkg/kmsg"

// encodedSize returns the length of body's encoding, if computed here.
func encodedSize(body any) (int, bool) {
	switch m := body.(type) {
	case *kmsg.FetchRequest:
		return fetchRequestSize(m)
	case *kmsg.FetchResponse:
		return fetchResponseSize(m)
	case *kmsg.ProduceRequest:
		return produceRequestSize(m)
	case *kmsg.ProduceResponse:
		return produceResponseSize(m)
	}
	return 0, false
}

// uvarintSize is the length of kbin.AppendUvarint(v).
func uvarintSize(v uint32) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// arrayLenSize is the length of an array's length: a compact (uvarint
// n+1) one in flexible versions, an int32 otherwise. A nullable array's
// nil is uvarint 0 or int32 -1: of the same length as an empty array's.
func arrayLenSize(n int, flexible bool) int {
	if flexible {
		return uvarintSize(uint32(n) + 1)
	}
	return 4
}

func stringSize(s string, flexible bool) int {
	if flexible {
		return uvarintSize(uint32(len(s))+1) + len(s)
	}
	return 2 + len(s)
}

func nullableStringSize(s *string, flexible bool) int {
	if s == nil {
		if flexible {
			return 1
		}
		return 2
	}
	return stringSize(*s, flexible)
}

func nullableBytesSize(b []byte, flexible bool) int {
	if b == nil {
		if flexible {
			return 1
		}
		return 4
	}
	if flexible {
		return uvarintSize(uint32(len(b))+1) + len(b)
	}
	return 4 + len(b)
}

// fetchRequestSize covers v0 to v12 with no unknown tags, no forgotten
// topics and the top-level tagged fields unset (ClusterID, ReplicaState).
func fetchRequestSize(v *kmsg.FetchRequest) (int, bool) {
	version := v.Version
	flexible := version >= 12
	if version < 0 || version > 12 || len(v.ForgottenTopics) > 0 || v.UnknownTags.Len() > 0 ||
		v.ClusterID != nil || v.ReplicaState.ID != -1 || v.ReplicaState.Epoch != -1 || v.ReplicaState.UnknownTags.Len() > 0 {
		return 0, false
	}
	n := 4 + 4 + 4 // ReplicaID, MaxWaitMillis, MinBytes
	if version >= 3 {
		n += 4 // MaxBytes
	}
	if version >= 4 {
		n++ // IsolationLevel
	}
	if version >= 7 {
		n += 4 + 4 // SessionID, SessionEpoch
	}
	n += arrayLenSize(len(v.Topics), flexible)
	for i := range v.Topics {
		t := &v.Topics[i]
		if t.UnknownTags.Len() > 0 {
			return 0, false
		}
		n += stringSize(t.Topic, flexible)
		n += arrayLenSize(len(t.Partitions), flexible)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			n += 4 + 8 + 4 // Partition, FetchOffset, PartitionMaxBytes
			if version >= 9 {
				n += 4 // CurrentLeaderEpoch
			}
			if version >= 12 {
				n += 4 // LastFetchedEpoch
			}
			if version >= 5 {
				n += 8 // LogStartOffset
			}
			if flexible {
				if p.UnknownTags.Len() > 0 {
					return 0, false
				}
				n++ // the tag count, < 128
				if p.ReplicaDirectoryID != [16]byte{} {
					n += 1 + 1 + 16
				}
				if p.HighWatermark != 9223372036854775807 {
					n += 1 + 1 + 8
				}
			}
		}
		if flexible {
			n++ // the topic's tag count
		}
	}
	if version >= 7 {
		n += arrayLenSize(0, flexible) // ForgottenTopics
	}
	if version >= 11 {
		n += stringSize(v.Rack, flexible)
	}
	if flexible {
		n++ // the tag count
	}
	return n, true
}

// fetchResponseSize covers v0 to v12 with no unknown tags and, per
// partition, the tagged fields unset (DivergingEpoch, CurrentLeader,
// SnapshotID) or only DivergingEpoch set; no Brokers.
func fetchResponseSize(v *kmsg.FetchResponse) (int, bool) {
	version := v.Version
	flexible := version >= 12
	if version < 0 || version > 12 || v.UnknownTags.Len() > 0 || len(v.Brokers) > 0 {
		return 0, false
	}
	n := 0
	if version >= 1 {
		n += 4 // ThrottleMillis
	}
	if version >= 7 {
		n += 2 + 4 // ErrorCode, SessionID
	}
	n += arrayLenSize(len(v.Topics), flexible)
	for i := range v.Topics {
		t := &v.Topics[i]
		if t.UnknownTags.Len() > 0 {
			return 0, false
		}
		n += stringSize(t.Topic, flexible)
		n += arrayLenSize(len(t.Partitions), flexible)
		for j := range t.Partitions {
			p := &t.Partitions[j]
			n += 4 + 2 + 8 // Partition, ErrorCode, HighWatermark
			if version >= 4 {
				n += 8 // LastStableOffset
			}
			if version >= 5 {
				n += 8 // LogStartOffset
			}
			if version >= 4 {
				n += arrayLenSize(len(p.AbortedTransactions), flexible)
				for k := range p.AbortedTransactions {
					n += 8 + 8
					if flexible {
						if p.AbortedTransactions[k].UnknownTags.Len() > 0 {
							return 0, false
						}
						n++
					}
				}
			}
			if version >= 11 {
				n += 4 // PreferredReadReplica
			}
			n += nullableBytesSize(p.RecordBatches, flexible)
			if flexible {
				if p.UnknownTags.Len() > 0 || p.DivergingEpoch.UnknownTags.Len() > 0 ||
					p.CurrentLeader.LeaderID != -1 || p.CurrentLeader.LeaderEpoch != -1 || p.CurrentLeader.UnknownTags.Len() > 0 ||
					p.SnapshotID.EndOffset != -1 || p.SnapshotID.Epoch != -1 || p.SnapshotID.UnknownTags.Len() > 0 {
					return 0, false
				}
				n++ // the tag count
				if p.DivergingEpoch.Epoch != -1 || p.DivergingEpoch.EndOffset != -1 {
					n += 1 + 1 + 4 + 8 + 1 // tag, length, Epoch, EndOffset, its tag count
				}
			}
		}
		if flexible {
			n++ // the topic's tag count
		}
	}
	if flexible {
		n++ // the tag count
	}
	return n, true
}

// produceRequestSize covers v0 to v8 (not flexible).
func produceRequestSize(v *kmsg.ProduceRequest) (int, bool) {
	version := v.Version
	if version < 0 || version > 8 {
		return 0, false
	}
	n := 2 + 4 // Acks, TimeoutMillis
	if version >= 3 {
		n += nullableStringSize(v.TransactionID, false)
	}
	n += 4
	for i := range v.Topics {
		t := &v.Topics[i]
		n += stringSize(t.Topic, false) + 4
		for j := range t.Partitions {
			n += 4 + nullableBytesSize(t.Partitions[j].Records, false)
		}
	}
	return n, true
}

// produceResponseSize covers v0 to v8 (not flexible).
func produceResponseSize(v *kmsg.ProduceResponse) (int, bool) {
	version := v.Version
	if version < 0 || version > 8 {
		return 0, false
	}
	n := 4
	for i := range v.Topics {
		t := &v.Topics[i]
		n += stringSize(t.Topic, false) + 4
		for j := range t.Partitions {
			p := &t.Partitions[j]
			n += 4 + 2 + 8 // Partition, ErrorCode, BaseOffset
			if version >= 2 {
				n += 8 // LogAppendTime
			}
			if version >= 5 {
				n += 8 // LogStartOffset
			}
			if version >= 8 {
				n += 4
				for k := range p.ErrorRecords {
					n += 4 + nullableStringSize(p.ErrorRecords[k].ErrorMessage, false)
				}
				n += nullableStringSize(p.ErrorMessage, false)
			}
		}
	}
	if version >= 1 {
		n += 4 // ThrottleMillis
	}
	return n, true
}
