package security

// This file serves AlterUserScramCredentials (api key 51) and
// DescribeUserScramCredentials (50), v0 (KIP-554, 2.7), as ZkAdminManager
// and, in KRaft mode, ScramControlManager do. A user named empty is
// UNACCEPTABLE_CREDENTIAL; a mechanism other than SCRAM-SHA-256 (1) and
// SCRAM-SHA-512 (2) UNSUPPORTED_SASL_MECHANISM; a user and mechanism
// altered twice in one request DUPLICATE_RESOURCE; fewer than 4096 or more
// than 16384 iterations UNACCEPTABLE_CREDENTIAL; deleting a credential
// that does not exist RESOURCE_NOT_FOUND. A user's changes apply only if
// all of that user's pass (one result per user, in the request's order).
// Describe without users lists every user with a credential, sorted; a user
// named twice is DUPLICATE_RESOURCE, one without credentials
// RESOURCE_NOT_FOUND.
//
// Simplified: the salted password is stored as sent (Kafka stores the
// stored and server keys derived from it); nothing authenticates with it.

import (
	"maps"
	"slices"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Credential is one user's SCRAM credential for one mechanism.
type Credential struct {
	Iterations     int32
	Salt           []byte
	SaltedPassword []byte
}

// ScramMechanism values (org.apache.kafka.clients.admin.ScramMechanism)
// and their iteration bounds.
const (
	scramSHA256        int8 = 1
	scramSHA512        int8 = 2
	scramMinIterations      = 4096
	scramMaxIterations      = 16384
)

// scramChange is one deletion or upsertion.
type scramChange struct {
	user      string
	mechanism int8
	upsert    *Credential
}

// AlterUserScramCredentials serves AlterUserScramCredentials.
func (s *Store) AlterUserScramCredentials(req *kmsg.AlterUserSCRAMCredentialsRequest) *kmsg.AlterUserSCRAMCredentialsResponse {
	var changes []scramChange
	for _, d := range req.Deletions {
		changes = append(changes, scramChange{user: d.Name, mechanism: d.Mechanism})
	}
	for _, u := range req.Upsertions {
		changes = append(changes, scramChange{u.Name, u.Mechanism, &Credential{u.Iterations, slices.Clone(u.Salt), slices.Clone(u.SaltedPassword)}})
	}
	var users []string
	errs := map[string]*kerr.Error{}
	msgs := map[string]string{}
	fail := func(user string, e *kerr.Error, msg string) {
		if errs[user] == nil {
			errs[user], msgs[user] = e, msg
		}
	}
	type userMechanism struct {
		user      string
		mechanism int8
	}
	seen := map[userMechanism]bool{}
	for _, c := range changes {
		if !slices.Contains(users, c.user) {
			users = append(users, c.user)
		}
		key := userMechanism{c.user, c.mechanism}
		switch {
		case c.user == "":
			fail(c.user, kerr.UnacceptableCredential, "Username must not be empty")
		case c.mechanism != scramSHA256 && c.mechanism != scramSHA512:
			fail(c.user, kerr.UnsupportedSaslMechanism, "Unknown SCRAM mechanism")
		case seen[key]:
			fail(c.user, kerr.DuplicateResource, "A user credential cannot be altered twice in the same request")
		case c.upsert != nil && c.upsert.Iterations < scramMinIterations:
			fail(c.user, kerr.UnacceptableCredential, "Too few iterations")
		case c.upsert != nil && c.upsert.Iterations > scramMaxIterations:
			fail(c.user, kerr.UnacceptableCredential, "Too many iterations")
		case c.upsert == nil && !hasCredential(s.scram[c.user], c.mechanism):
			fail(c.user, kerr.ResourceNotFound, "Attempt to delete a user credential that does not exist")
		}
		seen[key] = true
	}
	resp := kmsg.NewPtrAlterUserSCRAMCredentialsResponse()
	resp.Version = req.Version
	for _, user := range users {
		r := kmsg.NewAlterUserSCRAMCredentialsResponseResult()
		r.User = user
		if e := errs[user]; e != nil {
			msg := msgs[user]
			r.ErrorCode, r.ErrorMessage = e.Code, &msg
			resp.Results = append(resp.Results, r)
			continue
		}
		for _, c := range changes {
			if c.user != user {
				continue
			}
			if c.upsert == nil {
				delete(s.scram[user], c.mechanism)
				if len(s.scram[user]) == 0 {
					delete(s.scram, user)
				}
				continue
			}
			if s.scram[user] == nil {
				s.scram[user] = map[int8]Credential{}
			}
			s.scram[user][c.mechanism] = *c.upsert
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}

func hasCredential(m map[int8]Credential, mechanism int8) bool {
	_, ok := m[mechanism]
	return ok
}

// DescribeUserScramCredentials serves DescribeUserScramCredentials.
func (s *Store) DescribeUserScramCredentials(req *kmsg.DescribeUserSCRAMCredentialsRequest) *kmsg.DescribeUserSCRAMCredentialsResponse {
	resp := kmsg.NewPtrDescribeUserSCRAMCredentialsResponse()
	resp.Version = req.Version
	var users []string
	if len(req.Users) == 0 {
		users = slices.Sorted(maps.Keys(s.scram))
	}
	count := map[string]int{}
	for _, u := range req.Users {
		count[u.Name]++
		if count[u.Name] == 1 {
			users = append(users, u.Name)
		}
	}
	for _, user := range users {
		r := kmsg.NewDescribeUserSCRAMCredentialsResponseResult()
		r.User = user
		creds, ok := s.scram[user]
		switch {
		case count[user] > 1:
			msg := "Cannot describe SCRAM credentials for the same user twice in a single request: " + user
			r.ErrorCode, r.ErrorMessage = kerr.DuplicateResource.Code, &msg
		case !ok:
			msg := "Attempt to describe a user credential that does not exist: " + user
			r.ErrorCode, r.ErrorMessage = kerr.ResourceNotFound.Code, &msg
		default:
			for _, m := range slices.Sorted(maps.Keys(creds)) {
				ci := kmsg.NewDescribeUserSCRAMCredentialsResponseResultCredentialInfo()
				ci.Mechanism, ci.Iterations = m, creds[m].Iterations
				r.CredentialInfos = append(r.CredentialInfos, ci)
			}
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}
