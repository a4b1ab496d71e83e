package server

// This file serves AlterConfigs (api key 33), v0-v2, and
// IncrementalAlterConfigs (api key 44), v0-v1, for topic configs, and
// IncrementalAlterConfigs for group configs (resource type 32, KRaft
// mode: share groups' share.* configs, KIP-932, checked as Kafka's
// GroupConfig checks them; consumer.session.timeout.ms and
// consumer.heartbeat.interval.ms are stored, not applied).
//
// Every broker checks a request as Kafka's ConfigAdminManager.preprocess
// and LogConfig.validate do: a resource named twice, or a config named
// twice in one resource, is INVALID_REQUEST; an invalid topic name
// INVALID_TOPIC_EXCEPTION; a config name the release does not have, or a
// value its type refuses, INVALID_CONFIG (the names and values
// CreateTopics accepts: create_topics.go); a null value in AlterConfigs or
// in a SET INVALID_REQUEST; APPEND or SUBTRACT on a config that is not a
// list (only cleanup.policy is) INVALID_CONFIG. Broker (type 4) and
// broker-logger (type 8) resources are INVALID_REQUEST with a message
// saying so: kafkasim does not model dynamic broker configs (its brokers'
// properties are fixed for the run). AlterConfigs replaces a topic's own
// configs with those named (the others go back to the broker's);
// IncrementalAlterConfigs changes only those named. validate_only changes
// nothing.
//
// ZooKeeper mode, as ZkAdminManager.alterConfigs /
// incrementalAlterConfigs: any broker serves it; a topic not in its
// metadata cache is UNKNOWN_TOPIC_OR_PARTITION; the topic's own configs
// are read from /config/topics/<t> (a topic that has none there has the
// ones it was created with, as the broker holds them), the new ones written
// there, and a /config/changes notification left (AdminZkClient.changeTopicConfig).
// Simplified: the brokers' config-change listeners are not modelled as
// watches (every broker would set one at every session, in every run);
// the change reaches every running node at once through
// Config.TopicConfigChanged, the path of the alter-config script step
// (broker/cluster/topic_config.go: topic_config.go says what each node
// does with it), and every node started later reads it before it serves.
// Without that hook (a broker built alone) only this broker applies it.
//
// KRaft mode: the resources that passed the checks are forwarded to the
// active controller (broker/kraft/alter_configs.go), whose ConfigRecords
// reach every broker through the metadata log (kraft_metadata.go).

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
	"github.com/kafkasim/kafkasim/broker/kraft"
	"github.com/kafkasim/kafkasim/broker/storage"
	"github.com/kafkasim/kafkasim/broker/wire"
	"github.com/kafkasim/kafkasim/broker/zk"
	"github.com/kafkasim/kafkasim/sim"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// configAnswer is one resource's outcome.
type configAnswer struct {
	err *kerr.Error
	msg string
}

// topicConfigChange is one topic resource that passed the checks: next
// returns the topic's new own configs from its current ones.
type topicConfigChange struct {
	idx   int
	topic string
	next  func(cur map[string]string) (map[string]string, *kerr.Error, string)
}

// checkTopicConfig returns the error of one topic config, nil when the
// release has it and value is valid for it.
func checkTopicConfig(name string, value *string, release config.Version) (*kerr.Error, string) {
	if value == nil {
		return kerr.InvalidRequest, "null value not supported for topic config " + name
	}
	e, ok := topicConfigByName(name)
	if !ok {
		// A topic config of the release that kafkasim does not model is
		// accepted when its value is valid (and changes nothing).
		if err := config.CheckTopicConfig(release, name, *value); err != nil {
			return kerr.InvalidConfig, err.Error()
		}
		return nil, ""
	}
	if !validConfigValue(e, *value) {
		return kerr.InvalidConfig, "invalid value " + *value + " for configuration " + name
	}
	return nil, ""
}

// checkConfigResource returns the error of a resource no change may touch.
func checkConfigResource(typ kmsg.ConfigResourceType, name string, dup bool) (*kerr.Error, string) {
	switch {
	case dup:
		return kerr.InvalidRequest, "resource " + name + " is named more than once in the request"
	case typ == kmsg.ConfigResourceTypeGroupConfig && name == "":
		return kerr.InvalidRequest, "group name must not be empty"
	case typ == kmsg.ConfigResourceTypeGroupConfig:
		return nil, ""
	case typ == kmsg.ConfigResourceTypeBroker || typ == kmsg.ConfigResourceTypeBrokerLogger:
		return kerr.InvalidRequest, kraft.BrokerConfigsNotModelled
	case typ != kmsg.ConfigResourceTypeTopic:
		return kerr.InvalidRequest, "unsupported resource type " + strconv.Itoa(int(typ))
	case !kraft.ValidTopicName(name):
		return kerr.InvalidTopicException, "topic name " + strconv.Quote(name) + " is illegal"
	}
	return nil, ""
}

func (b *Broker) handleAlterConfigs(from sim.NodeID, req *wire.Request, body *kmsg.AlterConfigsRequest) {
	answers := make([]configAnswer, len(body.Resources))
	var changes []topicConfigChange
	seen := map[[2]string]int{}
	for _, r := range body.Resources {
		seen[[2]string{strconv.Itoa(int(r.ResourceType)), r.ResourceName}]++
	}
	for i, r := range body.Resources {
		a := &answers[i]
		if a.err, a.msg = checkConfigResource(r.ResourceType, r.ResourceName, seen[[2]string{strconv.Itoa(int(r.ResourceType)), r.ResourceName}] > 1); a.err != nil {
			continue
		}
		if r.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
			a.err, a.msg = kerr.InvalidRequest, "group configs are altered with IncrementalAlterConfigs only"
			continue
		}
		names := map[string]bool{}
		for _, c := range r.Configs {
			if names[c.Name] {
				a.err, a.msg = kerr.InvalidRequest, "error due to duplicate config keys: "+c.Name
				break
			}
			names[c.Name] = true
			if a.err, a.msg = checkTopicConfig(c.Name, c.Value, b.cfg.release()); a.err != nil {
				break
			}
		}
		if a.err != nil {
			continue
		}
		next := map[string]string{}
		for _, c := range r.Configs {
			next[c.Name] = *c.Value
		}
		changes = append(changes, topicConfigChange{idx: i, topic: r.ResourceName,
			next: func(map[string]string) (map[string]string, *kerr.Error, string) { return next, nil, "" }})
	}
	answer := func() {
		resp := body.ResponseKind().(*kmsg.AlterConfigsResponse)
		for i, r := range body.Resources {
			rr := kmsg.AlterConfigsResponseResource{ResourceType: r.ResourceType, ResourceName: r.ResourceName}
			if a := answers[i]; a.err != nil {
				m := a.msg
				rr.ErrorCode, rr.ErrorMessage = a.err.Code, &m
			}
			resp.Resources = append(resp.Resources, rr)
		}
		b.respond(from, req, resp)
	}
	if b.kraft != nil {
		fwd := kmsg.NewPtrAlterConfigsRequest()
		fwd.Version, fwd.ValidateOnly = body.Version, body.ValidateOnly
		for _, ch := range changes {
			fwd.Resources = append(fwd.Resources, body.Resources[ch.idx])
		}
		b.forwardConfigs(fwd, changes, answers, answer)
		return
	}
	b.alterTopicConfigsZK(changes, body.ValidateOnly, answers, answer)
}

func (b *Broker) handleIncrementalAlterConfigs(from sim.NodeID, req *wire.Request, body *kmsg.IncrementalAlterConfigsRequest) {
	answers := make([]configAnswer, len(body.Resources))
	var changes []topicConfigChange
	seen := map[[2]string]int{}
	for _, r := range body.Resources {
		seen[[2]string{strconv.Itoa(int(r.ResourceType)), r.ResourceName}]++
	}
	for i, r := range body.Resources {
		a := &answers[i]
		if a.err, a.msg = checkConfigResource(r.ResourceType, r.ResourceName, seen[[2]string{strconv.Itoa(int(r.ResourceType)), r.ResourceName}] > 1); a.err != nil {
			continue
		}
		names := map[string]bool{}
		for _, c := range r.Configs {
			if names[c.Name] {
				a.err, a.msg = kerr.InvalidRequest, "error due to duplicate config keys: "+c.Name
				break
			}
			names[c.Name] = true
			if r.ResourceType == kmsg.ConfigResourceTypeGroupConfig {
				a.err, a.msg = b.checkGroupConfig(c)
				if a.err != nil {
					break
				}
				continue
			}
			switch c.Op {
			case kmsg.IncrementalAlterConfigOpSet:
				a.err, a.msg = checkTopicConfig(c.Name, c.Value, b.cfg.release())
			case kmsg.IncrementalAlterConfigOpDelete:
				// Deleting a config the topic does not set changes nothing.
			case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
				switch {
				case c.Name != "cleanup.policy":
					a.err, a.msg = kerr.InvalidConfig, "config value append is not allowed for config key: "+c.Name
				case c.Value != nil:
					a.err, a.msg = checkTopicConfig(c.Name, c.Value, b.cfg.release())
				}
			default:
				a.err, a.msg = kerr.InvalidRequest, "unknown alter configs operation "+strconv.Itoa(int(c.Op))
			}
			if a.err != nil {
				break
			}
		}
		if a.err != nil {
			continue
		}
		ops := r.Configs
		changes = append(changes, topicConfigChange{idx: i, topic: r.ResourceName,
			next: func(cur map[string]string) (map[string]string, *kerr.Error, string) {
				next := maps.Clone(cur)
				for _, c := range ops {
					if e, msg := kraft.ApplyConfigOp(next, c, b.topicConfigDefault, func(n string) bool { return n == "cleanup.policy" }); e != nil {
						return nil, e, msg
					}
				}
				if v, ok := next["cleanup.policy"]; ok {
					if e, msg := checkTopicConfig("cleanup.policy", &v, b.cfg.release()); e != nil {
						return nil, e, msg
					}
				}
				return next, nil, ""
			}})
	}
	answer := func() {
		resp := body.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
		for i, r := range body.Resources {
			rr := kmsg.IncrementalAlterConfigsResponseResource{ResourceType: r.ResourceType, ResourceName: r.ResourceName}
			if a := answers[i]; a.err != nil {
				m := a.msg
				rr.ErrorCode, rr.ErrorMessage = a.err.Code, &m
			}
			resp.Resources = append(resp.Resources, rr)
		}
		b.respond(from, req, resp)
	}
	if b.kraft != nil {
		fwd := kmsg.NewPtrIncrementalAlterConfigsRequest()
		fwd.Version, fwd.ValidateOnly = body.Version, body.ValidateOnly
		for _, ch := range changes {
			fwd.Resources = append(fwd.Resources, body.Resources[ch.idx])
		}
		b.forwardConfigs(fwd, changes, answers, answer)
		return
	}
	b.alterTopicConfigsZK(changes, body.ValidateOnly, answers, answer)
}

// forwardConfigs sends the resources that passed the checks (fwd, in
// changes' order) to the active controller and takes its answers.
func (b *Broker) forwardConfigs(fwd kmsg.Request, changes []topicConfigChange, answers []configAnswer, answer func()) {
	if len(changes) == 0 {
		answer()
		return
	}
	b.forwardToController(fwd, func(r kmsg.Response, err error) {
		got := make([]configAnswer, len(changes))
		for n := range got {
			got[n] = configAnswer{kerr.NotController, "no active controller answered the forwarded request"}
		}
		take := func(n int, code int16, msg *string) {
			if n >= len(got) {
				return
			}
			got[n] = configAnswer{}
			if code != 0 {
				got[n].err, _ = kerr.ErrorForCode(code).(*kerr.Error)
				if msg != nil {
					got[n].msg = *msg
				}
			}
		}
		if err == nil {
			switch x := r.(type) {
			case *kmsg.AlterConfigsResponse:
				for n, rr := range x.Resources {
					take(n, rr.ErrorCode, rr.ErrorMessage)
				}
			case *kmsg.IncrementalAlterConfigsResponse:
				for n, rr := range x.Resources {
					take(n, rr.ErrorCode, rr.ErrorMessage)
				}
			}
		}
		for n, ch := range changes {
			answers[ch.idx] = got[n]
		}
		answer()
	})
}

// alterTopicConfigsZK applies the changes one after the other, as
// AdminZkClient.changeTopicConfig writes them, then answers.
func (b *Broker) alterTopicConfigsZK(changes []topicConfigChange, validateOnly bool, answers []configAnswer, answer func()) {
	if len(changes) == 0 {
		answer()
		return
	}
	ch, rest := changes[0], changes[1:]
	next := func() { b.alterTopicConfigsZK(rest, validateOnly, answers, answer) }
	a := &answers[ch.idx]
	if b.zk == nil {
		a.err, a.msg = kerr.UnknownServerError, "no ZooKeeper"
		next()
		return
	}
	if b.metadata.topicPartitions(ch.topic) == 0 {
		a.err, a.msg = kerr.UnknownTopicOrPartition, "topic "+ch.topic+" does not exist"
		next()
		return
	}
	path := zk.TopicConfigPath(ch.topic)
	b.zk.GetData(b.ctx, path, false, func(ctx *sim.Context, r *zk.Response) {
		b.ctx = ctx
		var cur map[string]string
		var stored zk.EntityConfig
		switch {
		case r.Code == zk.Ok && zk.Decode(r.Data, &stored) == nil:
			cur = stored.Config
		case r.Code == zk.NoNode:
			cur = b.ownTopicConfigs(ch.topic)
		default:
			a.err, a.msg = kerr.UnknownServerError, "reading "+path+": "+r.Code.String()
			next()
			return
		}
		if cur == nil {
			cur = map[string]string{}
		}
		configs, e, msg := ch.next(cur)
		if e != nil || validateOnly {
			a.err, a.msg = e, msg
			next()
			return
		}
		data := zk.Encode(zk.EntityConfig{Version: 1, Config: configs})
		written := func(ctx *sim.Context, r *zk.Response) {
			b.ctx = ctx
			if r.Code != zk.Ok {
				a.err, a.msg = kerr.UnknownServerError, "writing "+path+": "+r.Code.String()
				next()
				return
			}
			note := zk.Encode(zk.ConfigChange{Version: 2, EntityPath: "topics/" + ch.topic})
			b.zk.Create(b.ctx, zk.ConfigChangePrefix, note, zk.PersistentSequential, nil)
			if err := b.topicConfigsChanged(ch.topic, configs); err != nil {
				a.err, a.msg = kerr.InvalidConfig, err.Error()
			}
			next()
		}
		if r.Code == zk.NoNode {
			b.zk.CreateRecursive(b.ctx, path, data, written)
			return
		}
		b.zk.SetData(b.ctx, path, data, zk.AnyVersion, written)
	})
}

// ownTopicConfigs returns the configs a topic has of its own as this
// broker holds them: those of the modelled settings that differ from the
// broker's.
func (b *Broker) ownTopicConfigs(topic string) map[string]string {
	out := map[string]string{}
	for _, e := range configEntries {
		if e.topic == "" || !b.applies(e) {
			continue
		}
		if v, ok := b.topicSetting(topic, e); ok {
			out[e.topic] = v
		}
	}
	return out
}

// topicConfigDefault is the value of a topic config a topic does not set:
// the broker's.
func (b *Broker) topicConfigDefault(name string) string {
	if e, ok := topicConfigByName(name); ok {
		return e.value(&b.cfg)
	}
	return ""
}

// topicConfigsChanged hands topic's new own configs to the cluster
// (Config.TopicConfigChanged), or applies them on this broker alone.
func (b *Broker) topicConfigsChanged(topic string, configs map[string]string) error {
	s := b.SettingsOf(configs)
	b.ctx.Log("alter-topic-config", sim.S("topic", topic), sim.S("configs", renderConfigs(configs)))
	if b.cfg.TopicConfigChanged != nil {
		return b.cfg.TopicConfigChanged(topic, configs, s)
	}
	return b.AlterTopicConfig(b.ctx, topic, s)
}

func renderConfigs(configs map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(configs)) {
		parts = append(parts, k+"="+configs[k])
	}
	return strings.Join(parts, ",")
}

// SettingsOf returns the overrides a topic whose own configs are configs
// has on this broker: each modelled config it sets, the broker's for the
// others.
func (b *Broker) SettingsOf(configs map[string]string) TopicSettings {
	var s TopicSettings
	atoi := func(k string) (int64, bool) {
		v, ok := configs[k]
		if !ok {
			return 0, false
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		return n, err == nil
	}
	if n, ok := atoi(config.PropMinInsyncReplicas); ok {
		s.MinInsyncReplicas = int(n)
	}
	if v, ok := configs[config.PropUncleanLeaderElection]; ok {
		on := strings.EqualFold(strings.TrimSpace(v), "true")
		s.UncleanLeaderElection = &on
	}
	if n, ok := atoi(config.PropMaxMessageBytes); ok {
		m := int(n)
		s.MaxMessageBytes = &m
	}
	s.CompressionType = strings.TrimSpace(configs[config.PropCompressionType])
	if p, ok := configs["cleanup.policy"]; ok {
		s.CleanupPolicy = canonicalCleanupPolicy(p)
	}
	st := b.cfg.Storage
	l := TopicLog{SegmentBytes: st.SegmentBytes, SegmentMs: st.SegmentMs, RetentionMs: st.RetentionMs, RetentionBytes: st.RetentionBytes,
		IndexIntervalBytes: st.IndexIntervalBytes, FlushIntervalMessages: st.FlushIntervalMessages, FlushIntervalMs: st.FlushIntervalMs,
		MessageFormatVersion: st.MessageFormatVersion}
	changed := false
	// NB: each entry is independent of the others: the maps' order
	// reaches nothing.
	for k, dst := range map[string]*int64{"segment.bytes": &l.SegmentBytes, "retention.bytes": &l.RetentionBytes,
		"index.interval.bytes": &l.IndexIntervalBytes, "flush.messages": &l.FlushIntervalMessages} {
		if n, ok := atoi(k); ok {
			*dst, changed = n, true
		}
	}
	for k, dst := range map[string]*sim.Duration{"segment.ms": &l.SegmentMs, "retention.ms": &l.RetentionMs, "flush.ms": &l.FlushIntervalMs} {
		if n, ok := atoi(k); ok {
			*dst, changed = msDuration(n), true
		}
	}
	if v, ok := configs["message.format.version"]; ok {
		l.MessageFormatVersion, changed = strings.TrimSpace(v), true
	}
	if changed {
		s.Log = &l
	}
	return s
}

// msDuration converts a *.ms value: negative stays negative (unlimited),
// one past what sim.Duration holds is storage.Never.
func msDuration(n int64) sim.Duration {
	if n > int64(storage.Never/sim.Millisecond) {
		return storage.Never
	}
	return sim.Ms(n)
}

// canonicalCleanupPolicy orders a cleanup.policy list as the log expects
// ("compact,delete" for both).
func canonicalCleanupPolicy(p string) string {
	hasCompact, hasDelete := false, false
	for _, x := range strings.Split(p, ",") {
		switch strings.TrimSpace(x) {
		case "compact":
			hasCompact = true
		case "delete":
			hasDelete = true
		}
	}
	switch {
	case hasCompact && hasDelete:
		return "compact,delete"
	case hasCompact:
		return "compact"
	}
	return "delete"
}

// checkGroupConfig checks one operation on a group config: SET and
// DELETE only (no group config is a list), of a known name and value.
func (b *Broker) checkGroupConfig(c kmsg.IncrementalAlterConfigsRequestResourceConfig) (*kerr.Error, string) {
	switch c.Op {
	case kmsg.IncrementalAlterConfigOpDelete:
		return nil, ""
	case kmsg.IncrementalAlterConfigOpSet:
	case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
		return kerr.InvalidConfig, "config value append is not allowed for config key: " + c.Name
	default:
		return kerr.InvalidRequest, "unknown alter configs operation " + strconv.Itoa(int(c.Op))
	}
	if c.Value == nil {
		return kerr.InvalidRequest, "null value not supported for group config " + c.Name
	}
	if c.Name == "consumer.session.timeout.ms" || c.Name == "consumer.heartbeat.interval.ms" {
		if n, err := strconv.ParseInt(*c.Value, 10, 32); err != nil || n < 1 {
			return kerr.InvalidConfig, "invalid value " + *c.Value + " for configuration " + c.Name + ": an int >= 1"
		}
		return nil, ""
	}
	if !b.cfg.sharesEnabled() {
		return kerr.InvalidConfig, "unknown group config " + c.Name + " (share groups are off: share.version=0)"
	}
	if err := b.cfg.Share.ValidateGroupConfig(c.Name, *c.Value); err != nil {
		return kerr.InvalidConfig, err.Error()
	}
	return nil, ""
}
