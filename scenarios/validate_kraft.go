package scenarios

// This file is validate.go's KRaft part: each variant's cluster shape
// (dedicated controllers, controller.quorum.voters, a manual controller in
// a KRaft cluster) is checked as cluster.Spec.Validate will check it, and
// reported at the line that brought it; and the steps that only make sense
// in ZooKeeper mode (leader-and-isr) are refused in a script that has a
// KRaft variant.

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/kafkasim/kafkasim/broker/cluster"
	"github.com/kafkasim/kafkasim/broker/config"
)

// kraftShape returns the first variant that runs in KRaft mode ("" for
// none) and the most dedicated controllers a variant makes; an error names
// the variant line (or the header line that shaped the quorum) of a
// cluster cluster.Build would refuse.
func (s *Script) kraftShape() (kraftVariant string, controllers int, err error) {
	for _, v := range s.Variants {
		cfg, perr := config.ParseGiven(s.Configuration(v, nil), scenarioOwn)
		if perr != nil || !cfg.Broker.KRaftMode() {
			continue // a bad property is reported at its line; ZooKeeper mode is not shaped here
		}
		spec := cluster.Spec{Brokers: s.Brokers, Controllers: s.Controllers, Config: cfg, ManualController: s.Manual}
		if verr := spec.Validate(); verr != nil {
			line := v.Line
			if !shapesQuorum(v.Props) && len(s.KRaftLines) > 0 {
				line = s.KRaftLines[0]
			}
			if s.Manual && s.ManualLine > 0 {
				line = s.ManualLine
			}
			if line == 0 {
				line = 1
			}
			return "", 0, &SyntaxError{File: s.File, Line: line, Msg: fmt.Sprintf("variant %s: %v", v.Name, verr)}
		}
		if kraftVariant == "" {
			kraftVariant = v.Name
		}
		n := s.Controllers
		if n == 0 && !cfg.Broker.KRaft.ProcessRoles.Controller() {
			n = cluster.DefaultControllers
		}
		controllers = max(controllers, n)
	}
	return kraftVariant, controllers, nil
}

// shapesQuorum reports whether a variant's properties decide the KRaft
// cluster's shape (so an error about it belongs at the variant's line).
func shapesQuorum(props map[string]string) bool {
	for k := range props {
		if k == config.PropProcessRoles || k == config.PropInterBrokerProtocolVersion || strings.HasPrefix(k, "controller.quorum.") || k == config.PropZookeeperConnect {
			return true
		}
	}
	return false
}

// isController reports whether name is ctlN, and whether N is one of the
// script's dedicated controllers.
func (c *checker) isController(name string) (looksLike, inRange bool) {
	if !ControllerName.MatchString(name) {
		return false, false
	}
	n, err := strconv.Atoi(strings.TrimPrefix(name, ControllerPrefix))
	return true, err == nil && n < c.controllers
}

// controllerNodeError checks ctlN against the script's controllers: nil when
// it is one, an error naming them otherwise.
func (c *checker) controllerNodeError(name string) error {
	if _, ok := c.isController(name); ok {
		return nil
	}
	if c.controllers == 0 {
		return fmt.Errorf("%q: no dedicated KRaft controllers in this script (add 'controllers N' to the header; %s)", name, c.brokerRange())
	}
	return fmt.Errorf("%q is not a controller: the script's KRaft controllers are ctl0..ctl%d", name, c.controllers-1)
}

// ControllerPrefix starts a dedicated KRaft controller's node name
// (server.ControllerPrefix): no client of a script may take such a name,
// whatever its variants, since -set can select a KRaft release for any.
const ControllerPrefix = "ctl"

// ControllerName matches a dedicated KRaft controller's node name (ctl0,
// ctl1, ...).
var ControllerName = regexp.MustCompile(`^ctl[0-9]+$`)
