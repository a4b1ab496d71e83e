package metadata

// This file serializes records as Kafka's MetadataRecordSerde does
// (server-common AbstractApiMessageSerde): an unsigned-varint frame
// version (1), the unsigned-varint api key, the unsigned-varint record
// version, then the message in its flexible-version encoding (every
// metadata record is flexible from v0). Fields follow each schema's
// order; tagged fields go last, in tag order, and only when they differ
// from their default, as the generated write() does.

import "fmt"

// frameVersion is AbstractApiMessageSerde.DEFAULT_FRAME_VERSION.
const frameVersion = 1

// Encode serializes r as a metadata log record value.
func Encode(r Record) []byte {
	var w writer
	v := r.Version()
	w.uvarint(frameVersion)
	w.uvarint(uint64(r.APIKey()))
	w.uvarint(uint64(v))
	r.encode(&w, v)
	return w.b
}

// Decode parses a metadata log record value written by Encode (or Kafka).
func Decode(b []byte) (Record, error) {
	r := &reader{b: b}
	fv := r.uvarint()
	key := r.uvarint()
	ver := r.uvarint()
	if r.err != nil {
		return nil, fmt.Errorf("metadata: bad record frame: %w", r.err)
	}
	if fv != frameVersion {
		return nil, fmt.Errorf("metadata: frame version %d: only %d is known", fv, frameVersion)
	}
	rec := newRecord(int16(key))
	if rec == nil || key > 1<<15 {
		return nil, fmt.Errorf("metadata: unknown record api key %d", key)
	}
	if mv := maxVersion[int16(key)]; ver > uint64(mv) {
		return nil, fmt.Errorf("metadata: %T version %d: at most %d is known", rec, ver, mv)
	}
	rec.decode(r, int16(ver))
	if r.err != nil {
		return nil, fmt.Errorf("metadata: decoding %T v%d: %w", rec, ver, r.err)
	}
	if len(r.b) != 0 {
		return nil, fmt.Errorf("metadata: %T v%d: %d bytes left over", rec, ver, len(r.b))
	}
	return rec, nil
}

func (x *RegisterBrokerRecord) encode(w *writer, v int16) {
	w.int32(x.BrokerID)
	if v >= 2 {
		w.bool(x.IsMigratingZkBroker)
	}
	w.uuid(x.IncarnationID)
	w.int64(x.BrokerEpoch)
	w.uvarint(uint64(len(x.EndPoints)) + 1)
	for _, e := range x.EndPoints {
		w.str(e.Name)
		w.str(e.Host)
		w.uint16(e.Port)
		w.int16(e.SecurityProtocol)
		w.tagged()
	}
	w.uvarint(uint64(len(x.Features)) + 1)
	for _, f := range x.Features {
		w.str(f.Name)
		w.int16(f.MinSupportedVersion)
		w.int16(f.MaxSupportedVersion)
		w.tagged()
	}
	if x.Rack == "" {
		w.nullableStr(nil)
	} else {
		w.str(x.Rack)
	}
	w.bool(x.Fenced)
	if v >= 1 {
		w.bool(x.InControlledShutdown)
	}
	var tf []taggedField
	if v >= 3 && len(x.LogDirs) > 0 {
		tf = append(tf, field(0, func(w *writer) { w.uuids(x.LogDirs) }))
	}
	w.tagged(tf...)
}

func (x *RegisterBrokerRecord) decode(r *reader, v int16) {
	x.BrokerID = r.int32()
	if v >= 2 {
		x.IsMigratingZkBroker = r.bool()
	}
	x.IncarnationID = r.uuid()
	x.BrokerEpoch = r.int64()
	n := r.length()
	for i := 0; i < n && r.err == nil; i++ {
		e := BrokerEndpoint{Name: r.str(), Host: r.str(), Port: r.uint16(), SecurityProtocol: r.int16()}
		r.tagged(func(uint64, *reader) {})
		x.EndPoints = append(x.EndPoints, e)
	}
	n = r.length()
	for i := 0; i < n && r.err == nil; i++ {
		f := BrokerFeature{Name: r.str(), MinSupportedVersion: r.int16(), MaxSupportedVersion: r.int16()}
		r.tagged(func(uint64, *reader) {})
		x.Features = append(x.Features, f)
	}
	if s := r.nullableStr(); s != nil {
		x.Rack = *s
	}
	x.Fenced = r.bool()
	if v >= 1 {
		x.InControlledShutdown = r.bool()
	}
	r.tagged(func(tag uint64, fr *reader) {
		if tag == 0 && v >= 3 {
			x.LogDirs = fr.uuids()
		}
	})
}

func (x *UnregisterBrokerRecord) encode(w *writer, _ int16) {
	w.int32(x.BrokerID)
	w.int64(x.BrokerEpoch)
	w.tagged()
}

func (x *UnregisterBrokerRecord) decode(r *reader, _ int16) {
	x.BrokerID, x.BrokerEpoch = r.int32(), r.int64()
	r.tagged(func(uint64, *reader) {})
}

func (x *TopicRecord) encode(w *writer, _ int16) {
	w.str(x.Name)
	w.uuid(x.TopicID)
	w.tagged()
}

func (x *TopicRecord) decode(r *reader, _ int16) {
	x.Name, x.TopicID = r.str(), r.uuid()
	r.tagged(func(uint64, *reader) {})
}

func (x *PartitionRecord) encode(w *writer, v int16) {
	w.int32(x.PartitionID)
	w.uuid(x.TopicID)
	w.int32s(x.Replicas)
	w.int32s(x.ISR)
	w.int32s(x.RemovingReplicas)
	w.int32s(x.AddingReplicas)
	w.int32(x.Leader)
	w.int32(x.LeaderEpoch)
	w.int32(x.PartitionEpoch)
	if v >= 1 {
		w.uuids(x.Directories)
	}
	var tf []taggedField
	if x.LeaderRecoveryState != Recovered {
		tf = append(tf, field(0, func(w *writer) { w.int8(x.LeaderRecoveryState) }))
	}
	if v >= 2 && x.EligibleLeaderReplicas != nil {
		tf = append(tf, field(1, func(w *writer) { w.nullableInt32s(x.EligibleLeaderReplicas) }))
	}
	if v >= 2 && x.LastKnownELR != nil {
		tf = append(tf, field(2, func(w *writer) { w.nullableInt32s(x.LastKnownELR) }))
	}
	w.tagged(tf...)
}

func (x *PartitionRecord) decode(r *reader, v int16) {
	x.PartitionID = r.int32()
	x.TopicID = r.uuid()
	x.Replicas = r.int32s()
	x.ISR = r.int32s()
	x.RemovingReplicas = r.int32s()
	x.AddingReplicas = r.int32s()
	x.Leader = r.int32()
	x.LeaderEpoch = r.int32()
	x.PartitionEpoch = r.int32()
	if v >= 1 {
		x.Directories = r.uuids()
	}
	r.tagged(func(tag uint64, fr *reader) {
		switch {
		case tag == 0:
			x.LeaderRecoveryState = fr.int8()
		case tag == 1 && v >= 2:
			x.EligibleLeaderReplicas = fr.nullableInt32s()
		case tag == 2 && v >= 2:
			x.LastKnownELR = fr.nullableInt32s()
		}
	})
}

func (x *ConfigRecord) encode(w *writer, _ int16) {
	w.int8(x.ResourceType)
	w.str(x.ResourceName)
	w.str(x.Name)
	w.nullableStr(x.Value)
	w.tagged()
}

func (x *ConfigRecord) decode(r *reader, _ int16) {
	x.ResourceType, x.ResourceName, x.Name, x.Value = r.int8(), r.str(), r.str(), r.nullableStr()
	r.tagged(func(uint64, *reader) {})
}

func (x *PartitionChangeRecord) encode(w *writer, v int16) {
	w.int32(x.PartitionID)
	w.uuid(x.TopicID)
	var tf []taggedField
	arr := func(tag uint64, a []int32) {
		if a != nil {
			tf = append(tf, field(tag, func(w *writer) { w.nullableInt32s(a) }))
		}
	}
	arr(0, x.ISR)
	if x.Leader != NoLeaderChange {
		tf = append(tf, field(1, func(w *writer) { w.int32(x.Leader) }))
	}
	arr(2, x.Replicas)
	arr(3, x.RemovingReplicas)
	arr(4, x.AddingReplicas)
	if x.LeaderRecoveryState != LeaderRecoveryNoChange {
		tf = append(tf, field(5, func(w *writer) { w.int8(x.LeaderRecoveryState) }))
	}
	if v >= 2 {
		arr(6, x.EligibleLeaderReplicas)
		arr(7, x.LastKnownELR)
	}
	if v >= 1 && x.Directories != nil {
		tf = append(tf, field(8, func(w *writer) { w.nullableUUIDs(x.Directories) }))
	}
	w.tagged(tf...)
}

func (x *PartitionChangeRecord) decode(r *reader, v int16) {
	x.PartitionID = r.int32()
	x.TopicID = r.uuid()
	r.tagged(func(tag uint64, fr *reader) {
		switch {
		case tag == 0:
			x.ISR = fr.nullableInt32s()
		case tag == 1:
			x.Leader = fr.int32()
		case tag == 2:
			x.Replicas = fr.nullableInt32s()
		case tag == 3:
			x.RemovingReplicas = fr.nullableInt32s()
		case tag == 4:
			x.AddingReplicas = fr.nullableInt32s()
		case tag == 5:
			x.LeaderRecoveryState = fr.int8()
		case tag == 6 && v >= 2:
			x.EligibleLeaderReplicas = fr.nullableInt32s()
		case tag == 7 && v >= 2:
			x.LastKnownELR = fr.nullableInt32s()
		case tag == 8 && v >= 1:
			x.Directories = fr.nullableUUIDs()
		}
	})
}

func (x *FenceBrokerRecord) encode(w *writer, _ int16) { w.int32(x.ID); w.int64(x.Epoch); w.tagged() }
func (x *FenceBrokerRecord) decode(r *reader, _ int16) {
	x.ID, x.Epoch = r.int32(), r.int64()
	r.tagged(func(uint64, *reader) {})
}

func (x *UnfenceBrokerRecord) encode(w *writer, _ int16) { w.int32(x.ID); w.int64(x.Epoch); w.tagged() }
func (x *UnfenceBrokerRecord) decode(r *reader, _ int16) {
	x.ID, x.Epoch = r.int32(), r.int64()
	r.tagged(func(uint64, *reader) {})
}

func (x *RemoveTopicRecord) encode(w *writer, _ int16) { w.uuid(x.TopicID); w.tagged() }
func (x *RemoveTopicRecord) decode(r *reader, _ int16) {
	x.TopicID = r.uuid()
	r.tagged(func(uint64, *reader) {})
}

func (x *FeatureLevelRecord) encode(w *writer, _ int16) {
	w.str(x.Name)
	w.int16(x.FeatureLevel)
	w.tagged()
}
func (x *FeatureLevelRecord) decode(r *reader, _ int16) {
	x.Name, x.FeatureLevel = r.str(), r.int16()
	r.tagged(func(uint64, *reader) {})
}

func (x *ProducerIdsRecord) encode(w *writer, _ int16) {
	w.int32(x.BrokerID)
	w.int64(x.BrokerEpoch)
	w.int64(x.NextProducerID)
	w.tagged()
}

func (x *ProducerIdsRecord) decode(r *reader, _ int16) {
	x.BrokerID, x.BrokerEpoch, x.NextProducerID = r.int32(), r.int64(), r.int64()
	r.tagged(func(uint64, *reader) {})
}

func (x *BrokerRegistrationChangeRecord) encode(w *writer, v int16) {
	w.int32(x.BrokerID)
	w.int64(x.BrokerEpoch)
	var tf []taggedField
	if x.Fenced != NoChange {
		tf = append(tf, field(0, func(w *writer) { w.int8(x.Fenced) }))
	}
	if v >= 1 && x.InControlledShutdown != NoChange {
		tf = append(tf, field(1, func(w *writer) { w.int8(x.InControlledShutdown) }))
	}
	if v >= 2 && len(x.LogDirs) > 0 {
		tf = append(tf, field(2, func(w *writer) { w.uuids(x.LogDirs) }))
	}
	w.tagged(tf...)
}

func (x *BrokerRegistrationChangeRecord) decode(r *reader, v int16) {
	x.BrokerID, x.BrokerEpoch = r.int32(), r.int64()
	r.tagged(func(tag uint64, fr *reader) {
		switch {
		case tag == 0:
			x.Fenced = fr.int8()
		case tag == 1 && v >= 1:
			x.InControlledShutdown = fr.int8()
		case tag == 2 && v >= 2:
			x.LogDirs = fr.uuids()
		}
	})
}

func (x *NoOpRecord) encode(w *writer, _ int16) { w.tagged() }
func (x *NoOpRecord) decode(r *reader, _ int16) { r.tagged(func(uint64, *reader) {}) }
