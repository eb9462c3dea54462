// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/grafana"
)

// currentPanelTypes are Grafana's current visualisations we allow; the
// deprecated graph panel is not among them.
var currentPanelTypes = []string{"timeseries", "stat", "gauge", "bargauge", "table", "geomap", "state-timeline", "row"}

// The mixin's selectors (mixin/config.libsonnet), which the committed
// dashboards are rendered with: of the accounts' series, and of the
// exporter's own.
const (
	defaultSelector  = `job="global_stability"`
	exporterSelector = `job=~"global_stability|global_stability_exporter"`
)

// dashboard is the part of Grafana's dashboard JSON model these tests check.
type dashboard struct {
	File          string `json:"-"`
	UID           string
	Title         string
	Tags          []string
	SchemaVersion int
	Panels        []panel
	Links         []struct {
		Type, Title, URL string
		Tags             []string
	}
	Templating struct{ List []variable }
}

// variable is a template variable.
type variable struct {
	Name, Type string
	Query      json.RawMessage
}

// panel is a grafana.Panel with what Grafana draws it with.
type panel struct {
	grafana.Panel
	ID          int
	Description string
	GridPos     struct{ X, Y, W, H int }
	Panels      []panel
	// Transformations Grafana applies to the queries' frames, in order.
	Transformations []struct {
		ID      string
		Options json.RawMessage
	}
	Options     json.RawMessage
	FieldConfig struct {
		Defaults struct {
			Unit    string
			Min     *float64
			NoValue string
			Custom  struct {
				AxisLabel, AxisPlacement string
				ScaleDistribution        *struct{ Type string }
			}
			Color      struct{ Mode string }
			Thresholds *thresholds
			Mappings   []mapping
		}
		Overrides []override
	}
}

// thresholds are the steps of a field's colour by value.
type thresholds struct {
	Steps []struct {
		Color string
		Value *float64
	}
}

// mapping is a value mapping: a value, a range or a special value (null,
// nan, null+nan) shown as a text in a colour.
type mapping struct {
	Type    string
	Options json.RawMessage
}

// result is what a mapping shows.
type result struct{ Text, Color string }

// results returns what m shows, by the value, range or special value it
// matches.
func (m mapping) results() map[string]result {
	out := map[string]result{}
	switch m.Type {
	case "value":
		_ = json.Unmarshal(m.Options, &out)
	case "special":
		var o struct {
			Match  string
			Result result
		}
		_ = json.Unmarshal(m.Options, &o)
		out[o.Match] = o.Result
	case "range":
		var o struct {
			From, To float64
			Result   result
		}
		_ = json.Unmarshal(m.Options, &o)
		out[fmt.Sprintf("%g..%g", o.From, o.To)] = o.Result
	}
	return out
}

// override changes some properties of the series its matcher selects.
type override struct {
	Matcher struct {
		ID      string
		Options json.RawMessage
	}
	Properties []struct {
		ID    string
		Value json.RawMessage
	}
}

// property returns the value the override gives the property id, if any.
func (o override) property(id string) (json.RawMessage, bool) {
	for _, p := range o.Properties {
		if p.ID == id {
			return p.Value, true
		}
	}
	return nil, false
}

// allPanels returns every panel, rows' nested panels included.
func (d dashboard) allPanels() []panel {
	var out []panel
	var walk func([]panel)
	walk = func(ps []panel) {
		for _, p := range ps {
			out = append(out, p)
			walk(p.Panels)
		}
	}
	walk(d.Panels)
	return out
}

// perInstanceRow returns the panels of d inside a row repeated for each
// instance: they show one instance each, which the row's title names.
func (d dashboard) perInstanceRow() map[int]bool {
	in := map[int]bool{}
	repeated := false
	for _, p := range d.Panels {
		if p.Type == "row" {
			repeated = p.Repeat == "instance"
			continue
		}
		in[p.ID] = repeated
	}
	return in
}

// load reads every bundled dashboard.
func load(t *testing.T) []dashboard {
	t.Helper()
	names, err := filepath.Glob("*.json")
	if err != nil {
		t.Fatal(err)
	}
	var ds []dashboard
	for _, name := range names {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		var d dashboard
		if err := json.Unmarshal(b, &d); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d.File = name
		ds = append(ds, d)
	}
	if len(ds) < 2 {
		t.Fatalf("found %d dashboards, want at least 2", len(ds))
	}
	return ds
}

func TestConventions(t *testing.T) {
	uids := map[string]bool{}
	for _, d := range load(t) {
		t.Run(d.File, func(t *testing.T) {
			if d.UID == "" || uids[d.UID] {
				t.Errorf("uid %q is empty or not unique", d.UID)
			}
			uids[d.UID] = true
			if d.SchemaVersion < 39 || d.SchemaVersion > 42 {
				t.Errorf("schemaVersion %d, want 39 to 42", d.SchemaVersion)
			}
			if !slices.Contains(d.Tags, "global-stability") {
				t.Errorf("tags %v lack global-stability (the links between dashboards use it)", d.Tags)
			}
			linked := false
			for _, l := range d.Links {
				linked = linked || (l.Type == "dashboards" && slices.Contains(l.Tags, "global-stability"))
			}
			if !linked {
				t.Error("no link to the other global-stability dashboards")
			}
			vars := map[string]variable{}
			for _, v := range d.Templating.List {
				vars[v.Name] = v
			}
			if v, ok := vars["datasource"]; !ok || v.Type != "datasource" || string(v.Query) != `"prometheus"` {
				t.Errorf("want a datasource variable of type prometheus, got %+v", v)
			}
			if v, ok := vars["instance"]; !ok || v.Type != "query" || !strings.Contains(string(v.Query), "label_values(global_stability_up{"+strings.ReplaceAll(defaultSelector, `"`, `\"`)+"}") {
				t.Errorf("want an instance variable from label_values(global_stability_up{<selector>}, instance), got %+v", v)
			}
			ids := map[int]bool{}
			for _, p := range d.allPanels() {
				if ids[p.ID] || p.ID == 0 {
					t.Errorf("panel %q: id %d is zero or repeated", p.Title, p.ID)
				}
				ids[p.ID] = true
				if !slices.Contains(currentPanelTypes, p.Type) {
					t.Errorf("panel %q: type %q is not a current panel type", p.Title, p.Type)
				}
				if p.Type == "row" {
					continue
				}
				if p.Description == "" || p.FieldConfig.Defaults.Unit == "" {
					t.Errorf("panel %q: needs a description and a unit", p.Title)
				}
				if len(p.Targets) == 0 {
					t.Errorf("panel %q: no queries", p.Title)
				}
				for _, tg := range p.Targets {
					if tg.Expr == "" || tg.RefID == "" {
						t.Errorf("panel %q: target without expr or refId", p.Title)
					}
					// Every selection holds one of the mixin's selectors and
					// picks the instances shown.
					for _, sel := range selections.FindAllStringSubmatch(tg.Expr, -1) {
						if !strings.Contains(sel[1], defaultSelector+`, instance=~"$instance"`) &&
							!strings.Contains(sel[1], exporterSelector) {
							t.Errorf("panel %q: {%s} in %q uses neither of the mixin's selectors with the instance variable", p.Title, sel[1], tg.Expr)
						}
					}
				}
			}
		})
	}
}

// selections are the label matchers of each series a query selects.
var selections = regexp.MustCompile(`[a-z_:]\{([^{}]*)\}`)

// TestReadable holds what a person saw go wrong in a real Grafana: series
// coloured by thresholds (every line the same green), bar gauges whose
// automatic minimum draws equal values as empty bars.
func TestReadable(t *testing.T) {
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			switch p.Type {
			case "timeseries":
				if p.FieldConfig.Defaults.Color.Mode == "thresholds" {
					t.Errorf("%s / %q: series coloured by thresholds cannot be told apart", d.File, p.Title)
				}
			case "bargauge":
				if m := p.FieldConfig.Defaults.Min; m == nil || *m != 0 {
					t.Errorf("%s / %q: a bar gauge needs min 0", d.File, p.Title)
				}
			}
		}
	}
}

// TestNoHardCodedDatasource walks the raw JSON: every datasource reference
// must go through the ${datasource} variable (or be Grafana's built-in
// annotation source).
func TestNoHardCodedDatasource(t *testing.T) {
	for _, d := range load(t) {
		raw, err := os.ReadFile(d.File)
		if err != nil {
			t.Fatal(err)
		}
		var doc any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		var walk func(path string, v any)
		walk = func(path string, v any) {
			switch v := v.(type) {
			case map[string]any:
				if ds, ok := v["datasource"].(map[string]any); ok {
					if uid := ds["uid"]; uid != "${datasource}" && uid != "-- Grafana --" {
						t.Errorf("%s %s: datasource uid %v is hard-coded", d.File, path, uid)
					}
				}
				for k, c := range v {
					walk(path+"."+k, c)
				}
			case []any:
				for _, c := range v {
					walk(path+"[]", c)
				}
			}
		}
		walk("", doc)
	}
}

func TestInterpolate(t *testing.T) {
	got := grafana.Interpolate(`rate(x{job="$job",instance=~"$instance",endpoint="global-stability/pillar/${pillar}"}[$__rate_interval])`,
		map[string]string{"job": "j", "instance": "i:1", "pillar": "cyber"})
	if want := `rate(x{job="j",instance=~"i:1",endpoint="global-stability/pillar/cyber"}[1m])`; got != want {
		t.Errorf("Interpolate = %s, want %s", got, want)
	}
}

// TestPanelsNameTheRecordingRulesTheyNeed: a panel that reads a recording
// rule (global_stability:…) says so in its description, by name: without
// the rules' recording group it is empty, and a user must be told why.
func TestPanelsNameTheRecordingRulesTheyNeed(t *testing.T) {
	ds := load(t)
	rule := regexp.MustCompile(`global_stability:[a-z0-9_:]+`)
	for _, d := range ds {
		for _, p := range d.allPanels() {
			for _, tg := range p.Targets {
				for _, r := range rule.FindAllString(tg.Expr, -1) {
					if !strings.Contains(p.Description, r) {
						t.Errorf("%s / %q reads %s, but its description does not name it", d.File, p.Title, r)
					}
				}
			}
		}
	}
}

// aggregation is a PromQL aggregation over a query, with the labels it
// keeps: "sum by (instance, lat, lon) (...)".
var aggregation = regexp.MustCompile(`^\s*(?:sum|max|min|avg|count|group)\s+by\s*\(([^)]*)\)`)

// TestMergesHaveAJoinField: Grafana's merge transformation joins rows of
// its frames whose every label column is equal; two queries of different
// series always differ in __name__ (and whatever else one has), so no row
// would carry both values: the map's bubbles once all had one colour so.
// Each query of a merged panel must therefore aggregate to the same
// labels, which are the join.
func TestMergesHaveAJoinField(t *testing.T) {
	merges := 0
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			merged := false
			for _, tr := range p.Transformations {
				merged = merged || tr.ID == "merge"
			}
			if !merged {
				continue
			}
			merges++
			var join string
			for i, tg := range p.Targets {
				m := aggregation.FindStringSubmatch(tg.Expr)
				if m == nil {
					t.Errorf("%s / %q: %s is merged without an aggregation to the labels to join on: its __name__ differs from the other queries'", d.File, p.Title, tg.Expr)
					continue
				}
				labels := strings.Join(strings.Fields(strings.ReplaceAll(m[1], ",", " ")), ",")
				if i == 0 {
					join = labels
				} else if labels != join {
					t.Errorf("%s / %q: queries aggregate by (%s) and by (%s): merge joins on every label, so their rows never meet", d.File, p.Title, join, labels)
				}
			}
		}
	}
	if merges == 0 {
		t.Error("no panel merges queries: the map's count and escalation are joined by one")
	}
}

// ratePanels are the time series of a rate (rate(), a :rate recording
// rule).
func ratePanels(t *testing.T) map[string][]panel {
	out := map[string][]panel{}
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			if p.Type == "timeseries" && slices.ContainsFunc(p.Targets, func(tg grafana.Target) bool {
				return strings.Contains(tg.Expr, "rate(") || strings.Contains(tg.Expr, ":rate")
			}) {
				out[d.File] = append(out[d.File], p)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no panel plots a rate")
	}
	return out
}

// TestRatePanelsSayPerWhat: a rate is shown per hour, as its neighbours
// are, on an axis that says so (the unit, or an axis label): "150" beside
// "16 KiB" says per what neither, and "0.4 req/s" beside "1500 /h" read
// as different things.
func TestRatePanelsSayPerWhat(t *testing.T) {
	for file, panels := range ratePanels(t) {
		for _, p := range panels {
			for _, tg := range p.Targets {
				if !strings.HasSuffix(tg.Expr, "* 3600") {
					t.Errorf("%s / %q: %s is not per hour", file, p.Title, tg.Expr)
				}
			}
			unit, label := p.FieldConfig.Defaults.Unit, p.FieldConfig.Defaults.Custom.AxisLabel
			if unit != "suffix: /h" && label != "per hour" {
				t.Errorf("%s / %q plots a rate with unit %q and axis label %q: neither says per hour", file, p.Title, unit, label)
			}
		}
	}
}

// TestRateAxesHoldZero: an axis zoomed into 0.014-0.017 req/s drew a
// steady rate as a full-height saw.
func TestRateAxesHoldZero(t *testing.T) {
	for file, panels := range ratePanels(t) {
		for _, p := range panels {
			if m := p.FieldConfig.Defaults.Min; m == nil || *m != 0 {
				t.Errorf("%s / %q: a rate's axis must hold zero (min 0)", file, p.Title)
			}
		}
	}
}

// TestAgesReadAsMinutesAndSeconds: an age in seconds shown as a number
// reads as minutes and seconds; Grafana's unit s wrote 68 s as "1.14 mins".
// So does every panel and table column showing the age of an as_of.
func TestAgesReadAsMinutesAndSeconds(t *testing.T) {
	ages := 0
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			if p.Type == "timeseries" {
				continue
			}
			for _, s := range p.shown() {
				// An age, not a severity computed from one.
				if !strings.Contains(s.target.Expr, "time() - max_over_time(global_stability_as_of_timestamp_seconds") || strings.Contains(s.target.Expr, " bool ") {
					continue
				}
				ages++
				if u := p.unit(s.column); u != "dtdurations" {
					t.Errorf("%s / %q %s shows an age in seconds with unit %q, not dtdurations", d.File, p.Title, s.column, u)
				}
			}
		}
	}
	if ages < 3 {
		t.Errorf("%d panels or columns show an age as a value, want the accounts' oldest data and both dashboards' data age", ages)
	}
}

// TestAgesTickAtReadableTimes: a log axis ticks at powers of ten of its
// unit, whatever the unit prints them as; "Data age over time" ticked at
// 1.67 min, 16.7 min and 2.78 hours. Ages go on linear axes in the unit
// they come in (minutes, hours), where Grafana's ticks read.
func TestAgesTickAtReadableTimes(t *testing.T) {
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			if sd := p.FieldConfig.Defaults.Custom.ScaleDistribution; sd != nil && sd.Type == "log" {
				t.Errorf("%s / %q: a log axis of %q ticks at powers of ten", d.File, p.Title, p.FieldConfig.Defaults.Unit)
			}
			for _, o := range p.FieldConfig.Overrides {
				if v, ok := o.property("custom.scaleDistribution"); ok && strings.Contains(string(v), `"log"`) {
					t.Errorf("%s / %q: an override draws %s on a log axis", d.File, p.Title, o.Matcher.Options)
				}
			}
		}
	}
}

// TestUnitOverridesHaveTheirOwnAxis: series given another unit than the
// panel's are drawn on an axis of their own, or one axis's ticks would
// name the unit of only some of the lines on it (requests and bytes once
// shared one).
func TestUnitOverridesHaveTheirOwnAxis(t *testing.T) {
	overridden := 0
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			if p.Type != "timeseries" {
				continue
			}
			panelSide := p.FieldConfig.Defaults.Custom.AxisPlacement
			if panelSide == "" {
				panelSide = "auto"
			}
			for _, o := range p.FieldConfig.Overrides {
				unit, ok := o.property("unit")
				if !ok {
					continue
				}
				overridden++
				var side string
				if v, ok := o.property("custom.axisPlacement"); ok {
					_ = json.Unmarshal(v, &side)
				}
				if side == "" || side == panelSide || side == "hidden" || side == "auto" && panelSide == "left" || side == "left" && panelSide == "auto" {
					t.Errorf("%s / %q: the override of %s gives unit %s on the panel's own axis (%q)", d.File, p.Title, o.Matcher.Options, unit, side)
				}
			}
		}
	}
	if overridden == 0 {
		t.Error("no series has a unit of its own: data age's event and briefing lines should (hours beside minutes)")
	}
}

// TestSeriesKeepTheirColours: no two lines of a time series are given the
// same fixed colour (a stat may colour synonyms alike, and status codes
// are coloured by class: TestStatusCodesHaveFixedColours), and every panel
// of the endpoints' request durations gives each endpoint its own (the
// classic palette repeated colours among eight).
func TestSeriesKeepTheirColours(t *testing.T) {
	perEndpoint := 0
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			if p.Type != "timeseries" || p.showsStatusCodes() {
				continue
			}
			given := map[string]string{} // colour → the matcher it was given to
			named := map[string]bool{}
			for _, o := range p.FieldConfig.Overrides {
				v, ok := o.property("color")
				if !ok {
					continue
				}
				var c struct{ Mode, FixedColor string }
				_ = json.Unmarshal(v, &c)
				if c.Mode != "fixed" {
					continue
				}
				var name string
				_ = json.Unmarshal(o.Matcher.Options, &name)
				if other, dup := given[c.FixedColor]; dup {
					t.Errorf("%s / %q: %q and %q are both %s", d.File, p.Title, other, name, c.FixedColor)
				}
				given[c.FixedColor] = name
				named[name] = true
			}
			if len(p.Targets) == 0 || p.Repeat != "" || !strings.Contains(p.Targets[0].Expr, "global_stability_scrape_duration_seconds") ||
				strings.Contains(p.Targets[0].Expr, "$pillar") || p.Targets[0].LegendFormat != "{{endpoint}}" {
				continue
			}
			perEndpoint++
			for _, e := range endpoint.All() {
				if !named[e.Label] {
					t.Errorf("%s / %q: endpoint %s has no colour of its own", d.File, p.Title, e.Label)
				}
			}
		}
	}
	if perEndpoint == 0 {
		t.Error("no panel of the endpoints' request durations found")
	}
}

// TestRepeatedPanelsNameWhatTheyRepeat: a panel repeated over a variable
// names that variable's value in its title or legend, and a repeated row
// in its title; the indicator panels once named neither, so every panel
// read the same.
func TestRepeatedPanelsNameWhatTheyRepeat(t *testing.T) {
	repeated := 0
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			if p.Repeat == "" {
				continue
			}
			repeated++
			if p.Type == "row" && !strings.Contains(p.Title, "$"+p.Repeat) {
				t.Errorf("%s: a row repeated over $%s is titled %q", d.File, p.Repeat, p.Title)
			}
			for _, tg := range p.Targets {
				if !strings.Contains(p.Title, "$"+p.Repeat) && !strings.Contains(tg.LegendFormat, "{{"+p.Repeat+"}}") && !strings.Contains(tg.LegendFormat, "$"+p.Repeat) {
					t.Errorf("%s / %q: repeated over $%s, neither its title nor its legend %q names it", d.File, p.Title, p.Repeat, tg.LegendFormat)
				}
			}
		}
	}
	if repeated < 2 {
		t.Error("want a repeated panel (one per indicator) and a repeated row (one per instance)")
	}
}

// legendLabel is a label a legend names: {{label}}.
var legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// legend renders a legend format for a series with labels, as Grafana does.
func legend(format string, labels map[string]string) string {
	return legendLabel.ReplaceAllStringFunc(format, func(m string) string {
		return labels[legendLabel.FindStringSubmatch(m)[1]]
	})
}

// TestEveryNameSaysItsInstance renders each panel's legends, bar names and
// table rows for two instances (targets prod and staging of one cluster):
// every name of a panel that shows several instances includes its
// instance, so no panel reads "conflict, conflict"; a panel inside the row
// repeated per instance shows one, and the row's title names it. (The
// end-to-end test renders them from a real Prometheus's series.)
func TestEveryNameSaysItsInstance(t *testing.T) {
	shared := 0
	for _, d := range load(t) {
		inRow := d.perInstanceRow()
		for _, p := range d.allPanels() {
			if p.Type == "row" || inRow[p.ID] {
				continue
			}
			shared++
			for _, tg := range p.Targets {
				keeps := aggregation.FindStringSubmatch(tg.Expr)
				if tg.Format == "table" {
					// A table's rows carry the labels the query keeps.
					if keeps == nil || !slices.Contains(strings.Fields(strings.ReplaceAll(keeps[1], ",", " ")), "instance") {
						t.Errorf("%s / %q: the table of %s has no instance column", d.File, p.Title, tg.Expr)
					}
					continue
				}
				names := map[string]bool{}
				for _, instance := range []string{"prod", "staging"} {
					labels := map[string]string{"instance": instance, "target": instance, "cluster": "east"}
					for _, m := range legendLabel.FindAllStringSubmatch(tg.LegendFormat, -1) {
						if _, ok := labels[m[1]]; !ok {
							labels[m[1]] = m[1] + "-value"
						}
						if keeps != nil && !strings.Contains(keeps[1], m[1]) {
							t.Errorf("%s / %q: the legend names %s, which %s aggregates away", d.File, p.Title, m[1], tg.Expr)
						}
					}
					name := legend(tg.LegendFormat, labels)
					if !strings.Contains(name, instance) {
						t.Errorf("%s / %q: the series of %s is named %q, without its instance", d.File, p.Title, instance, name)
					}
					names[name] = true
				}
				if len(names) != 2 {
					t.Errorf("%s / %q: two instances' series are both named %v", d.File, p.Title, names)
				}
			}
		}
	}
	if shared == 0 {
		t.Error("no panel shows every instance")
	}
}

// alertThresholds reads the threshold each alert of the committed rules
// compares its value with: "... > 60".
func alertThresholds(t *testing.T) map[string]float64 {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "alerts", "global_stability.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct{ Alert, Expr string }
		}
	}
	if err := yaml.Unmarshal(b, &rules); err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if m := regexp.MustCompile(`> ([0-9.]+)\s*$`).FindStringSubmatch(r.Expr); m != nil {
				out[r.Alert], _ = strconv.ParseFloat(m[1], 64)
			}
		}
	}
	return out
}

// TestColoursAreTheAlerts: a panel or table column coloured by thresholds
// turns red where the alert on the same value fires, and not before: the
// score orange and red at the warning and critical, the pillar scores red
// at PillarScoreHigh, a pillar's change over 24h red at PillarSurge (not
// every rise, 1.2 as red as 12.5, while the alert fires at 15).
func TestColoursAreTheAlerts(t *testing.T) {
	alerts := alertThresholds(t)
	want := map[string][]float64{ // the metric a panel shows → its steps
		"global_stability_score":            {alerts["GlobalStabilityScoreWarning"], alerts["GlobalStabilityScoreCritical"]},
		"global_stability_pillar_score":     {alerts["GlobalStabilityPillarScoreHigh"] * 0.75, alerts["GlobalStabilityPillarScoreHigh"]},
		"global_stability_pillar_delta_24h": {alerts["GlobalStabilityPillarSurge"] / 2, alerts["GlobalStabilityPillarSurge"]},
	}
	for metric, steps := range want {
		if steps[1] == 0 {
			t.Fatalf("no alert threshold for %s in the rules: %v", metric, alerts)
		}
	}
	checked := map[string]int{}
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			if p.Type == "timeseries" {
				continue
			}
			for _, s := range p.shown() {
				th := p.thresholds(s.column)
				metric := regexp.MustCompile(`global_stability_[a-z0-9_]+`).FindString(s.target.Expr)
				steps, ok := want[metric]
				if th == nil || !ok {
					continue
				}
				checked[metric]++
				var got []float64
				var colours []string
				for _, s := range th.Steps {
					if s.Value != nil {
						got = append(got, *s.Value)
						colours = append(colours, s.Color)
					}
				}
				if !slices.Equal(got, steps) || !slices.Equal(colours, []string{"orange", "red"}) {
					t.Errorf("%s / %q %s: steps %v %v, want orange at %v and red at %v", d.File, p.Title, s.column, got, colours, steps[0], steps[1])
				}
			}
		}
	}
	for metric := range want {
		if checked[metric] == 0 {
			t.Errorf("no panel coloured by thresholds shows %s", metric)
		}
	}
}

// TestEmptyPanelsSayNoData: a stat that shows only its series' names shows
// nothing when there is no series (an empty pale box), where
// Grafana says "No data" in the value.
func TestEmptyPanelsSayNoData(t *testing.T) {
	for _, d := range load(t) {
		for _, p := range d.allPanels() {
			var o struct{ TextMode string }
			_ = json.Unmarshal(p.Options, &o)
			if p.Type == "stat" && (o.TextMode == "name" || o.TextMode == "none") {
				t.Errorf("%s / %q: text mode %q hides \"No data\"", d.File, p.Title, o.TextMode)
			}
		}
	}
}
