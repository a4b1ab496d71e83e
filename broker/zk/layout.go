package zk

// This file is Kafka's ZooKeeper layout (kafka.zk.ZkData, Kafka 2.x before
// KRaft): the paths and the JSON each znode holds, so that the controller
// and the brokers read and write what Kafka does. JSON fields are written in
// a fixed order (Kafka writes a Scala map's order, which is unspecified) and
// partition maps in numeric order, so that znode data is deterministic.
// Simplifications vs Kafka, and why:
//   - Broker registrations carry host, port, endpoints, the listener map and
//     rack (version 4); no features (version 5) or JMX beyond the field.
//   - Topic znodes have no topic_id (version 3, Kafka 2.8): nothing in the
//     simulation uses topic ids.
//   - Partition state has no leader_recovery_state (KIP-704, Kafka 3.2).
//   - Of the config znodes only topic configs are written
//     (/config/topics/<t>, and the /config/changes notification
//     AdminZkClient.changeTopicConfig leaves); the ACL and
//     delegation-token znodes are named in PersistentPaths but have no
//     encoders: the simulation does not use them.
//   - Consumer offsets (offsets.storage=zookeeper, OffsetCommit/OffsetFetch
//     v0) live at ConsumerOffsetPath as the offset in decimal, as the old
//     consumer's ZKStringSerializer wrote them; the old consumer's group
//     registry (/consumers/<group>/ids, /owners) is not modelled.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/sim"
)

// Kafka's fixed znodes.
const (
	BrokersPath                  = "/brokers"
	BrokerIDsPath                = "/brokers/ids"
	BrokerTopicsPath             = "/brokers/topics"
	BrokerSeqIDPath              = "/brokers/seqid"
	ControllerPath               = "/controller"
	ControllerEpochPath          = "/controller_epoch"
	AdminPath                    = "/admin"
	ReassignPartitionsPath       = "/admin/reassign_partitions"
	PreferredReplicaElectionPath = "/admin/preferred_replica_election"
	DeleteTopicsPath             = "/admin/delete_topics"
	IsrChangeNotificationPath    = "/isr_change_notification"
	// IsrChangeNotificationPrefix is the name of the sequential znodes a
	// leader creates under IsrChangeNotificationPath ("isr_change_0000000007").
	IsrChangeNotificationPrefix = "/isr_change_notification/isr_change_"
	ConfigPath                  = "/config"
	ClusterIDPath               = "/cluster/id"
)

// PersistentPaths are the znodes a Kafka broker creates at startup if
// missing (ZkData.PersistentZkPaths), in creation order.
var PersistentPaths = []string{
	"/consumers", BrokerIDsPath, BrokerTopicsPath, "/config/changes", "/config/topics",
	"/config/clients", "/config/users", "/config/brokers", DeleteTopicsPath, BrokerSeqIDPath,
	IsrChangeNotificationPath, "/latest_producer_id_block", "/log_dir_event_notification",
}

// BrokerIDPath is /brokers/ids/<id>, the broker's ephemeral registration.
func BrokerIDPath(id int32) string { return BrokerIDsPath + "/" + itoa(id) }

// TopicPath is /brokers/topics/<topic>, the topic's replica assignment.
func TopicPath(topic string) string { return BrokerTopicsPath + "/" + topic }

// TopicPartitionsPath is /brokers/topics/<topic>/partitions.
func TopicPartitionsPath(topic string) string { return TopicPath(topic) + "/partitions" }

// TopicPartitionPath is /brokers/topics/<topic>/partitions/<partition>.
func TopicPartitionPath(topic string, partition int32) string {
	return TopicPartitionsPath(topic) + "/" + itoa(partition)
}

// TopicPartitionStatePath is /brokers/topics/<topic>/partitions/<partition>/state.
func TopicPartitionStatePath(topic string, partition int32) string {
	return TopicPartitionPath(topic, partition) + "/state"
}

// ConsumerOffsetPath is /consumers/<group>/offsets/<topic>/<partition>,
// where offsets.storage=zookeeper keeps a group's committed offset of a
// partition (ZKGroupTopicDirs.consumerOffsetDir), the offset in decimal.
func ConsumerOffsetPath(group, topic string, partition int32) string {
	return "/consumers/" + group + "/offsets/" + topic + "/" + itoa(partition)
}

// ConfigTopicsPath holds the topics' dynamic configs; ConfigChangePrefix
// names the sequential notifications of a change
// ("/config/changes/config_change_0000000003").
const (
	ConfigTopicsPath   = "/config/topics"
	ConfigChangePrefix = "/config/changes/config_change_"
)

// TopicConfigPath is /config/topics/<topic>, the topic's own configs.
func TopicConfigPath(topic string) string { return ConfigTopicsPath + "/" + topic }

// EntityConfig is the JSON of /config/topics/<topic> (ConfigEntityZNode):
// {"version":1,"config":{"min.insync.replicas":"2"}} (keys sorted).
type EntityConfig struct {
	Version int               `json:"version"`
	Config  map[string]string `json:"config"`
}

// ConfigChange is the JSON of a /config/changes notification
// (ConfigEntityChangeNotificationSequenceZNode, version 2):
// {"version":2,"entity_path":"topics/t"}.
type ConfigChange struct {
	Version    int    `json:"version"`
	EntityPath string `json:"entity_path"`
}

// DeleteTopicPath is /admin/delete_topics/<topic>, created (empty) to ask
// the controller to delete the topic.
func DeleteTopicPath(topic string) string { return DeleteTopicsPath + "/" + topic }

// IsrChangeSequence returns the sequence number of an ISR-change
// notification znode name ("isr_change_0000000007" or its full path).
func IsrChangeSequence(name string) (int64, bool) {
	i := strings.LastIndex(name, "isr_change_")
	if i < 0 {
		return 0, false
	}
	n, err := strconv.ParseInt(name[i+len("isr_change_"):], 10, 64)
	return n, err == nil
}

func itoa(n int32) string { return strconv.FormatInt(int64(n), 10) }

// timestamp renders a time as Kafka does in znodes: milliseconds, as a string.
func timestamp(t sim.Time) string { return strconv.FormatInt(int64(t)/int64(sim.Millisecond), 10) }

// BrokerRegistration is the JSON of /brokers/ids/<id> (BrokerIdZNode,
// version 4), e.g. {"version":4,"host":"b1","port":9092,"jmx_port":-1,
// "timestamp":"0","endpoints":["PLAINTEXT://b1:9092"],
// "listener_security_protocol_map":{"PLAINTEXT":"PLAINTEXT"},"rack":"r1"}.
type BrokerRegistration struct {
	Version                     int               `json:"version"`
	Host                        string            `json:"host"`
	Port                        int32             `json:"port"`
	JmxPort                     int32             `json:"jmx_port"`
	Timestamp                   string            `json:"timestamp"`
	Endpoints                   []string          `json:"endpoints"`
	ListenerSecurityProtocolMap map[string]string `json:"listener_security_protocol_map"`
	Rack                        string            `json:"rack,omitempty"`
}

// NewBrokerRegistration returns the registration of a broker with one
// PLAINTEXT listener at host:port, registered at now; rack may be empty.
func NewBrokerRegistration(host string, port int32, rack string, now sim.Time) BrokerRegistration {
	return BrokerRegistration{
		Version: 4, Host: host, Port: port, JmxPort: -1, Timestamp: timestamp(now),
		Endpoints:                   []string{"PLAINTEXT://" + host + ":" + itoa(port)},
		ListenerSecurityProtocolMap: map[string]string{"PLAINTEXT": "PLAINTEXT"},
		Rack:                        rack,
	}
}

// ControllerZNode is the JSON of /controller (ControllerZNode):
// {"version":1,"brokerid":1,"timestamp":"1234"}.
type ControllerZNode struct {
	Version   int    `json:"version"`
	BrokerID  int32  `json:"brokerid"`
	Timestamp string `json:"timestamp"`
}

// NewControllerZNode returns the /controller data of broker id elected at now.
func NewControllerZNode(id int32, now sim.Time) ControllerZNode {
	return ControllerZNode{Version: 1, BrokerID: id, Timestamp: timestamp(now)}
}

// InitialControllerEpoch is the epoch /controller_epoch is created with
// (KafkaController.InitialControllerEpoch); the first controller bumps it to 1.
const InitialControllerEpoch int32 = 0

// EncodeControllerEpoch renders /controller_epoch's data: the epoch in decimal.
func EncodeControllerEpoch(epoch int32) []byte { return []byte(itoa(epoch)) }

// DecodeControllerEpoch parses /controller_epoch's data.
func DecodeControllerEpoch(b []byte) (int32, error) {
	n, err := strconv.ParseInt(string(b), 10, 32)
	if err != nil {
		return 0, fmt.Errorf("/controller_epoch data %q: must be a decimal int32", b)
	}
	return int32(n), nil
}

// ReplicaAssignment maps partitions to their replicas, preferred leader
// first. Its JSON is an object keyed by partition, in numeric order:
// {"0":[1,2,3],"1":[2,3,1]}.
type ReplicaAssignment map[int32][]int32

// MarshalJSON implements json.Marshaler, in partition order.
func (a ReplicaAssignment) MarshalJSON() ([]byte, error) {
	parts := make([]int32, 0, len(a))
	for p := range a {
		parts = append(parts, p)
	}
	slices.Sort(parts)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range parts {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + itoa(p) + `":`)
		replicas := a[p]
		if replicas == nil {
			replicas = []int32{}
		}
		r, err := json.Marshal(replicas)
		if err != nil {
			return nil, err
		}
		b.Write(r)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// TopicAssignment is the JSON of /brokers/topics/<topic> (TopicZNode).
// Version 1 is the seeds' (and Kafka before 2.4's) shape,
// {"version":1,"partitions":{"0":[1,2,3]}}; version 2 (KIP-455, Kafka 2.4)
// adds the replicas being added and removed by a reassignment:
// {"version":2,"partitions":{...},"adding_replicas":{},"removing_replicas":{}}.
type TopicAssignment struct {
	Version          int
	Partitions       ReplicaAssignment
	AddingReplicas   ReplicaAssignment
	RemovingReplicas ReplicaAssignment
}

// TopicZNodeVersion is the version NewTopicAssignment writes.
const TopicZNodeVersion = 2

// NewTopicAssignment returns a version-2 assignment with no reassignment in progress.
func NewTopicAssignment(partitions ReplicaAssignment) TopicAssignment {
	return TopicAssignment{Version: TopicZNodeVersion, Partitions: partitions}
}

type topicV1 struct {
	Version    int               `json:"version"`
	Partitions ReplicaAssignment `json:"partitions"`
}

type topicV2 struct {
	Version          int               `json:"version"`
	Partitions       ReplicaAssignment `json:"partitions"`
	AddingReplicas   ReplicaAssignment `json:"adding_replicas"`
	RemovingReplicas ReplicaAssignment `json:"removing_replicas"`
}

// MarshalJSON implements json.Marshaler: the version-1 shape for Version
// 1, the version-2 shape otherwise.
func (t TopicAssignment) MarshalJSON() ([]byte, error) {
	orEmpty := func(a ReplicaAssignment) ReplicaAssignment {
		if a == nil {
			return ReplicaAssignment{}
		}
		return a
	}
	switch t.Version {
	case 1:
		return json.Marshal(topicV1{1, orEmpty(t.Partitions)})
	case 2:
		return json.Marshal(topicV2{2, orEmpty(t.Partitions), orEmpty(t.AddingReplicas), orEmpty(t.RemovingReplicas)})
	}
	return nil, fmt.Errorf("topic znode version %d: must be 1 or 2", t.Version)
}

// UnmarshalJSON implements json.Unmarshaler; it reads both versions.
func (t *TopicAssignment) UnmarshalJSON(b []byte) error {
	var v topicV2
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*t = TopicAssignment{Version: v.Version, Partitions: v.Partitions, AddingReplicas: v.AddingReplicas, RemovingReplicas: v.RemovingReplicas}
	return nil
}

// PartitionState is the JSON of
// /brokers/topics/<topic>/partitions/<partition>/state
// (TopicPartitionStateZNode), fields in the seeds' order:
// {"controller_epoch":5,"leader":1,"version":1,"leader_epoch":6,"isr":[2,1,3]}.
// A leader of -1 means none (LeaderAndIsr.NoLeader).
type PartitionState struct {
	ControllerEpoch int32   `json:"controller_epoch"`
	Leader          int32   `json:"leader"`
	Version         int     `json:"version"`
	LeaderEpoch     int32   `json:"leader_epoch"`
	ISR             []int32 `json:"isr"`
}

// NoLeader is the leader id of a partition without a leader.
const NoLeader int32 = -1

// TopicPartitionRef names a partition in the admin and notification znodes.
type TopicPartitionRef struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
}

// PartitionReassignment is one entry of /admin/reassign_partitions.
type PartitionReassignment struct {
	Topic     string  `json:"topic"`
	Partition int32   `json:"partition"`
	Replicas  []int32 `json:"replicas"`
}

// ReassignPartitions is the JSON of /admin/reassign_partitions
// (ReassignPartitionsZNode): {"version":1,"partitions":[{"topic":"t",
// "partition":0,"replicas":[1,2,3]}]}.
type ReassignPartitions struct {
	Version    int                     `json:"version"`
	Partitions []PartitionReassignment `json:"partitions"`
}

// PartitionList is the JSON of /admin/preferred_replica_election
// (PreferredReplicaElectionZNode) and of the ISR-change notifications
// (IsrChangeNotificationSequenceZNode): {"version":1,"partitions":
// [{"topic":"t","partition":0}]}.
type PartitionList struct {
	Version    int                 `json:"version"`
	Partitions []TopicPartitionRef `json:"partitions"`
}

// Encode renders v as compact JSON; v is one of this file's znode types.
// It panics on a value encoding/json cannot encode (a programming error).
func Encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("zk.Encode %T: %v", v, err))
	}
	return b
}

// Decode parses data into v (a pointer to one of this file's znode types),
// naming the znode type in its error.
func Decode(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("decode %T from %q: %w", v, data, err)
	}
	return nil
}

// MarshalJSON implements json.Marshaler, writing a nil ISR as [] as Kafka does.
func (s PartitionState) MarshalJSON() ([]byte, error) {
	type plain PartitionState
	if s.ISR == nil {
		s.ISR = []int32{}
	}
	return json.Marshal(plain(s))
}

// MarshalJSON implements json.Marshaler, writing nil partitions as [].
func (r ReassignPartitions) MarshalJSON() ([]byte, error) {
	type plain ReassignPartitions
	if r.Partitions == nil {
		r.Partitions = []PartitionReassignment{}
	}
	return json.Marshal(plain(r))
}

// MarshalJSON implements json.Marshaler, writing nil partitions as [].
func (l PartitionList) MarshalJSON() ([]byte, error) {
	type plain PartitionList
	if l.Partitions == nil {
		l.Partitions = []TopicPartitionRef{}
	}
	return json.Marshal(plain(l))
}
