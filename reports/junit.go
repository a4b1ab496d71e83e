package reports

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
)

// Case is one suite entry: a scenario under one variant over its seeds.
type Case struct {
	Scenario, Variant string
	Runs              int
	Failures          []string // one line per failed run: what and how to replay
	Seconds           float64
}

type junitSuite struct {
	XMLName  xml.Name    `xml:"testsuite"`
	Name     string      `xml:"name,attr"`
	Tests    int         `xml:"tests,attr"`
	Failures int         `xml:"failures,attr"`
	Time     string      `xml:"time,attr"`
	Cases    []junitCase `xml:"testcase"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitFailure `xml:"failure,omitempty"`
}

type junitFailure struct {
	Message string `xml:"message,attr"`
	Text    string `xml:",chardata"`
}

// WriteJUnit writes the suite as JUnit XML: one test case per scenario ×
// variant.
func WriteJUnit(w io.Writer, cases []Case) error {
	s := junitSuite{Name: "kafkasim", Tests: len(cases)}
	total := 0.0
	for _, c := range cases {
		jc := junitCase{Name: c.Scenario + "/" + c.Variant, Classname: "kafkasim." + c.Scenario, Time: fmt.Sprintf("%.3f", c.Seconds)}
		if len(c.Failures) > 0 {
			s.Failures++
			// NB: CI pages show the message first: it carries the first
			// failing seed's reason and replay command (FailureText's
			// first two lines), the text every failing seed's evidence.
			first := strings.SplitN(c.Failures[0], "\n", 3)
			for i := range first {
				first[i] = strings.TrimSpace(first[i])
			}
			msg := fmt.Sprintf("%d of %d runs not as expected; first %s", len(c.Failures), c.Runs, strings.Join(first[:min(2, len(first))], "; "))
			jc.Failure = &junitFailure{Message: clip(msg, 2*MaxEvidenceLine), Text: strings.Join(c.Failures, "\n")}
		}
		total += c.Seconds
		s.Cases = append(s.Cases, jc)
	}
	s.Time = fmt.Sprintf("%.3f", total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(s); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
