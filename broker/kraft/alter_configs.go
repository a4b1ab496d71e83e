package kraft

// This file serves AlterConfigsRequest (api key 33, v0-v2) and
// IncrementalAlterConfigsRequest (api key 44, v0-v1) for topics, as Kafka
// 4.0's ConfigurationControlManager.legacyAlterConfigs and
// incrementalAlterConfigs: a topic not in the image is
// UNKNOWN_TOPIC_OR_PARTITION; AlterConfigs replaces the topic's configs
// (a ConfigRecord with a null value deletes each one not named, one with
// the value sets each named one that changes); IncrementalAlterConfigs
// applies SET, DELETE, APPEND and SUBTRACT one by one, APPEND and
// SUBTRACT to the list in force (the topic's value, else
// Config.TopicConfigDefault's). The records of all resources go in one
// batch; the reply waits for it to commit; validate_only writes nothing.
// The brokers apply the new values as the records reach them
// (server/kraft_metadata.go).
//
// Simplified: the names, values and operations were checked by the broker
// that forwarded the request (server/alter_configs.go), as
// create_topics.go's configs are; a request on the controller listener is
// not checked again. Broker (type 4) and broker-logger (type 8)
// resources are INVALID_REQUEST: kafkasim does not model dynamic broker
// configs. Group resources (type 32: KIP-848 and KIP-932's group configs,
// share.auto.offset.reset, ...) are taken by IncrementalAlterConfigs for
// any group name, existing or not, as Kafka takes them. No alter-config
// policy, quotas or authorization.

import (
	"slices"
	"strings"

	"github.com/kafkasim/kafkasim/broker/metadata"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// BrokerConfigsNotModelled is the message of the INVALID_REQUEST answer
// to a change of broker or broker-logger configs.
const BrokerConfigsNotModelled = "kafkasim does not model dynamic broker configs: only topic configs (resource type 2) can be altered"

// configResult is one resource's outcome.
type configResult struct {
	err  *kerr.Error
	msg  string
	recs []metadata.Record
}

// topicConfigs returns topic's configs in the working image.
func (c *Controller) topicConfigs(topic string) map[string]string {
	return c.resourceConfigs(metadata.ResourceTopic, topic)
}

// resourceConfigs returns a resource's configs in the working image.
func (c *Controller) resourceConfigs(typ int8, name string) map[string]string {
	out := map[string]string{}
	for _, n := range c.working.img.ConfigNames(typ, name) {
		out[n], _ = c.working.img.Config(typ, name, n)
	}
	return out
}

// resourceType is the metadata resource type of a config resource.
func resourceType(typ kmsg.ConfigResourceType) int8 {
	if typ == kmsg.ConfigResourceTypeGroupConfig {
		return metadata.ResourceGroup
	}
	return metadata.ResourceTopic
}

// checkConfigResource returns the error of a resource no change may touch.
func (c *Controller) checkConfigResource(typ kmsg.ConfigResourceType, name string) (*kerr.Error, string) {
	switch {
	case typ == kmsg.ConfigResourceTypeGroupConfig && name != "":
		return nil, "" // a group's configs may precede the group (KIP-848)
	case typ != kmsg.ConfigResourceTypeTopic:
		return kerr.InvalidRequest, BrokerConfigsNotModelled
	case !validTopicName(name):
		return kerr.InvalidTopicException, "Topic name " + name + " is illegal"
	}
	if _, ok := c.working.img.TopicID(name); !ok {
		return kerr.UnknownTopicOrPartition, "The topic '" + name + "' does not exist."
	}
	return nil, ""
}

// configRecords returns the records that take topic from old to new, in
// name order.
func configRecords(topic string, old, new map[string]string) []metadata.Record {
	return resourceConfigRecords(metadata.ResourceTopic, topic, old, new)
}

// resourceConfigRecords is configRecords for a resource of type typ.
func resourceConfigRecords(typ int8, topic string, old, new map[string]string) []metadata.Record {
	var names []string
	for n := range old {
		names = append(names, n)
	}
	for n := range new {
		if _, ok := old[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []metadata.Record
	for _, n := range names {
		nv, set := new[n]
		ov, had := old[n]
		switch {
		case set && (!had || ov != nv):
			v := nv
			out = append(out, &metadata.ConfigRecord{ResourceType: typ, ResourceName: topic, Name: n, Value: &v})
		case !set && had:
			out = append(out, &metadata.ConfigRecord{ResourceType: typ, ResourceName: topic, Name: n})
		}
	}
	return out
}

func (c *Controller) alterConfigs(ctx *sim.Context, req *kmsg.AlterConfigsRequest, reply func(kmsg.Response)) {
	results := make([]configResult, len(req.Resources))
	for i, r := range req.Resources {
		if e, msg := c.checkConfigResource(r.ResourceType, r.ResourceName); e != nil {
			results[i] = configResult{err: e, msg: msg}
			continue
		}
		next := map[string]string{}
		for _, cf := range r.Configs {
			if cf.Value != nil {
				next[cf.Name] = *cf.Value
			}
		}
		results[i].recs = configRecords(r.ResourceName, c.topicConfigs(r.ResourceName), next)
	}
	c.writeConfigs(ctx, req, req.ValidateOnly, results, func() kmsg.Response {
		resp := req.ResponseKind().(*kmsg.AlterConfigsResponse)
		for i, r := range req.Resources {
			rr := kmsg.AlterConfigsResponseResource{ResourceType: r.ResourceType, ResourceName: r.ResourceName}
			if e := results[i].err; e != nil {
				m := results[i].msg
				rr.ErrorCode, rr.ErrorMessage = e.Code, &m
			}
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	}, reply)
}

func (c *Controller) incrementalAlterConfigs(ctx *sim.Context, req *kmsg.IncrementalAlterConfigsRequest, reply func(kmsg.Response)) {
	results := make([]configResult, len(req.Resources))
	for i, r := range req.Resources {
		if e, msg := c.checkConfigResource(r.ResourceType, r.ResourceName); e != nil {
			results[i] = configResult{err: e, msg: msg}
			continue
		}
		old := c.resourceConfigs(resourceType(r.ResourceType), r.ResourceName)
		next := map[string]string{}
		for k, v := range old {
			next[k] = v
		}
		for _, cf := range r.Configs {
			results[i].err, results[i].msg = c.applyConfigOp(next, cf)
			if results[i].err != nil {
				break
			}
		}
		if results[i].err == nil {
			results[i].recs = resourceConfigRecords(resourceType(r.ResourceType), r.ResourceName, old, next)
		}
	}
	c.writeConfigs(ctx, req, req.ValidateOnly, results, func() kmsg.Response {
		resp := req.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for i, r := range req.Resources {
			rr := kmsg.IncrementalAlterConfigsResponseResource{ResourceType: r.ResourceType, ResourceName: r.ResourceName}
			if e := results[i].err; e != nil {
				m := results[i].msg
				rr.ErrorCode, rr.ErrorMessage = e.Code, &m
			}
			resp.Resources = append(resp.Resources, rr)
		}
		return resp
	}, reply)
}

// ApplyConfigOp applies one IncrementalAlterConfigs operation to configs
// (a topic's own values by name); def gives a config's value in force
// when the topic has none (APPEND and SUBTRACT start from it). It returns
// INVALID_REQUEST for a SET without a value or an unknown operation,
// INVALID_CONFIG for APPEND or SUBTRACT on a config that is not a list
// (isList).
func ApplyConfigOp(configs map[string]string, cf kmsg.IncrementalAlterConfigsRequestResourceConfig, def func(string) string, isList func(string) bool) (*kerr.Error, string) {
	switch cf.Op {
	case kmsg.IncrementalAlterConfigOpSet:
		if cf.Value == nil {
			return kerr.InvalidRequest, "Null value not supported for : " + cf.Name
		}
		configs[cf.Name] = *cf.Value
	case kmsg.IncrementalAlterConfigOpDelete:
		delete(configs, cf.Name)
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		if !isList(cf.Name) {
			return kerr.InvalidConfig, "Config value append is not allowed for config key: " + cf.Name
		}
		cur, ok := configs[cf.Name]
		if !ok && def != nil {
			cur = def(cf.Name)
		}
		var parts []string
		for _, p := range strings.Split(cur, ",") {
			if p = strings.TrimSpace(p); p != "" {
				parts = append(parts, p)
			}
		}
		var vals []string
		if cf.Value != nil {
			for _, p := range strings.Split(*cf.Value, ",") {
				if p = strings.TrimSpace(p); p != "" {
					vals = append(vals, p)
				}
			}
		}
		for _, v := range vals {
			if cf.Op == kmsg.IncrementalAlterConfigOpAppend && !slices.Contains(parts, v) {
				parts = append(parts, v)
			}
			if cf.Op == kmsg.IncrementalAlterConfigOpSubtract {
				parts = slices.DeleteFunc(parts, func(p string) bool { return p == v })
			}
		}
		configs[cf.Name] = strings.Join(parts, ",")
	default:
		return kerr.InvalidRequest, "Unknown alter configs operation " + cf.Op.String()
	}
	return nil, ""
}

func (c *Controller) applyConfigOp(configs map[string]string, cf kmsg.IncrementalAlterConfigsRequestResourceConfig) (*kerr.Error, string) {
	return ApplyConfigOp(configs, cf, c.cfg.TopicConfigDefault, func(n string) bool { return n == "cleanup.policy" })
}

// writeConfigs writes the records of the resources that passed (none with
// validateOnly) and replies with answer() once they commit.
func (c *Controller) writeConfigs(ctx *sim.Context, req kmsg.Request, validateOnly bool, results []configResult, answer func() kmsg.Response, reply func(kmsg.Response)) {
	var recs []metadata.Record
	for _, r := range results {
		if r.err == nil && !validateOnly {
			recs = append(recs, r.recs...)
		}
	}
	c.write(ctx, recs, func() {
		for _, r := range recs {
			x := r.(*metadata.ConfigRecord)
			v := "null"
			if x.Value != nil {
				v = *x.Value
			}
			ctx.Log("topic-config-record", sim.S("topic", x.ResourceName), sim.S("name", x.Name), sim.S("value", v))
		}
		reply(answer())
	}, func(e *kerr.Error) { reply(ErrorResponse(req, e)) })
}
