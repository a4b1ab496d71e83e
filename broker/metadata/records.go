package metadata

// This file declares the KRaft metadata records kafkasim writes, with the
// names, fields and api keys of Kafka's schemas
// (apache/kafka metadata/src/main/resources/common/metadata/*.json):
//
//	 0 RegisterBrokerRecord          v3 (KIP-858 LogDirs; what 3.7+ writes)
//	 1 UnregisterBrokerRecord        v0
//	 2 TopicRecord                   v0
//	 3 PartitionRecord               v2 (KIP-966 ELR; MetadataVersion 4.0-IV1+)
//	 4 ConfigRecord                  v0
//	 5 PartitionChangeRecord         v2
//	 7 FenceBrokerRecord             v0
//	 8 UnfenceBrokerRecord           v0
//	 9 RemoveTopicRecord             v0
//	12 FeatureLevelRecord            v0
//	15 ProducerIdsRecord             v0
//	17 BrokerRegistrationChangeRecord v0-v2 (the lowest version that holds
//	   the fields set, as ReplicationControlManager writes: v0 to fence or
//	   unfence, v1 for controlled shutdown, v2 for log dirs)
//	20 NoOpRecord                    v0
//
// Simplified: a nullable string the schema allows (RegisterBrokerRecord's
// Rack) is null when empty; the Go zero value of each optional
// ("tagged") field is its schema default, so an unset field is not written.

// Record is one metadata record.
type Record interface {
	// APIKey is the record's api key in Kafka's schema.
	APIKey() int16
	// Version is the version Encode writes.
	Version() int16
	encode(w *writer, version int16)
	decode(r *reader, version int16)
}

// Kafka's api keys of the records.
const (
	KeyRegisterBroker           int16 = 0
	KeyUnregisterBroker         int16 = 1
	KeyTopic                    int16 = 2
	KeyPartition                int16 = 3
	KeyConfig                   int16 = 4
	KeyPartitionChange          int16 = 5
	KeyFenceBroker              int16 = 7
	KeyUnfenceBroker            int16 = 8
	KeyRemoveTopic              int16 = 9
	KeyFeatureLevel             int16 = 12
	KeyProducerIDs              int16 = 15
	KeyBrokerRegistrationChange int16 = 17
	KeyNoOp                     int16 = 20
)

// Sentinels of the partition records (PartitionRegistration, LeaderConstants).
const (
	NoLeader       int32 = -1 // no leader
	NoLeaderChange int32 = -2 // PartitionChangeRecord.Leader: unchanged
)

// LeaderRecoveryState values (KIP-704); NoChange only in PartitionChangeRecord.
const (
	Recovered              int8 = 0
	Recovering             int8 = 1
	LeaderRecoveryNoChange int8 = -1
)

// ResourceType values of ConfigRecord (ConfigResource.Type).
const (
	ResourceTopic  int8 = 2
	ResourceBroker int8 = 4
	// ResourceGroup is a group's dynamic configs (KIP-848, KIP-932).
	ResourceGroup int8 = 32
)

// BrokerRegistrationChangeRecord.Fenced / InControlledShutdown values
// (BrokerRegistrationFencingChange, BrokerRegistrationInControlledShutdownChange).
const (
	Unfence                    int8 = -1
	NoChange                   int8 = 0
	Fence                      int8 = 1
	InControlledShutdownChange int8 = 1
)

// MetadataVersionFeature is the feature that names the metadata version;
// MetadataVersion40IV3 is 4.0-IV3, the level Kafka 4.0 bootstraps with.
const (
	MetadataVersionFeature       = "metadata.version"
	MetadataVersion40IV3   int16 = 25
	// MetadataVersion36IV0 is 3.6-IV0, the first level that does not bump
	// the leader epoch on an ISR shrink (KAFKA-15021).
	MetadataVersion36IV0 int16 = 12
)

// BrokerEndpoint is one of RegisterBrokerRecord's EndPoints.
type BrokerEndpoint struct {
	Name             string
	Host             string
	Port             uint16
	SecurityProtocol int16
}

// BrokerFeature is one of RegisterBrokerRecord's Features.
type BrokerFeature struct {
	Name                string
	MinSupportedVersion int16
	MaxSupportedVersion int16
}

// RegisterBrokerRecord registers a broker (api key 0).
type RegisterBrokerRecord struct {
	BrokerID             int32
	IsMigratingZkBroker  bool
	IncarnationID        [16]byte
	BrokerEpoch          int64
	EndPoints            []BrokerEndpoint
	Features             []BrokerFeature
	Rack                 string // "" is null
	Fenced               bool
	InControlledShutdown bool
	LogDirs              [][16]byte // tag 0
}

// UnregisterBrokerRecord removes a broker (api key 1).
type UnregisterBrokerRecord struct {
	BrokerID    int32
	BrokerEpoch int64
}

// TopicRecord creates a topic (api key 2).
type TopicRecord struct {
	Name    string
	TopicID [16]byte
}

// PartitionRecord creates a partition or states it in full (api key 3).
type PartitionRecord struct {
	PartitionID            int32
	TopicID                [16]byte
	Replicas               []int32
	ISR                    []int32
	RemovingReplicas       []int32
	AddingReplicas         []int32
	Leader                 int32
	LeaderRecoveryState    int8 // tag 0, default 0 (RECOVERED)
	LeaderEpoch            int32
	PartitionEpoch         int32
	Directories            [][16]byte // v1+; one per replica
	EligibleLeaderReplicas []int32    // tag 1, nullable, default null
	LastKnownELR           []int32    // tag 2, nullable, default null
}

// ConfigRecord sets (or, with a nil Value, deletes) a config (api key 4).
type ConfigRecord struct {
	ResourceType int8
	ResourceName string
	Name         string
	Value        *string
}

// PartitionChangeRecord changes a partition (api key 5). Every field but
// the ids is tagged; its default means "no change": nil slices, Leader
// NoLeaderChange (-2), LeaderRecoveryState LeaderRecoveryNoChange (-1).
// NB: New fills those defaults; a literal must set Leader and
// LeaderRecoveryState itself.
type PartitionChangeRecord struct {
	PartitionID            int32
	TopicID                [16]byte
	ISR                    []int32    // tag 0
	Leader                 int32      // tag 1
	Replicas               []int32    // tag 2
	RemovingReplicas       []int32    // tag 3
	AddingReplicas         []int32    // tag 4
	LeaderRecoveryState    int8       // tag 5
	EligibleLeaderReplicas []int32    // tag 6
	LastKnownELR           []int32    // tag 7
	Directories            [][16]byte // tag 8
}

// NewPartitionChangeRecord returns a record that changes nothing yet.
func NewPartitionChangeRecord(topicID [16]byte, partition int32) *PartitionChangeRecord {
	return &PartitionChangeRecord{PartitionID: partition, TopicID: topicID, Leader: NoLeaderChange, LeaderRecoveryState: LeaderRecoveryNoChange}
}

// FenceBrokerRecord fences a broker (api key 7; before 3.3-IV2).
type FenceBrokerRecord struct {
	ID    int32
	Epoch int64
}

// UnfenceBrokerRecord unfences a broker (api key 8; before 3.3-IV2).
type UnfenceBrokerRecord struct {
	ID    int32
	Epoch int64
}

// RemoveTopicRecord deletes a topic (api key 9).
type RemoveTopicRecord struct {
	TopicID [16]byte
}

// FeatureLevelRecord finalizes a feature's level (api key 12); level 0
// removes it.
type FeatureLevelRecord struct {
	Name         string
	FeatureLevel int16
}

// ProducerIdsRecord hands a block of producer ids to a broker (api key 15):
// NextProducerID is the first id not yet handed out.
type ProducerIdsRecord struct {
	BrokerID       int32
	BrokerEpoch    int64
	NextProducerID int64
}

// BrokerRegistrationChangeRecord changes a registered broker (api key 17).
type BrokerRegistrationChangeRecord struct {
	BrokerID             int32
	BrokerEpoch          int64
	Fenced               int8       // tag 0: Unfence, NoChange, Fence
	InControlledShutdown int8       // tag 1 (v1+): NoChange or InControlledShutdownChange
	LogDirs              [][16]byte // tag 2 (v2+)
}

// NoOpRecord changes nothing (api key 20).
type NoOpRecord struct{}

func (*RegisterBrokerRecord) APIKey() int16           { return KeyRegisterBroker }
func (*UnregisterBrokerRecord) APIKey() int16         { return KeyUnregisterBroker }
func (*TopicRecord) APIKey() int16                    { return KeyTopic }
func (*PartitionRecord) APIKey() int16                { return KeyPartition }
func (*ConfigRecord) APIKey() int16                   { return KeyConfig }
func (*PartitionChangeRecord) APIKey() int16          { return KeyPartitionChange }
func (*FenceBrokerRecord) APIKey() int16              { return KeyFenceBroker }
func (*UnfenceBrokerRecord) APIKey() int16            { return KeyUnfenceBroker }
func (*RemoveTopicRecord) APIKey() int16              { return KeyRemoveTopic }
func (*FeatureLevelRecord) APIKey() int16             { return KeyFeatureLevel }
func (*ProducerIdsRecord) APIKey() int16              { return KeyProducerIDs }
func (*BrokerRegistrationChangeRecord) APIKey() int16 { return KeyBrokerRegistrationChange }
func (*NoOpRecord) APIKey() int16                     { return KeyNoOp }

func (*RegisterBrokerRecord) Version() int16   { return 3 }
func (*UnregisterBrokerRecord) Version() int16 { return 0 }
func (*TopicRecord) Version() int16            { return 0 }
func (*PartitionRecord) Version() int16        { return 2 }
func (*ConfigRecord) Version() int16           { return 0 }
func (*PartitionChangeRecord) Version() int16  { return 2 }
func (*FenceBrokerRecord) Version() int16      { return 0 }
func (*UnfenceBrokerRecord) Version() int16    { return 0 }
func (*RemoveTopicRecord) Version() int16      { return 0 }
func (*FeatureLevelRecord) Version() int16     { return 0 }
func (*ProducerIdsRecord) Version() int16      { return 0 }
func (*NoOpRecord) Version() int16             { return 0 }

// Version is the lowest version holding the fields set.
func (r *BrokerRegistrationChangeRecord) Version() int16 {
	switch {
	case len(r.LogDirs) > 0:
		return 2
	case r.InControlledShutdown != NoChange:
		return 1
	}
	return 0
}

// maxVersion is the highest version Decode accepts, by api key.
var maxVersion = map[int16]int16{
	KeyRegisterBroker: 3, KeyUnregisterBroker: 0, KeyTopic: 0, KeyPartition: 2,
	KeyConfig: 0, KeyPartitionChange: 2, KeyFenceBroker: 0, KeyUnfenceBroker: 0,
	KeyRemoveTopic: 0, KeyFeatureLevel: 0, KeyProducerIDs: 0,
	KeyBrokerRegistrationChange: 2, KeyNoOp: 0,
}

func newRecord(key int16) Record {
	switch key {
	case KeyRegisterBroker:
		return &RegisterBrokerRecord{}
	case KeyUnregisterBroker:
		return &UnregisterBrokerRecord{}
	case KeyTopic:
		return &TopicRecord{}
	case KeyPartition:
		return &PartitionRecord{}
	case KeyConfig:
		return &ConfigRecord{}
	case KeyPartitionChange:
		return NewPartitionChangeRecord([16]byte{}, 0)
	case KeyFenceBroker:
		return &FenceBrokerRecord{}
	case KeyUnfenceBroker:
		return &UnfenceBrokerRecord{}
	case KeyRemoveTopic:
		return &RemoveTopicRecord{}
	case KeyFeatureLevel:
		return &FeatureLevelRecord{}
	case KeyProducerIDs:
		return &ProducerIdsRecord{BrokerEpoch: -1}
	case KeyBrokerRegistrationChange:
		return &BrokerRegistrationChangeRecord{}
	case KeyNoOp:
		return &NoOpRecord{}
	}
	return nil
}
