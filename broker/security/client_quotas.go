package security

// This file serves AlterClientQuotas (api key 49) and DescribeClientQuotas
// (48), v0-v1 (KIP-546, 2.6), as ZkAdminManager and, in KRaft mode,
// ClientQuotaControlManager do. An entity is a set of (type, name) with
// types user, client-id and ip, each at most once, ip alone; a null name
// is the type's default entity. The keys are producer_byte_rate,
// consumer_byte_rate, request_percentage and controller_mutation_rate for
// user and client-id entities, connection_creation_rate for ip ones; the
// byte rates and connection_creation_rate must be whole numbers. Anything
// else is INVALID_REQUEST for its entry; validate_only changes nothing.
// Removing a key the entity does not have is no error. Describe filters
// by components, each an entity type matched exactly (a name), as the
// default (null) or as any name but the default (MATCH_TYPE_SPECIFIED); strict keeps only entities with no other
// types. An unknown entity type or a component named twice is
// INVALID_REQUEST. Entries come sorted by entity, values by key.
//
// Simplified: quotas are stored and described; nothing is throttled.

import (
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// QuotaEntity is one component of a quota entity; a nil Name is the
// default entity of Type.
type QuotaEntity struct {
	Type string
	Name *string
}

type quotaEntry struct {
	entity []QuotaEntity // sorted by type
	values map[string]float64
}

// Kafka's entity types (ClientQuotaEntity).
const (
	entityUser     = "user"
	entityClientID = "client-id"
	entityIP       = "ip"
)

// quotaKeys are the keys of user and client-id entities, and whether a
// value must be a whole number (QuotaConfigs).
var quotaKeys = map[string]bool{
	"producer_byte_rate": true, "consumer_byte_rate": true,
	"request_percentage": false, "controller_mutation_rate": false,
}

// ipQuotaKey is the key of an ip entity.
const ipQuotaKey = "connection_creation_rate"

// entityKey renders an entity as one map key: type=name pairs, sorted.
func entityKey(e []QuotaEntity) string {
	var b strings.Builder
	for _, c := range e {
		b.WriteString(c.Type)
		if c.Name == nil {
			b.WriteString("\x00<default>")
		} else {
			b.WriteString("=" + *c.Name)
		}
		b.WriteByte(0)
	}
	return b.String()
}

// checkEntity returns the entity sorted by type, or why it is invalid.
func checkEntity(in []QuotaEntity) ([]QuotaEntity, string) {
	if len(in) == 0 {
		return nil, "Invalid empty client quota entity"
	}
	e := slices.Clone(in)
	slices.SortFunc(e, func(a, b QuotaEntity) int { return strings.Compare(a.Type, b.Type) })
	for i, c := range e {
		switch {
		case c.Type != entityUser && c.Type != entityClientID && c.Type != entityIP:
			return nil, "Unhandled client quota entity type: " + c.Type
		case i > 0 && e[i-1].Type == c.Type:
			return nil, "Duplicate " + c.Type + " entity type in request"
		case c.Type == entityIP && len(e) > 1:
			return nil, "Invalid quota entity combination: ip with another entity type"
		}
	}
	return e, ""
}

// checkOp returns why a quota key and value are invalid for entity e.
func checkOp(e []QuotaEntity, op kmsg.AlterClientQuotasRequestEntryOp) string {
	whole, ok := quotaKeys[op.Key]
	if e[0].Type == entityIP {
		ok, whole = op.Key == ipQuotaKey, true
	}
	switch {
	case !ok:
		return "Invalid configuration key " + op.Key
	case !op.Remove && whole && op.Value != math.Trunc(op.Value):
		return "Configuration " + op.Key + " must be a whole number"
	}
	return ""
}

// AlterClientQuotas serves AlterClientQuotas.
func (s *Store) AlterClientQuotas(req *kmsg.AlterClientQuotasRequest) *kmsg.AlterClientQuotasResponse {
	resp := kmsg.NewPtrAlterClientQuotasResponse()
	resp.Version = req.Version
	for _, entry := range req.Entries {
		r := kmsg.NewAlterClientQuotasResponseEntry()
		in := make([]QuotaEntity, 0, len(entry.Entity))
		for _, c := range entry.Entity {
			in = append(in, QuotaEntity{c.Type, c.Name})
			re := kmsg.NewAlterClientQuotasResponseEntryEntity()
			re.Type, re.Name = c.Type, c.Name
			r.Entity = append(r.Entity, re)
		}
		e, msg := checkEntity(in)
		for _, op := range entry.Ops {
			if msg == "" {
				msg = checkOp(e, op)
			}
		}
		if msg != "" {
			r.ErrorCode, r.ErrorMessage = kerr.InvalidRequest.Code, &msg
			resp.Entries = append(resp.Entries, r)
			continue
		}
		if !req.ValidateOnly {
			key := entityKey(e)
			q, ok := s.quotas[key]
			if !ok {
				q = quotaEntry{entity: e, values: map[string]float64{}}
			}
			for _, op := range entry.Ops {
				if op.Remove {
					delete(q.values, op.Key)
				} else {
					q.values[op.Key] = op.Value
				}
			}
			if len(q.values) == 0 {
				delete(s.quotas, key)
			} else {
				s.quotas[key] = q
			}
		}
		resp.Entries = append(resp.Entries, r)
	}
	return resp
}

// DescribeClientQuotas serves DescribeClientQuotas.
func (s *Store) DescribeClientQuotas(req *kmsg.DescribeClientQuotasRequest) *kmsg.DescribeClientQuotasResponse {
	resp := kmsg.NewPtrDescribeClientQuotasResponse()
	resp.Version = req.Version
	types := map[string]bool{}
	for _, c := range req.Components {
		msg := ""
		switch {
		case c.EntityType != entityUser && c.EntityType != entityClientID && c.EntityType != entityIP:
			msg = "Custom entity type " + c.EntityType + " not supported"
		case types[c.EntityType]:
			msg = "Duplicate " + c.EntityType + " entity type in filter"
		case c.MatchType == kmsg.QuotasMatchTypeExact && c.Match == nil:
			msg = "Exact match of " + c.EntityType + " needs a name"
		case c.MatchType > kmsg.QuotasMatchTypeAny:
			msg = "Unknown match type " + c.MatchType.String()
		}
		if msg != "" {
			resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, &msg
			return resp
		}
		types[c.EntityType] = true
	}
	for _, key := range slices.Sorted(maps.Keys(s.quotas)) {
		q := s.quotas[key]
		if !quotaMatches(q.entity, req.Components, req.Strict) {
			continue
		}
		r := kmsg.NewDescribeClientQuotasResponseEntry()
		for _, c := range q.entity {
			re := kmsg.NewDescribeClientQuotasResponseEntryEntity()
			re.Type, re.Name = c.Type, c.Name
			r.Entity = append(r.Entity, re)
		}
		for _, k := range slices.Sorted(maps.Keys(q.values)) {
			v := kmsg.NewDescribeClientQuotasResponseEntryValue()
			v.Key, v.Value = k, q.values[k]
			r.Values = append(r.Values, v)
		}
		resp.Entries = append(resp.Entries, r)
	}
	return resp
}

// quotaMatches is ClientQuotaControlManager's filter: every component
// matches its type's part of the entity; strict wants no other types.
func quotaMatches(e []QuotaEntity, comps []kmsg.DescribeClientQuotasRequestComponent, strict bool) bool {
	if strict && len(e) != len(comps) {
		return false
	}
	for _, c := range comps {
		i := slices.IndexFunc(e, func(x QuotaEntity) bool { return x.Type == c.EntityType })
		if i < 0 {
			return false
		}
		name := e[i].Name
		switch c.MatchType {
		case kmsg.QuotasMatchTypeExact:
			if name == nil || *name != *c.Match {
				return false
			}
		case kmsg.QuotasMatchTypeDefault:
			if name != nil {
				return false
			}
		case kmsg.QuotasMatchTypeAny: // MATCH_TYPE_SPECIFIED: a name, not the default
			if name == nil {
				return false
			}
		}
	}
	return true
}
