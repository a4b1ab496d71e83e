package serve

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestSecurityMetadataServed: ACLs, SCRAM credentials and client quotas
// written through one broker are read through another, in ZooKeeper and
// KRaft mode (they are the cluster's metadata, broker/security); an API
// serve does not serve (AlterPartitionReassignments) is answered
// UNSUPPORTED_VERSION and the connection serves on. kafka-go's ACL, SCRAM
// and quota tests got "unexpected EOF" before: the connection closed.
func TestSecurityMetadataServed(t *testing.T) {
	for _, mode := range []struct {
		name string
		set  map[string]string
	}{{"zk", nil}, {"kraft", map[string]string{"inter.broker.protocol.version": "4.1"}}} {
		t.Run(mode.name, func(t *testing.T) {
			s := startServer(t, 10, nil, mode.set)
			b0, b2 := dial(t, s.Addrs()[0]), dial(t, s.Addrs()[2])

			av, err := b2.do(kmsg.NewPtrApiVersionsRequest())
			if err != nil {
				t.Fatal(err)
			}
			keys := map[int16]bool{}
			for _, k := range av.(*kmsg.ApiVersionsResponse).ApiKeys {
				keys[k.ApiKey] = true
			}
			for _, k := range []int16{29, 30, 31, 46, 48, 49, 50, 51} {
				if !keys[k] {
					t.Errorf("ApiVersions lacks %s", kmsg.NameForKey(k))
				}
			}
			if keys[45] {
				t.Error("ApiVersions advertises AlterPartitionReassignments, which serve does not serve")
			}

			create := kmsg.NewPtrCreateACLsRequest()
			create.Version = 2
			c := kmsg.NewCreateACLsRequestCreation()
			c.ResourceType, c.ResourceName, c.ResourcePatternType = kmsg.ACLResourceTypeTopic, "t", kmsg.ACLResourcePatternTypeLiteral
			c.Principal, c.Host, c.Operation, c.PermissionType = "User:alice", "*", kmsg.ACLOperationRead, kmsg.ACLPermissionTypeAllow
			create.Creations = append(create.Creations, c)
			if r, err := b0.do(create); err != nil || r.(*kmsg.CreateACLsResponse).Results[0].ErrorCode != 0 {
				t.Fatalf("CreateAcls on b0: %v %+v", err, r)
			}
			describe := kmsg.NewPtrDescribeACLsRequest()
			describe.Version = 2
			describe.ResourceType, describe.ResourcePatternType = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny
			describe.Operation, describe.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
			r, err := b2.do(describe)
			if err != nil {
				t.Fatal(err)
			}
			if res := r.(*kmsg.DescribeACLsResponse).Resources; len(res) != 1 || res[0].ResourceName != "t" || len(res[0].ACLs) != 1 {
				t.Fatalf("DescribeAcls on b2: %+v, want b0's binding", res)
			}

			scram := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
			u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
			u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = "alice", 1, 4096, []byte("s"), []byte("p")
			scram.Upsertions = append(scram.Upsertions, u)
			if r, err := b0.do(scram); err != nil || r.(*kmsg.AlterUserSCRAMCredentialsResponse).Results[0].ErrorCode != 0 {
				t.Fatalf("AlterUserScramCredentials on b0: %v %+v", err, r)
			}
			r, err = b2.do(kmsg.NewPtrDescribeUserSCRAMCredentialsRequest())
			if err != nil {
				t.Fatal(err)
			}
			if res := r.(*kmsg.DescribeUserSCRAMCredentialsResponse).Results; len(res) != 1 || res[0].User != "alice" {
				t.Fatalf("DescribeUserScramCredentials on b2: %+v, want alice", res)
			}

			quota := kmsg.NewPtrAlterClientQuotasRequest()
			e := kmsg.NewAlterClientQuotasRequestEntry()
			ent := kmsg.NewAlterClientQuotasRequestEntryEntity()
			name := "app"
			ent.Type, ent.Name = "client-id", &name
			op := kmsg.NewAlterClientQuotasRequestEntryOp()
			op.Key, op.Value = "producer_byte_rate", 1024
			e.Entity, e.Ops = append(e.Entity, ent), append(e.Ops, op)
			quota.Entries = append(quota.Entries, e)
			if r, err := b0.do(quota); err != nil || r.(*kmsg.AlterClientQuotasResponse).Entries[0].ErrorCode != 0 {
				t.Fatalf("AlterClientQuotas on b0: %v %+v", err, r)
			}
			r, err = b2.do(kmsg.NewPtrDescribeClientQuotasRequest())
			if err != nil {
				t.Fatal(err)
			}
			if res := r.(*kmsg.DescribeClientQuotasResponse).Entries; len(res) != 1 || len(res[0].Values) != 1 || res[0].Values[0].Value != 1024 {
				t.Fatalf("DescribeClientQuotas on b2: %+v, want app's producer_byte_rate", res)
			}

			reassign := kmsg.NewPtrAlterPartitionAssignmentsRequest()
			rt := kmsg.NewAlterPartitionAssignmentsRequestTopic()
			rt.Topic = "t"
			rp := kmsg.NewAlterPartitionAssignmentsRequestTopicPartition()
			rp.Replicas = []int32{0, 1, 2}
			rt.Partitions = append(rt.Partitions, rp)
			reassign.Topics = append(reassign.Topics, rt)
			r, err = b2.do(reassign)
			if err != nil {
				t.Fatalf("AlterPartitionReassignments: %v (the connection closed)", err)
			}
			if ec := r.(*kmsg.AlterPartitionAssignmentsResponse).ErrorCode; ec != kerr.UnsupportedVersion.Code {
				t.Fatalf("AlterPartitionReassignments: error %d, want UNSUPPORTED_VERSION", ec)
			}
			if _, err := b2.do(metadataReq()); err != nil {
				t.Fatalf("Metadata after the refused request: %v", err)
			}
		})
	}
}

// TestUnsupportedAnswerOnlyWithRoom: the UNSUPPORTED_VERSION answer is
// given only where the response carries a top-level error code at the
// request's version; elsewhere the connection closes, as Kafka's does.
func TestUnsupportedAnswerOnlyWithRoom(t *testing.T) {
	for _, c := range []struct {
		key, version int16
		answered     bool
	}{
		{45, 0, true},   // AlterPartitionReassignments: ErrorCode at v0
		{1, 3, false},   // Fetch v3: ErrorCode only from v7
		{1, 7, true},    // Fetch v7
		{0, 2, false},   // Produce: no top-level ErrorCode
		{999, 0, false}, // no such API
	} {
		if got := unsupportedAnswer(Header{Key: c.key, Version: c.version}) != nil; got != c.answered {
			t.Errorf("key %d v%d: answered %v, want %v", c.key, c.version, got, c.answered)
		}
	}
}
