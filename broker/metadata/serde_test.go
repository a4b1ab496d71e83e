package metadata

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var tid = [16]byte{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10}

const tidHex = "0102030405060708090a0b0c0d0e0f10"

// TestEncodeVectors checks bytes derived by hand from the JSON schemas and
// the MetadataRecordSerde frame: frame version 1, api key, version, then
// the flexible message (compact lengths are n+1, tagged fields last).
func TestEncodeVectors(t *testing.T) {
	ten := "10"
	cases := []struct {
		name string
		r    Record
		hex  string
	}{
		{"NoOpRecord", &NoOpRecord{}, "01 14 00 00"},
		{"FeatureLevelRecord", &FeatureLevelRecord{Name: "metadata.version", FeatureLevel: 25},
			"01 0c 00 11" + hex.EncodeToString([]byte("metadata.version")) + "0019 00"},
		{"TopicRecord", &TopicRecord{Name: "t", TopicID: tid}, "01 02 00 02 74" + tidHex + "00"},
		{"PartitionChangeRecord leader+isr", &PartitionChangeRecord{PartitionID: 0, TopicID: tid, Leader: 2, ISR: []int32{1, 2}, LeaderRecoveryState: LeaderRecoveryNoChange},
			"01 05 02 00000000" + tidHex + "02 00 09 03 00000001 00000002 01 04 00000002"},
		{"PartitionChangeRecord no leader, recovering", &PartitionChangeRecord{PartitionID: 3, TopicID: tid, Leader: -1, LeaderRecoveryState: Recovering},
			"01 05 02 00000003" + tidHex + "02 01 04 ffffffff 05 01 01"},
		{"BrokerRegistrationChangeRecord fence (v0)", &BrokerRegistrationChangeRecord{BrokerID: 1, BrokerEpoch: 5, Fenced: Fence},
			"01 11 00 00000001 0000000000000005 01 00 01 01"},
		{"BrokerRegistrationChangeRecord shutdown (v1)", &BrokerRegistrationChangeRecord{BrokerID: 1, BrokerEpoch: 5, InControlledShutdown: InControlledShutdownChange},
			"01 11 01 00000001 0000000000000005 01 01 01 01"},
		{"ProducerIdsRecord", &ProducerIdsRecord{BrokerID: 2, BrokerEpoch: 7, NextProducerID: 1000},
			"01 0f 00 00000002 0000000000000007 00000000000003e8 00"},
		{"ConfigRecord", &ConfigRecord{ResourceType: ResourceTopic, ResourceName: "t", Name: "min.insync.replicas", Value: &ten},
			"01 04 00 02 02 74 14" + hex.EncodeToString([]byte("min.insync.replicas")) + "03 3130 00"},
		{"ConfigRecord delete", &ConfigRecord{ResourceType: ResourceBroker, ResourceName: "", Name: "x"},
			"01 04 00 04 01 02 78 00 00"},
		{"PartitionRecord v2", &PartitionRecord{PartitionID: 1, TopicID: tid, Replicas: []int32{1, 2}, ISR: []int32{1}, RemovingReplicas: []int32{}, AddingReplicas: []int32{},
			Leader: 1, LeaderEpoch: 0, PartitionEpoch: 0, Directories: [][16]byte{{}, {}}, EligibleLeaderReplicas: []int32{2}},
			"01 03 02 00000001" + tidHex + "03 00000001 00000002 02 00000001 01 01 00000001 00000000 00000000 03" + strings.Repeat("00", 32) +
				"01 01 05 02 00000002"},
		{"RegisterBrokerRecord v3", &RegisterBrokerRecord{BrokerID: 1, IncarnationID: tid, BrokerEpoch: 10,
			EndPoints: []BrokerEndpoint{{Name: "PLAINTEXT", Host: "b1", Port: 9092, SecurityProtocol: 0}},
			Features:  []BrokerFeature{{Name: "metadata.version", MinSupportedVersion: 7, MaxSupportedVersion: 25}},
			Fenced:    true, LogDirs: [][16]byte{tid}},
			"01 00 03 00000001 00" + tidHex + "000000000000000a 02 0a" + hex.EncodeToString([]byte("PLAINTEXT")) + "03 6231 2384 0000 00" +
				"02 11" + hex.EncodeToString([]byte("metadata.version")) + "0007 0019 00" +
				"00 01 00 01 00 11 02" + tidHex},
	}
	for _, c := range cases {
		got := Encode(c.r)
		want := unhex(t, c.hex)
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %x\nwant %x", c.name, got, want)
			continue
		}
		back, err := Decode(got)
		if err != nil {
			t.Errorf("%s: decode: %v", c.name, err)
			continue
		}
		if !reflect.DeepEqual(back, c.r) {
			t.Errorf("%s: round trip:\n got %+v\nwant %+v", c.name, back, c.r)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, c := range []struct{ name, hex string }{
		{"frame version", "02 14 00 00"},
		{"unknown key", "01 06 00 00"},
		{"version too high", "01 14 01 00"},
		{"truncated", "01 02 00 05 74"},
		{"left over", "01 14 00 00 00"},
	} {
		if _, err := Decode(unhex(t, c.hex)); err == nil {
			t.Errorf("%s: no error", c.name)
		}
	}
}

// TestDecodeSkipsUnknownTags: a tagged field this version does not know
// is skipped, as Kafka's generated readers do.
func TestDecodeSkipsUnknownTags(t *testing.T) {
	r, err := Decode(unhex(t, "01 14 00 01 09 02 aaaa"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := r.(*NoOpRecord); !ok {
		t.Fatalf("got %T", r)
	}
}
