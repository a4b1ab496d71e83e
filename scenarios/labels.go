package scenarios

// This file names what a run actually ran: its truncation rule and
// protocol version (always, defaults included), the -set overrides of what
// its variant sets, and the variants that -set makes identical. The
// truncation rule has two names, Kafka's inter.broker.protocol.version and
// kafkasim's alias truncation (broker/config); a layer of the
// configuration that sets either replaces both from the layers below it,
// so `-set inter.broker.protocol.version=0.10.2` overrides a variant's
// truncation=kip279 exactly as `-set truncation=hw` does.

import (
	"fmt"
	"sort"
	"strings"

	"github.com/kafkasim/kafkasim/broker/config"
)

// protocolKeys are the two names of the truncation rule.
var protocolKeys = []string{config.PropInterBrokerProtocolVersion, config.PropTruncation}

// isProtocolKey reports whether k is one of protocolKeys.
func isProtocolKey(k string) bool {
	return k == config.PropInterBrokerProtocolVersion || k == config.PropTruncation
}

// setsProtocol reports whether props names the truncation rule.
func setsProtocol(props map[string]string) bool {
	for _, k := range protocolKeys {
		if _, ok := props[k]; ok {
			return true
		}
	}
	return false
}

// layer applies props over acc: a layer naming the truncation rule by
// either name replaces what lower layers said under both.
func layer(acc, props map[string]string) {
	if setsProtocol(props) {
		for _, k := range protocolKeys {
			delete(acc, k)
		}
	}
	for k, v := range props {
		acc[k] = v
	}
}

// ProtocolLabel renders a configuration's inter-broker protocol and the
// truncation rule it selects: "inter.broker.protocol.version=3.9
// (truncation=kip279)".
func ProtocolLabel(cfg config.Config) string {
	l := fmt.Sprintf("%s=%s (%s=%s)", config.PropInterBrokerProtocolVersion, cfg.Broker.InterBrokerProtocolVersion,
		config.PropTruncation, cfg.Broker.Truncation)
	if cfg.Broker.KRaftMode() {
		l += ", KRaft (" + config.PropProcessRoles + "=" + cfg.Broker.KRaft.ProcessRoles.String() + ")"
	}
	return l
}

// Overridden returns the -set overrides of what variant v sets, each as
// "key=value (the variant sets key=value)", sorted; nil when set changes
// nothing the variant says. Either name of the truncation rule overrides
// the variant's other name.
func Overridden(v Variant, set map[string]string) []string {
	var out []string
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var says []string
		if isProtocolKey(k) {
			for _, pk := range protocolKeys {
				if pv, ok := v.Props[pk]; ok && !(pk == k && pv == set[k]) {
					says = append(says, pk+"="+pv)
				}
			}
		} else if pv, ok := v.Props[k]; ok && pv != set[k] {
			says = append(says, k+"="+pv)
		}
		if len(says) > 0 {
			out = append(out, fmt.Sprintf("%s=%s (the variant sets %s)", k, set[k], strings.Join(says, " ")))
		}
	}
	return out
}

// SetLabel renders -set overrides as "k=v k=v", sorted.
func SetLabel(set map[string]string) string {
	pairs := make([]string, 0, len(set))
	for k, v := range set {
		pairs = append(pairs, k+"="+v)
	}
	sort.Strings(pairs)
	return strings.Join(pairs, " ")
}
