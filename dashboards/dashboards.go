// Package dashboards embeds the bundled Grafana dashboards and reads the
// parts of their JSON that the tests check: conventions, and the PromQL of
// every panel, which the end-to-end test evaluates on a real Prometheus.
package dashboards

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
)

//go:embed *.json
var files embed.FS

// Dashboard is the subset of Grafana's dashboard JSON model we check.
type Dashboard struct {
	File          string `json:"-"`
	UID           string
	Title         string
	Tags          []string
	SchemaVersion int
	Panels        []Panel
	Links         []struct {
		Type, Title, URL string
		Tags             []string
	}
	Templating struct{ List []Variable }
}

// Variable is a template variable.
type Variable struct {
	Name, Type string
	Query      json.RawMessage
	Datasource *Datasource
}

// Datasource is a reference to a data source.
type Datasource struct{ Type, UID string }

// Panel is one panel; rows carry nested panels.
type Panel struct {
	ID          int
	Type        string
	Title       string
	Description string
	Datasource  *Datasource
	Targets     []Target
	Panels      []Panel
	Repeat      string
	// Transformations Grafana applies to the queries' frames, in order.
	Transformations []struct {
		ID      string
		Options json.RawMessage
	}
	GridPos     struct{ X, Y, W, H int }
	Options     json.RawMessage
	FieldConfig struct {
		Defaults struct {
			Unit   string
			Min    *float64
			Custom struct {
				AxisLabel, AxisPlacement string
				ScaleDistribution        *struct{ Type string }
			}
			Color      struct{ Mode string }
			Thresholds *struct {
				Steps []struct {
					Color string
					Value *float64
				}
			}
		}
		Overrides []Override
	}
}

// Override changes some properties of the series its matcher selects.
type Override struct {
	Matcher struct {
		ID      string
		Options json.RawMessage
	}
	Properties []struct {
		ID    string
		Value json.RawMessage
	}
}

// Property returns the value the override gives the property id, if any.
func (o Override) Property(id string) (json.RawMessage, bool) {
	for _, p := range o.Properties {
		if p.ID == id {
			return p.Value, true
		}
	}
	return nil, false
}

// Target is one query of a panel.
type Target struct {
	RefID        string `json:"refId"`
	Expr         string
	LegendFormat string
	Instant      bool
	Datasource   *Datasource
}

// Load reads every bundled dashboard.
func Load() ([]Dashboard, error) {
	names, err := fs.Glob(files, "*.json")
	if err != nil {
		return nil, err
	}
	var out []Dashboard
	for _, name := range names {
		b, err := files.ReadFile(name)
		if err != nil {
			return nil, err
		}
		d, err := Parse(name, b)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return out, nil
}

// Parse reads one dashboard's JSON, named name.
func Parse(name string, b []byte) (Dashboard, error) {
	var d Dashboard
	if err := json.Unmarshal(b, &d); err != nil {
		return d, fmt.Errorf("%s: %w", name, err)
	}
	d.File = name
	return d, nil
}

// Raw returns a dashboard file's bytes.
func Raw(name string) ([]byte, error) { return files.ReadFile(name) }

// AllPanels returns every panel, rows' nested panels included.
func (d Dashboard) AllPanels() []Panel {
	var out []Panel
	var walk func([]Panel)
	walk = func(ps []Panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
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
