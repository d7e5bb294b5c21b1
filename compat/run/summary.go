package main

import (
	"encoding/json"
	"fmt"
	"os"
)

// summary is what a run reported, in one shape whichever of k6's two JSON
// forms it came from: --summary-export's file or handleSummary's data object.
type summary struct {
	metrics    map[string]map[string]float64 // metric name (with {tags}) -> stat -> value
	thresholds map[string]map[string]bool    // metric -> expression -> crossed
	checks     []checkCount                  // every check of every group
	groups     []string                      // every group's name
}

type checkCount struct {
	name, path    string
	passes, fails float64
}

// readSummaryExport reads k6's --summary-export JSON: metrics keyed by name
// with their stats beside "thresholds" ({expression: crossed}), and
// root_group with groups and checks keyed by name.
func readSummaryExport(path string) (summary, error) {
	var doc struct {
		Metrics   map[string]map[string]json.RawMessage `json:"metrics"`
		RootGroup exportGroup                           `json:"root_group"`
	}
	if err := readJSON(path, &doc); err != nil {
		return summary{}, err
	}
	s := summary{metrics: map[string]map[string]float64{}, thresholds: map[string]map[string]bool{}}
	for name, fields := range doc.Metrics {
		stats := map[string]float64{}
		for stat, raw := range fields {
			if stat == "thresholds" {
				var th map[string]bool
				if err := json.Unmarshal(raw, &th); err != nil {
					return summary{}, fmt.Errorf("%s: metric %s: thresholds: %v", path, name, err)
				}
				s.thresholds[name] = th
				continue
			}
			var v float64
			if err := json.Unmarshal(raw, &v); err != nil {
				return summary{}, fmt.Errorf("%s: metric %s: %s is not a number", path, name, stat)
			}
			stats[stat] = v
		}
		s.metrics[name] = stats
	}
	s.walk(doc.RootGroup.asData(), true)
	return s, nil
}

type exportGroup struct {
	Name   string                 `json:"name"`
	Groups map[string]exportGroup `json:"groups"`
	Checks map[string]jsonCheck   `json:"checks"`
}

// asData is the group in handleSummary's shape (arrays for maps).
func (g exportGroup) asData() dataGroup {
	d := dataGroup{Name: g.Name}
	for _, c := range g.Checks {
		d.Checks = append(d.Checks, c)
	}
	for _, sub := range g.Groups {
		d.Groups = append(d.Groups, sub.asData())
	}
	return d
}

// readHandleSummary reads the data object handleSummary received, as a script
// wrote it with JSON.stringify(data): metrics with "values" and "thresholds"
// ({expression: {ok}}), root_group with groups and checks as arrays.
func readHandleSummary(path string) (summary, error) {
	var doc struct {
		Metrics map[string]struct {
			Values     map[string]float64 `json:"values"`
			Thresholds map[string]struct {
				OK bool `json:"ok"`
			} `json:"thresholds"`
		} `json:"metrics"`
		RootGroup dataGroup `json:"root_group"`
	}
	if err := readJSON(path, &doc); err != nil {
		return summary{}, err
	}
	s := summary{metrics: map[string]map[string]float64{}, thresholds: map[string]map[string]bool{}}
	for name, m := range doc.Metrics {
		s.metrics[name] = m.Values
		if len(m.Thresholds) > 0 {
			th := map[string]bool{}
			for expr, t := range m.Thresholds {
				th[expr] = !t.OK
			}
			s.thresholds[name] = th
		}
	}
	s.walk(doc.RootGroup, true)
	return s, nil
}

type dataGroup struct {
	Name   string      `json:"name"`
	Groups []dataGroup `json:"groups"`
	Checks []jsonCheck `json:"checks"`
}

type jsonCheck struct {
	Name   string  `json:"name"`
	Path   string  `json:"path"`
	Passes float64 `json:"passes"`
	Fails  float64 `json:"fails"`
}

// walk collects every group's name (but the root's) and every check.
func (s *summary) walk(g dataGroup, root bool) {
	if !root {
		s.groups = append(s.groups, g.Name)
	}
	for _, c := range g.Checks {
		s.checks = append(s.checks, checkCount{c.Name, c.Path, c.Passes, c.Fails})
	}
	for _, sub := range g.Groups {
		s.walk(sub, false)
	}
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %v", path, err)
	}
	return nil
}
