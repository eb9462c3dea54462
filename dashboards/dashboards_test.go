package dashboards

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
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
