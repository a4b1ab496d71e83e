package security

import (
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func creation(typ kmsg.ACLResourceType, name string, pattern kmsg.ACLResourcePatternType, principal string, op kmsg.ACLOperation) kmsg.CreateACLsRequestCreation {
	c := kmsg.NewCreateACLsRequestCreation()
	c.ResourceType, c.ResourceName, c.ResourcePatternType = typ, name, pattern
	c.Principal, c.Host, c.Operation, c.PermissionType = principal, "*", op, kmsg.ACLPermissionTypeAllow
	return c
}

func str(s string) *string { return &s }

// TestACLsCreateDescribeDelete follows Kafka's AclAuthorizer semantics: a
// MATCH filter finds the literal name, the wildcard and the prefixes; a
// LITERAL filter only the exact pattern; invalid creations are
// INVALID_REQUEST; a delete returns what it removed.
func TestACLsCreateDescribeDelete(t *testing.T) {
	s := NewStore()
	req := kmsg.NewPtrCreateACLsRequest()
	req.Version = 2
	req.Creations = []kmsg.CreateACLsRequestCreation{
		creation(kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationRead),
		creation(kmsg.ACLResourceTypeTopic, "ord", kmsg.ACLResourcePatternTypePrefixed, "User:bob", kmsg.ACLOperationWrite),
		creation(kmsg.ACLResourceTypeTopic, "*", kmsg.ACLResourcePatternTypeLiteral, "User:carol", kmsg.ACLOperationDescribe),
		creation(kmsg.ACLResourceTypeTopic, "other", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationRead),
		creation(kmsg.ACLResourceTypeCluster, "not-the-cluster", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationAlter),
		creation(kmsg.ACLResourceTypeTopic, "x", kmsg.ACLResourcePatternTypeLiteral, "alice", kmsg.ACLOperationRead),
		creation(kmsg.ACLResourceTypeTopic, "x", kmsg.ACLResourcePatternTypeMatch, "User:alice", kmsg.ACLOperationRead),
		creation(kmsg.ACLResourceTypeTopic, "orders", kmsg.ACLResourcePatternTypeLiteral, "User:alice", kmsg.ACLOperationRead), // again
	}
	resp := s.CreateAcls(req)
	want := []int16{0, 0, 0, 0, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, 0}
	for i, r := range resp.Results {
		if r.ErrorCode != want[i] {
			t.Errorf("creation %d: error %d, want %d", i, r.ErrorCode, want[i])
		}
	}
	if n := len(s.ACLs()); n != 4 {
		t.Fatalf("%d bindings stored, want 4 (the invalid ones and the repeat not stored): %+v", n, s.ACLs())
	}

	describe := func(pattern kmsg.ACLResourcePatternType, name *string) []string {
		d := kmsg.NewPtrDescribeACLsRequest()
		d.Version, d.ResourceType, d.ResourceName, d.ResourcePatternType = 2, kmsg.ACLResourceTypeTopic, name, pattern
		d.Operation, d.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
		r := s.DescribeAcls(d)
		if r.ErrorCode != 0 {
			t.Fatalf("describe: error %d", r.ErrorCode)
		}
		var got []string
		for _, res := range r.Resources {
			for _, a := range res.ACLs {
				got = append(got, res.ResourceName+"/"+a.Principal)
			}
		}
		return got
	}
	if got := describe(kmsg.ACLResourcePatternTypeMatch, str("orders")); len(got) != 3 || got[0] != "*/User:carol" || got[1] != "ord/User:bob" || got[2] != "orders/User:alice" {
		t.Errorf("MATCH orders: %v, want the wildcard, the prefix and the literal", got)
	}
	if got := describe(kmsg.ACLResourcePatternTypeLiteral, str("orders")); len(got) != 1 {
		t.Errorf("LITERAL orders: %v, want the literal binding only", got)
	}
	if got := describe(kmsg.ACLResourcePatternTypeAny, nil); len(got) != 4 {
		t.Errorf("ANY: %v, want all 4", got)
	}

	del := kmsg.NewPtrDeleteACLsRequest()
	del.Version = 2
	f := kmsg.NewDeleteACLsRequestFilter()
	f.ResourceType, f.ResourcePatternType, f.Principal = kmsg.ACLResourceTypeAny, kmsg.ACLResourcePatternTypeAny, str("User:alice")
	f.Operation, f.PermissionType = kmsg.ACLOperationAny, kmsg.ACLPermissionTypeAny
	bad := f
	bad.Operation = kmsg.ACLOperationUnknown
	del.Filters = []kmsg.DeleteACLsRequestFilter{f, bad}
	dr := s.DeleteAcls(del)
	if len(dr.Results) != 2 || len(dr.Results[0].MatchingACLs) != 2 || dr.Results[1].ErrorCode != kerr.InvalidRequest.Code {
		t.Fatalf("delete: %+v, want alice's 2 bindings removed and the UNKNOWN filter refused", dr.Results)
	}
	if n := len(s.ACLs()); n != 2 {
		t.Fatalf("%d bindings left, want 2", n)
	}
}

// TestScramCredentials follows KIP-554's errors: iterations bounds,
// unknown mechanism, duplicates, deleting or describing what is not there.
func TestScramCredentials(t *testing.T) {
	s := NewStore()
	up := func(user string, mech int8, iter int32) kmsg.AlterUserSCRAMCredentialsRequestUpsertion {
		u := kmsg.NewAlterUserSCRAMCredentialsRequestUpsertion()
		u.Name, u.Mechanism, u.Iterations, u.Salt, u.SaltedPassword = user, mech, iter, []byte("salt"), []byte("pw")
		return u
	}
	req := kmsg.NewPtrAlterUserSCRAMCredentialsRequest()
	req.Upsertions = []kmsg.AlterUserSCRAMCredentialsRequestUpsertion{
		up("alice", 1, 8192), up("alice", 2, 4096), up("bob", 1, 100), up("carol", 3, 8192),
		up("dave", 1, 8192), up("dave", 1, 8192),
	}
	del := kmsg.NewAlterUserSCRAMCredentialsRequestDeletion()
	del.Name, del.Mechanism = "erin", 1
	req.Deletions = append(req.Deletions, del)
	resp := s.AlterUserScramCredentials(req)
	want := map[string]int16{"alice": 0, "bob": kerr.UnacceptableCredential.Code, "carol": kerr.UnsupportedSaslMechanism.Code,
		"dave": kerr.DuplicateResource.Code, "erin": kerr.ResourceNotFound.Code}
	if len(resp.Results) != len(want) {
		t.Fatalf("%d results, want one per user: %+v", len(resp.Results), resp.Results)
	}
	for _, r := range resp.Results {
		if r.ErrorCode != want[r.User] {
			t.Errorf("%s: error %d, want %d", r.User, r.ErrorCode, want[r.User])
		}
	}
	d := kmsg.NewPtrDescribeUserSCRAMCredentialsRequest()
	dr := s.DescribeUserScramCredentials(d)
	if len(dr.Results) != 1 || dr.Results[0].User != "alice" || len(dr.Results[0].CredentialInfos) != 2 || dr.Results[0].CredentialInfos[0].Iterations != 8192 {
		t.Fatalf("describe all: %+v, want alice's two credentials only (a user's changes apply only if all pass)", dr.Results)
	}
	for _, u := range []string{"alice", "bob", "alice"} {
		x := kmsg.NewDescribeUserSCRAMCredentialsRequestUser()
		x.Name = u
		d.Users = append(d.Users, x)
	}
	dr = s.DescribeUserScramCredentials(d)
	if len(dr.Results) != 2 || dr.Results[0].ErrorCode != kerr.DuplicateResource.Code || dr.Results[1].ErrorCode != kerr.ResourceNotFound.Code {
		t.Fatalf("describe alice, bob, alice: %+v", dr.Results)
	}
}

// TestClientQuotas follows KIP-546: entities, defaults, strict matching.
func TestClientQuotas(t *testing.T) {
	s := NewStore()
	entry := func(value float64, key string, parts ...*string) kmsg.AlterClientQuotasRequestEntry {
		e := kmsg.NewAlterClientQuotasRequestEntry()
		for i := 0; i < len(parts); i += 2 {
			c := kmsg.NewAlterClientQuotasRequestEntryEntity()
			c.Type, c.Name = *parts[i], parts[i+1]
			e.Entity = append(e.Entity, c)
		}
		op := kmsg.NewAlterClientQuotasRequestEntryOp()
		op.Key, op.Value = key, value
		e.Ops = append(e.Ops, op)
		return e
	}
	req := kmsg.NewPtrAlterClientQuotasRequest()
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{
		entry(1024, "producer_byte_rate", str("user"), str("alice")),
		entry(2048, "consumer_byte_rate", str("user"), str("alice"), str("client-id"), str("app")),
		entry(10, "producer_byte_rate", str("user"), nil),
		entry(1.5, "producer_byte_rate", str("user"), str("bob")),                    // not a whole number
		entry(5, "producer_byte_rate", str("ip"), str("10.0.0.1")),                   // not an ip key
		entry(5, "request_percentage", str("user"), str("x"), str("user"), str("y")), // user twice
	}
	resp := s.AlterClientQuotas(req)
	want := []int16{0, 0, 0, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code, kerr.InvalidRequest.Code}
	for i, r := range resp.Entries {
		if r.ErrorCode != want[i] {
			t.Errorf("entry %d: error %d, want %d", i, r.ErrorCode, want[i])
		}
	}
	describe := func(strict bool, comps ...kmsg.DescribeClientQuotasRequestComponent) int {
		d := kmsg.NewPtrDescribeClientQuotasRequest()
		d.Components, d.Strict = comps, strict
		r := s.DescribeClientQuotas(d)
		if r.ErrorCode != 0 {
			t.Fatalf("describe: error %d", r.ErrorCode)
		}
		return len(r.Entries)
	}
	comp := func(typ string, m kmsg.QuotasMatchType, name *string) kmsg.DescribeClientQuotasRequestComponent {
		c := kmsg.NewDescribeClientQuotasRequestComponent()
		c.EntityType, c.MatchType, c.Match = typ, m, name
		return c
	}
	for _, c := range []struct {
		what   string
		strict bool
		comps  []kmsg.DescribeClientQuotasRequestComponent
		want   int
	}{
		{"everything", false, nil, 3},
		{"user alice", false, []kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeExact, str("alice"))}, 2},
		{"user alice, strict", true, []kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeExact, str("alice"))}, 1},
		{"the default user", false, []kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeDefault, nil)}, 1},
		{"any named user", false, []kmsg.DescribeClientQuotasRequestComponent{comp("user", kmsg.QuotasMatchTypeAny, nil)}, 2},
	} {
		if got := describe(c.strict, c.comps...); got != c.want {
			t.Errorf("%s: %d entries, want %d", c.what, got, c.want)
		}
	}
	rm := entry(0, "producer_byte_rate", str("user"), str("alice"))
	rm.Ops[0].Remove = true
	req.Entries = []kmsg.AlterClientQuotasRequestEntry{rm}
	s.AlterClientQuotas(req)
	if got := describe(false); got != 2 {
		t.Errorf("after removing alice's only key: %d entries, want 2", got)
	}
}
