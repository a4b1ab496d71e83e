package security

// This file serves CreateAcls (api key 30), DescribeAcls (29) and
// DeleteAcls (31), v0-v3 (v1+ from 4.0, KIP-896), as Kafka's AclAuthorizer
// (ZooKeeper) and StandardAuthorizer with AclControlManager (KRaft) do: a
// binding is a resource pattern (type, name, LITERAL or PREFIXED; v0 is
// LITERAL) and an entry (principal, host, operation, permission). A
// creation with an unknown or ANY element, a principal that is not
// "Type:name", an empty resource name or a CLUSTER resource not named
// kafka-cluster is INVALID_REQUEST; creating a binding that exists is no
// error and changes nothing. Filters match as ResourcePatternFilter and
// AccessControlEntryFilter do (ANY and null match everything; MATCH finds
// the literal name, the literal wildcard "*" and every prefix of the
// name); a filter with an UNKNOWN element is INVALID_REQUEST.
// DescribeAcls groups the bindings by resource pattern, sorted.
//
// Simplified: ACLs are not enforced (doc.go).

import (
	"cmp"
	"slices"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Binding is one ACL: Kafka's AclBinding.
type Binding struct {
	ResourceType kmsg.ACLResourceType
	ResourceName string
	PatternType  kmsg.ACLResourcePatternType
	Principal    string
	Host         string
	Operation    kmsg.ACLOperation
	Permission   kmsg.ACLPermissionType
}

// filter is Kafka's AclBindingFilter; nil strings match anything.
type filter struct {
	resourceType kmsg.ACLResourceType
	name         *string
	patternType  kmsg.ACLResourcePatternType
	principal    *string
	host         *string
	operation    kmsg.ACLOperation
	permission   kmsg.ACLPermissionType
}

// clusterResourceName is the only name a CLUSTER resource may have.
const clusterResourceName = "kafka-cluster"

// check returns why a creation is invalid, "" when every element is
// concrete (KafkaApis answers INVALID_REQUEST).
func (b Binding) check() string {
	switch {
	case b.ResourceType < kmsg.ACLResourceTypeTopic || b.ResourceType > kmsg.ACLResourceTypeUser:
		return "invalid resource type " + b.ResourceType.String()
	case b.PatternType != kmsg.ACLResourcePatternTypeLiteral && b.PatternType != kmsg.ACLResourcePatternTypePrefixed:
		return "invalid pattern type " + b.PatternType.String()
	case b.Operation < kmsg.ACLOperationAll || b.Operation > kmsg.ACLOperationDescribeTokens:
		return "invalid operation " + b.Operation.String()
	case b.Permission != kmsg.ACLPermissionTypeAllow && b.Permission != kmsg.ACLPermissionTypeDeny:
		return "invalid permission type " + b.Permission.String()
	case b.ResourceName == "":
		return "resource name must not be empty"
	case b.ResourceType == kmsg.ACLResourceTypeCluster && b.ResourceName != clusterResourceName:
		return "the only valid name for the CLUSTER resource is " + clusterResourceName
	}
	if typ, name, ok := strings.Cut(b.Principal, ":"); !ok || typ == "" || name == "" {
		return "could not parse principal " + b.Principal + ": want Type:name"
	}
	return ""
}

// check returns why a filter is invalid, "" when it is valid.
func (f filter) check() string {
	switch {
	case f.resourceType == kmsg.ACLResourceTypeUnknown || f.patternType == kmsg.ACLResourcePatternTypeUnknown ||
		f.operation == kmsg.ACLOperationUnknown || f.permission == kmsg.ACLPermissionTypeUnknown:
		return "the filter contains UNKNOWN elements"
	}
	return ""
}

// matches is ResourcePatternFilter.matches and AccessControlEntryFilter.matches.
func (f filter) matches(b Binding) bool {
	if f.resourceType != kmsg.ACLResourceTypeAny && f.resourceType != b.ResourceType {
		return false
	}
	if f.patternType != kmsg.ACLResourcePatternTypeAny && f.patternType != kmsg.ACLResourcePatternTypeMatch && f.patternType != b.PatternType {
		return false
	}
	if f.name != nil {
		switch {
		case f.patternType == kmsg.ACLResourcePatternTypeAny || f.patternType == b.PatternType:
			if *f.name != b.ResourceName {
				return false
			}
		case b.PatternType == kmsg.ACLResourcePatternTypeLiteral: // MATCH
			if *f.name != b.ResourceName && b.ResourceName != "*" {
				return false
			}
		default: // MATCH, a prefixed binding
			if !strings.HasPrefix(*f.name, b.ResourceName) {
				return false
			}
		}
	}
	return (f.principal == nil || *f.principal == b.Principal) &&
		(f.host == nil || *f.host == b.Host) &&
		(f.operation == kmsg.ACLOperationAny || f.operation == b.Operation) &&
		(f.permission == kmsg.ACLPermissionTypeAny || f.permission == b.Permission)
}

// compareBindings orders bindings by resource pattern, then entry.
func compareBindings(a, b Binding) int {
	return cmp.Or(cmp.Compare(a.ResourceType, b.ResourceType), cmp.Compare(a.ResourceName, b.ResourceName),
		cmp.Compare(a.PatternType, b.PatternType), cmp.Compare(a.Principal, b.Principal), cmp.Compare(a.Host, b.Host),
		cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Permission, b.Permission))
}

// ACLs returns every binding, sorted.
func (s *Store) ACLs() []Binding { return slices.Clone(s.acls) }

// CreateAcls serves CreateAcls.
func (s *Store) CreateAcls(req *kmsg.CreateACLsRequest) *kmsg.CreateACLsResponse {
	resp := kmsg.NewPtrCreateACLsResponse()
	resp.Version = req.Version
	for _, c := range req.Creations {
		b := Binding{c.ResourceType, c.ResourceName, c.ResourcePatternType, c.Principal, c.Host, c.Operation, c.PermissionType}
		if req.Version == 0 {
			b.PatternType = kmsg.ACLResourcePatternTypeLiteral
		}
		r := kmsg.NewCreateACLsResponseResult()
		if msg := b.check(); msg != "" {
			r.ErrorCode, r.ErrorMessage = kerr.InvalidRequest.Code, &msg
		} else if i, found := slices.BinarySearchFunc(s.acls, b, compareBindings); !found {
			s.acls = slices.Insert(s.acls, i, b)
		}
		resp.Results = append(resp.Results, r)
	}
	return resp
}

func describeFilter(req *kmsg.DescribeACLsRequest) filter {
	f := filter{req.ResourceType, req.ResourceName, req.ResourcePatternType, req.Principal, req.Host, req.Operation, req.PermissionType}
	if req.Version == 0 {
		f.patternType = kmsg.ACLResourcePatternTypeLiteral
	}
	return f
}

// DescribeAcls serves DescribeAcls.
func (s *Store) DescribeAcls(req *kmsg.DescribeACLsRequest) *kmsg.DescribeACLsResponse {
	resp := kmsg.NewPtrDescribeACLsResponse()
	resp.Version = req.Version
	f := describeFilter(req)
	if msg := f.check(); msg != "" {
		resp.ErrorCode, resp.ErrorMessage = kerr.InvalidRequest.Code, &msg
		return resp
	}
	for _, b := range s.acls { // sorted: one resource's bindings are adjacent
		if !f.matches(b) {
			continue
		}
		n := len(resp.Resources)
		if n == 0 || resp.Resources[n-1].ResourceType != b.ResourceType || resp.Resources[n-1].ResourceName != b.ResourceName ||
			resp.Resources[n-1].ResourcePatternType != b.PatternType {
			r := kmsg.NewDescribeACLsResponseResource()
			r.ResourceType, r.ResourceName, r.ResourcePatternType = b.ResourceType, b.ResourceName, b.PatternType
			resp.Resources = append(resp.Resources, r)
			n++
		}
		a := kmsg.NewDescribeACLsResponseResourceACL()
		a.Principal, a.Host, a.Operation, a.PermissionType = b.Principal, b.Host, b.Operation, b.Permission
		resp.Resources[n-1].ACLs = append(resp.Resources[n-1].ACLs, a)
	}
	return resp
}

// DeleteAcls serves DeleteAcls: each filter deletes what it matches, in
// the request's order.
func (s *Store) DeleteAcls(req *kmsg.DeleteACLsRequest) *kmsg.DeleteACLsResponse {
	resp := kmsg.NewPtrDeleteACLsResponse()
	resp.Version = req.Version
	for _, df := range req.Filters {
		f := filter{df.ResourceType, df.ResourceName, df.ResourcePatternType, df.Principal, df.Host, df.Operation, df.PermissionType}
		if req.Version == 0 {
			f.patternType = kmsg.ACLResourcePatternTypeLiteral
		}
		r := kmsg.NewDeleteACLsResponseResult()
		if msg := f.check(); msg != "" {
			r.ErrorCode, r.ErrorMessage = kerr.InvalidRequest.Code, &msg
			resp.Results = append(resp.Results, r)
			continue
		}
		s.acls = slices.DeleteFunc(s.acls, func(b Binding) bool {
			if !f.matches(b) {
				return false
			}
			m := kmsg.NewDeleteACLsResponseResultMatchingACL()
			m.ResourceType, m.ResourceName, m.ResourcePatternType = b.ResourceType, b.ResourceName, b.PatternType
			m.Principal, m.Host, m.Operation, m.PermissionType = b.Principal, b.Host, b.Operation, b.Permission
			r.MatchingACLs = append(r.MatchingACLs, m)
			return true
		})
		resp.Results = append(resp.Results, r)
	}
	return resp
}
