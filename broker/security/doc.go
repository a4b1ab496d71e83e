// Package security holds a cluster's access control lists, SCRAM
// credentials and client quotas, and answers the APIs that read and
// write them: CreateAcls, DescribeAcls, DeleteAcls (acls.go),
// AlterUserScramCredentials, DescribeUserScramCredentials (scram.go),
// AlterClientQuotas, DescribeClientQuotas (client_quotas.go).
//
// In Kafka these are cluster metadata: ZooKeeper's /kafka-acl,
// /kafka-acl-extended, /config/users, /config/clients and /config/ips
// znodes, or, in KRaft mode, the AccessControlEntryRecord,
// UserScramCredentialRecord and ClientQuotaRecord records of the metadata
// log. A Store stands for that metadata: one Store per cluster, shared by
// every broker (server.Config.Security), so that what one broker writes
// every broker reads at once and a crash loses nothing, as with ZooKeeper
// or the quorum.
//
// Simplified: no ZooKeeper write or metadata record is made (no change
// notification, no lag between brokers, nothing on the simulated disks,
// nothing a ZooKeeper or quorum fault can delay or lose); the ACLs are
// stored and described, never enforced (a broker with
// authorizer.class.name set and allow.everyone.if.no.acl.found=true, as
// kafka-go's CI broker is); SCRAM credentials are stored (iterations,
// salt, salted password) but no SASL listener uses them; quotas are
// stored, and throttle nothing.
//
// A Store is pure: no clock, no goroutine, and its answers are ordered
// (sorted by resource, user or entity), never by map iteration.
//
//	s := security.NewStore()
//	resp := s.CreateAcls(req) // *kmsg.CreateACLsRequest -> *kmsg.CreateACLsResponse
package security

// Store is a cluster's ACLs, SCRAM credentials and client quotas. The zero
// value is not usable: NewStore.
type Store struct {
	acls   []Binding
	scram  map[string]map[int8]Credential // user -> mechanism
	quotas map[string]quotaEntry          // entityKey -> entry
}

// NewStore returns an empty Store.
func NewStore() *Store {
	return &Store{scram: map[string]map[int8]Credential{}, quotas: map[string]quotaEntry{}}
}
