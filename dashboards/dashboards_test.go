package dashboards

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// currentPanelTypes are Grafana's current visualisations we allow; the
// deprecated graph panel is not among them.
var currentPanelTypes = []string{"timeseries", "stat", "gauge", "bargauge", "table", "geomap", "state-timeline", "row"}

// defaultSelector is mixin/config.libsonnet's selector, which the committed
// dashboards are rendered with.
const defaultSelector = `job="global_stability"`

func load(t *testing.T) []Dashboard {
	t.Helper()
	ds, err := Load()
	if err != nil {
		t.Fatal(err)
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
			vars := map[string]Variable{}
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
			for _, p := range d.AllPanels() {
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
					if !strings.Contains(tg.Expr, defaultSelector+`, instance=~"$instance"`) {
						t.Errorf("panel %q: %q does not use the mixin's selector and the instance variable", p.Title, tg.Expr)
					}
				}
			}
		})
	}
}

// TestReadable holds what a person saw go wrong in a real Grafana: series
// coloured by thresholds (every line the same green), bar gauges whose
// automatic minimum draws equal values as empty bars.
func TestReadable(t *testing.T) {
	for _, d := range load(t) {
		for _, p := range d.AllPanels() {
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
		raw, err := Raw(d.File)
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
	got := Interpolate(`rate(x{job="$job",instance=~"$instance",endpoint="global-stability/pillar/${pillar}"}[$__rate_interval])`,
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
		for _, p := range d.AllPanels() {
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
		for _, p := range d.AllPanels() {
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

// rateUnit: a unit that says "per" something: Grafana's throughput units
// (reqps, Bps, ops, ...), or a custom suffix with a slash.
var rateUnit = regexp.MustCompile(`(ps|pm)$|^suffix:.*/`)

// TestRatePanelsSayPerWhat: a time series of a rate (rate(), a :rate
// recording rule) has an axis that says per what: a throughput unit, or an
// axis label. "150" beside "16 KiB" says neither.
func TestRatePanelsSayPerWhat(t *testing.T) {
	for _, d := range load(t) {
		for _, p := range d.AllPanels() {
			if p.Type != "timeseries" {
				continue
			}
			isRate := false
			for _, tg := range p.Targets {
				isRate = isRate || strings.Contains(tg.Expr, "rate(") || strings.Contains(tg.Expr, ":rate")
			}
			if !isRate {
				continue
			}
			unit, label := p.FieldConfig.Defaults.Unit, p.FieldConfig.Defaults.Custom.AxisLabel
			if !rateUnit.MatchString(unit) && !strings.Contains(label, "per ") {
				t.Errorf("%s / %q plots a rate with unit %q and axis label %q: neither says per what", d.File, p.Title, unit, label)
			}
		}
	}
}

// TestAgesTickAtReadableTimes: a log axis ticks at powers of ten of its
// unit, whatever the unit prints them as; "Data age over time" ticked at
// 1.67 min, 16.7 min and 2.78 hours. Ages go on linear axes in the unit
// they come in (minutes, hours), where Grafana's ticks read.
func TestAgesTickAtReadableTimes(t *testing.T) {
	for _, d := range load(t) {
		for _, p := range d.AllPanels() {
			if sd := p.FieldConfig.Defaults.Custom.ScaleDistribution; sd != nil && sd.Type == "log" {
				t.Errorf("%s / %q: a log axis of %q ticks at powers of ten", d.File, p.Title, p.FieldConfig.Defaults.Unit)
			}
			for _, o := range p.FieldConfig.Overrides {
				if v, ok := o.Property("custom.scaleDistribution"); ok && strings.Contains(string(v), `"log"`) {
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
		for _, p := range d.AllPanels() {
			if p.Type != "timeseries" {
				continue
			}
			panelSide := p.FieldConfig.Defaults.Custom.AxisPlacement
			if panelSide == "" {
				panelSide = "auto"
			}
			for _, o := range p.FieldConfig.Overrides {
				unit, ok := o.Property("unit")
				if !ok {
					continue
				}
				overridden++
				var side string
				if v, ok := o.Property("custom.axisPlacement"); ok {
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
// same fixed colour (a stat may colour synonyms alike), and every panel of the endpoints' request durations gives
// each endpoint its own (the classic palette repeated colours among eight).
func TestSeriesKeepTheirColours(t *testing.T) {
	perEndpoint := 0
	for _, d := range load(t) {
		for _, p := range d.AllPanels() {
			if p.Type != "timeseries" {
				continue
			}
			given := map[string]string{} // colour → the matcher it was given to
			named := map[string]bool{}
			for _, o := range p.FieldConfig.Overrides {
				v, ok := o.Property("color")
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
// names that variable's value in its legend; the indicator panels named
// the exporter's instance, so every panel's legend read the same.
func TestRepeatedPanelsNameWhatTheyRepeat(t *testing.T) {
	repeated := 0
	for _, d := range load(t) {
		for _, p := range d.AllPanels() {
			if p.Repeat == "" {
				continue
			}
			repeated++
			for _, tg := range p.Targets {
				if !strings.Contains(tg.LegendFormat, "{{"+p.Repeat+"}}") && !strings.Contains(tg.LegendFormat, "$"+p.Repeat) {
					t.Errorf("%s / %q: repeated over $%s, its legend %q does not name it", d.File, p.Title, p.Repeat, tg.LegendFormat)
				}
			}
		}
	}
	if repeated == 0 {
		t.Error("no repeated panel found: the pillar dashboard repeats one per indicator")
	}
}
