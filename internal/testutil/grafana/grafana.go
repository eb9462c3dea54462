// SPDX-License-Identifier: Apache-2.0

// Package grafana reads the part of Grafana's dashboard model that the
// tests read: the panels and their queries, to evaluate on a real Prometheus.
package grafana

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Dashboard is the part of Grafana's dashboard JSON model the tests read.
type Dashboard struct {
	File   string `json:"-"`
	Title  string
	Panels []Panel
}

// Panel is one panel; a collapsed row carries its panels.
type Panel struct {
	Type, Title string
	GridPos     struct{ X, Y, W, H int } // where it is: y 0 is the top row
	Repeat      string                   // the variable it, or a row and the panels after it, repeat over
	Targets     []Target
	Panels      []Panel
}

// Target is one query of a panel.
type Target struct {
	RefID        string `json:"refId"`
	Expr         string
	LegendFormat string
	Format       string // "table" for a table of labels
}

// Parse reads one dashboard's JSON, named name.
func Parse(name string, b []byte) (Dashboard, error) {
	d := Dashboard{File: name} // json:"-": the decoder leaves it
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

// AllPanels returns every panel, rows' nested panels included.
func (d Dashboard) AllPanels() (out []Panel) {
	for _, p := range d.Panels {
		out = append(append(out, p), Dashboard{Panels: p.Panels}.AllPanels()...)
	}
	return out
}

// Interpolate resolves template variables in expr the way Grafana would
// for the given values; $__rate_interval and friends get fixed windows.
func Interpolate(expr string, vars map[string]string) string {
	pairs := []string{"$__rate_interval", "1m", "$__interval", "15s", "$__range", "1h"}
	for k, v := range vars {
		pairs = append(pairs, "${"+k+"}", v, "$"+k, v)
	}
	return strings.NewReplacer(pairs...).Replace(expr)
}
