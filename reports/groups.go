package reports

// This file renders grouped evidence (checkers.AnomalyGroup): records lost
// for one reason are one line in run's text, one object in -json's groups
// and one expandable row in the HTML report, so a run that loses 1,000
// records to one power loss tells that story once.

import (
	"fmt"
	"io"
	"strconv"

	"github.com/kafkasim/kafkasim/checkers"
)

// GroupJSON is one group of anomalies in JSON output (VerdictJSON.Groups).
type GroupJSON struct {
	Kind      string `json:"kind"`
	Partition string `json:"partition"`
	// Acks is the sends' acks (-1: all; -2: committed-lost, no send's).
	Acks int16 `json:"acks"`
	// Values name the records of a group of three or fewer.
	Values []string `json:"values,omitempty"`
	// Count is the records in the group, Listed how many of them the
	// verdict's anomalies list.
	Count  int   `json:"count"`
	Listed int   `json:"listed"`
	From   int64 `json:"from_offset"`
	To     int64 `json:"to_offset"`
	// AckedFromNs and AckedToNs span the acknowledgements (committed-lost:
	// the commits), in simulated nanoseconds.
	AckedFromNs int64  `json:"acked_from_ns"`
	AckedToNs   int64  `json:"acked_to_ns"`
	Reason      string `json:"reason"`
	Permitted   bool   `json:"permitted"`
	Text        string `json:"text"` // the line run's text output prints
}

// newGroupsJSON converts a verdict's groups.
func newGroupsJSON(gs []checkers.AnomalyGroup) []GroupJSON {
	var out []GroupJSON
	for _, g := range gs {
		out = append(out, GroupJSON{Kind: g.Kind, Partition: g.Topic + "-" + strconv.Itoa(int(g.Partition)), Acks: g.Acks, Values: g.Values, Count: g.Count, Listed: g.Listed,
			From: g.From, To: g.To, AckedFromNs: int64(g.AckedFrom), AckedToNs: int64(g.AckedTo), Reason: g.Reason, Permitted: g.Permitted, Text: g.String()})
	}
	return out
}

// maxGroups is how many groups per checker the text output shows.
const maxGroups = 10

// writeGroupsText writes a grouped verdict's groups, one line each.
func writeGroupsText(w io.Writer, v checkers.Verdict) {
	listed := 0
	for i, g := range v.Groups {
		listed += g.Listed
		if i == maxGroups {
			fmt.Fprintf(w, "      ... and %d more groups (-json lists them)\n", len(v.Groups)-i)
			break
		}
		fmt.Fprintf(w, "      %s\n", g.String())
	}
	if listed > 0 {
		fmt.Fprintf(w, "      (-json lists %d of the records one by one)\n", listed)
	}
}

// htmlGroup is one group in the HTML report: its line, and the lines of
// its records listed, without the reason each would repeat.
type htmlGroup struct {
	Text, Class string
	Records     []string
	Unlisted    int
}

// htmlGroups files a verdict's anomalies under its groups; anomalies in no
// group (none, for acked-loss) are returned apart.
func htmlGroups(v checkers.Verdict) (groups []htmlGroup, rest []string) {
	groups = make([]htmlGroup, len(v.Groups))
	for i, g := range v.Groups {
		groups[i] = htmlGroup{Text: g.String(), Class: "bug", Unlisted: g.Count - g.Listed}
		if g.Permitted {
			groups[i].Class = "permitted"
		}
	}
	for _, a := range v.Anomalies {
		if i := a.Group - 1; i >= 0 && i < len(groups) {
			groups[i].Records = append(groups[i].Records, recordLine(a))
		} else {
			rest = append(rest, a.String())
		}
	}
	return groups, rest
}

// recordLine is an anomaly's line under its group: the description up to
// the reason its group states.
func recordLine(a checkers.Anomaly) string {
	d := a.Description
	if n := len(d) - len(a.Reason); a.Reason != "" && n >= 2 && d[n:] == a.Reason {
		d = d[:n-2]
	}
	return a.Value + ": " + d
}
