package bench

// This file is the JSON form of a measurement (`kafkasim bench -json`) and
// its reading back as a baseline.

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Report is what `kafkasim bench -json` prints: the machine, the runs per
// workload and each workload's Result (with its per-run figures).
type Report struct {
	Machine string   `json:"machine"`
	Count   int      `json:"count"`
	Results []Result `json:"results"`
}

// ReadReports reads one or more Reports written one after another (the
// output of several `kafkasim bench -json` runs appended to one file) and
// pools them: a workload's per-run figures are those of all its results,
// in order. A result without per-run figures (JSON of kafkasim before
// issue 31) counts as one run with its means; notes says which.
// The error says what is not a bench report.
func ReadReports(r io.Reader) (pooled Report, notes []string, err error) {
	dec := json.NewDecoder(r)
	index := map[string]int{}
	var machines []string
	var meansOnly []string // the reports without per-run figures
	for n := 1; ; n++ {
		var rep Report
		if err := dec.Decode(&rep); err == io.EOF {
			if n == 1 {
				return Report{}, nil, errors.New("empty: want the output of kafkasim bench -json")
			}
			break
		} else if err != nil {
			return Report{}, nil, fmt.Errorf("report %d: not JSON of kafkasim bench -json: %v", n, err)
		}
		if err := rep.check(); err != nil {
			return Report{}, nil, fmt.Errorf("report %d: not the output of kafkasim bench -json: %v", n, err)
		}
		if len(machines) == 0 || machines[len(machines)-1] != rep.Machine {
			machines = append(machines, rep.Machine)
		}
		pooled.Count += rep.Count
		for _, res := range rep.Results {
			if len(res.PerRun) == 0 && (len(meansOnly) == 0 || meansOnly[len(meansOnly)-1] != fmt.Sprint(n)) {
				meansOnly = append(meansOnly, fmt.Sprint(n))
			}
			res.PerRun = res.Samples()
			i, ok := index[res.Name]
			if !ok {
				index[res.Name] = len(pooled.Results)
				pooled.Results = append(pooled.Results, res)
				continue
			}
			p := &pooled.Results[i]
			p.PerRun = append(p.PerRun, res.PerRun...)
			p.Runs += res.Runs
			if p.What != res.What {
				notes = append(notes, fmt.Sprintf("report %d: %s is a different workload than in an earlier report (%q, was %q); pooled all the same", n, res.Name, res.What, p.What))
			}
		}
	}
	if len(meansOnly) > 0 {
		which := "report " + meansOnly[0] + " holds"
		if len(meansOnly) > 1 {
			which = "reports " + strings.Join(meansOnly, ", ") + " hold"
		}
		notes = append(notes, which+" no per-run figures (kafkasim before issue 31): a workload's means there count as one run")
	}
	pooled.Machine = machines[0]
	for _, m := range machines[1:] {
		if m != pooled.Machine {
			notes = append(notes, fmt.Sprintf("the reports name different machines: %q and %q", pooled.Machine, m))
			break
		}
	}
	return pooled, notes, nil
}

// check says what keeps rep from being a bench report.
func (rep *Report) check() error {
	switch {
	case rep.Machine == "":
		return errors.New(`no "machine"`)
	case len(rep.Results) == 0:
		return errors.New(`no "results"`)
	}
	for i, r := range rep.Results {
		if r.Name == "" {
			return fmt.Errorf("result %d has no \"name\"", i+1)
		}
		if r.Runs < 1 {
			return fmt.Errorf("%s: \"runs\" is %d, want >= 1", r.Name, r.Runs)
		}
		if len(r.PerRun) > 0 && len(r.PerRun) != r.Runs {
			return fmt.Errorf("%s: %d per-run figures for %d runs", r.Name, len(r.PerRun), r.Runs)
		}
	}
	return nil
}
