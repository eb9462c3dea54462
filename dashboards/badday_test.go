// SPDX-License-Identifier: Apache-2.0

package dashboards

import (
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/grafana"
	"github.com/global-stability/global_stability_exporter/internal/testutil/render"
)

// The tests of this file hold how the dashboards read on the day an
// account breaks (a key revoked, a quota used up): the account stays on
// every panel that shows them all, "No data" is never drawn green, status
// codes keep one colour each, every regexp override matches what it is
// for. They run over the committed dashboards and the mixin rendered for
// several clusters.

// multiCluster renders the mixin for several clusters, once for every test.
var multiCluster = sync.OnceValues(func() (map[string]string, error) { return render.Mixin(`{showMultiCluster: true}`) })

// loadAll returns the committed dashboards and those the mixin renders for
// several clusters in one store.
func loadAll(t *testing.T) []dashboard {
	t.Helper()
	ds := load(t)
	files, err := multiCluster()
	if err != nil {
		t.Fatal(err)
	}
	for path, text := range files {
		if !strings.HasPrefix(path, "dashboards/") {
			continue
		}
		var d dashboard
		if err := json.Unmarshal([]byte(text), &d); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		d.File = "multicluster/" + strings.TrimPrefix(path, "dashboards/")
		ds = append(ds, d)
	}
	return ds
}

// shownQuery is a query and what shows it: a table's column, by the name
// the organize transformation gives its value, or "" for a panel that
// shows every query alike.
type shownQuery struct {
	column string
	target grafana.Target
}

// shown returns what shows each query of p.
func (p panel) shown() []shownQuery {
	renamed := map[string]string{}
	for _, tr := range p.Transformations {
		if tr.ID == "organize" {
			var o struct{ RenameByName map[string]string }
			_ = json.Unmarshal(tr.Options, &o)
			renamed = o.RenameByName
		}
	}
	var out []shownQuery
	for _, tg := range p.Targets {
		column := ""
		if p.Type == "table" && len(p.Targets) > 1 {
			column = renamed["Value #"+tg.RefID]
		}
		out = append(out, shownQuery{column, tg})
	}
	return out
}

// property returns the value of property id for column: its override by
// name, where it has one.
func (p panel) property(column, id string) (json.RawMessage, bool) {
	var found json.RawMessage
	for _, o := range p.FieldConfig.Overrides {
		var name string
		_ = json.Unmarshal(o.Matcher.Options, &name)
		if v, ok := o.property(id); ok && o.Matcher.ID == "byName" && name == column && column != "" {
			found = v
		}
	}
	return found, found != nil
}

// unit is the unit column is shown in.
func (p panel) unit(column string) string {
	if v, ok := p.property(column, "unit"); ok {
		var u string
		_ = json.Unmarshal(v, &u)
		return u
	}
	return p.FieldConfig.Defaults.Unit
}

// thresholds are the steps column is coloured by, if any.
func (p panel) thresholds(column string) *thresholds {
	if v, ok := p.property(column, "thresholds"); ok {
		var th thresholds
		_ = json.Unmarshal(v, &th)
		return &th
	}
	return p.FieldConfig.Defaults.Thresholds
}

// mappings are every value mapping of p: its defaults' and its overrides'.
func (p panel) mappings() []mapping {
	out := slices.Clone(p.FieldConfig.Defaults.Mappings)
	for _, o := range p.FieldConfig.Overrides {
		if v, ok := o.property("mappings"); ok {
			var ms []mapping
			_ = json.Unmarshal(v, &ms)
			out = append(out, ms...)
		}
	}
	return out
}

// showsStatusCodes reports whether p draws a series per HTTP status code.
func (p panel) showsStatusCodes() bool {
	return slices.ContainsFunc(p.Targets, func(tg grafana.Target) bool { return strings.HasSuffix(tg.LegendFormat, "{{code}}") })
}

// legendOptions are where a panel lists its series and with what values.
type legendOptions struct {
	Legend struct {
		DisplayMode, Placement string
		Calcs                  []string
	}
}

// showsAccounts reports whether target names series by account: several
// of them, outside the row of one.
func showsAccounts(tg grafana.Target) bool {
	return strings.Contains(tg.LegendFormat, "{{instance}}") || strings.Contains(tg.LegendFormat, "{{target}}")
}

// labelValues are values each label a legend may name takes: every
// endpoint, pillar and status code, one account of one cluster.
func labelValues() map[string][]string {
	values := map[string][]string{
		"instance": {"prod"}, "target": {"prod"}, "cluster": {"east"},
		"pillar": endpoint.Pillars, "code": {"200", "304", "401", "429", "500", "error"},
	}
	for _, e := range endpoint.All() {
		values["endpoint"] = append(values["endpoint"], e.Label)
	}
	return values
}

// names returns every name a panel's legends give its series, with the
// label values of labelValues (and any other label's name as its value).
func (p panel) names() []string {
	var out []string
	values := labelValues()
	for _, tg := range p.Targets {
		names := []string{tg.LegendFormat}
		for _, m := range legendLabel.FindAllStringSubmatch(tg.LegendFormat, -1) {
			vs, ok := values[m[1]]
			if !ok {
				vs = []string{m[1]}
			}
			var next []string
			for _, n := range names {
				for _, v := range vs {
					next = append(next, strings.ReplaceAll(n, m[0], v))
				}
			}
			names = next
		}
		out = append(out, names...)
	}
	return out
}

// grafanaRegexp compiles a byRegexp matcher's pattern as Grafana does: a
// pattern not written as /re/flags is anchored, ^pattern$.
func grafanaRegexp(t *testing.T, pattern string) *regexp.Regexp {
	t.Helper()
	if m := regexp.MustCompile(`^/(.*?)/(i?)$`).FindStringSubmatch(pattern); m != nil {
		if m[2] != "" {
			return regexp.MustCompile("(?i)" + m[1])
		}
		return regexp.MustCompile(m[1])
	}
	return regexp.MustCompile("^" + pattern + "$")
}

// green reports whether a Grafana colour (a name or #rrggbb) is a green.
func green(colour string) bool {
	if strings.Contains(strings.ToLower(colour), "green") {
		return true
	}
	if len(colour) != 7 || colour[0] != '#' {
		return false
	}
	rgb, err := strconv.ParseUint(colour[1:], 16, 32)
	r, g, b := rgb>>16, rgb>>8&0xff, rgb&0xff
	return err == nil && g > r+0x20 && g > b+0x20
}

// TestNoValueIsNeverGreen: Grafana colours a missing value (no series, a
// NaN) with its thresholds' base step, green: a dead account's score,
// rise and 24h change read as healthy, one as a full green tile. Every
// stat, gauge and bar says what no value means, and maps a missing value
// (null and NaN) to a colour of its own; no mapping of a missing value,
// anywhere, is green or leaves the colour to the thresholds.
func TestNoValueIsNeverGreen(t *testing.T) {
	for _, d := range loadAll(t) {
		for _, p := range d.allPanels() {
			if slices.Contains([]string{"stat", "gauge", "bargauge"}, p.Type) {
				special := map[string]bool{}
				for _, m := range p.FieldConfig.Defaults.Mappings {
					for match := range m.results() {
						special[match] = m.Type == "special"
					}
				}
				if p.FieldConfig.Defaults.NoValue == "" {
					t.Errorf("%s / %q: no text for no value (Grafana says \"No data\", in the thresholds' base colour)", d.File, p.Title)
				}
				if !special["null"] && !special["null+nan"] || !special["nan"] && !special["null+nan"] {
					t.Errorf("%s / %q: no mapping of null and NaN: a missing value takes the thresholds' base colour", d.File, p.Title)
				}
			}
			for _, m := range p.mappings() {
				for match, r := range m.results() {
					missing := m.Type == "special" || strings.HasPrefix(match, "-")
					if missing && (r.Color == "" || green(r.Color)) {
						t.Errorf("%s / %q: a missing value (%s) is shown %q in colour %q", d.File, p.Title, match, r.Text, r.Color)
					}
				}
			}
		}
	}
}

// TestEveryAccountIsShownAtTheTop: the Overview opens on a table of the
// accounts, one row each, trouble first (sorted by its state, highest
// first); and every query of a panel that shows every account at the top
// of either dashboard falls back on Prometheus' up of each, so that an
// account whose data is gone is there, saying why, not missing. (The
// end-to-end test shows it on a real Prometheus with accounts broken:
// TestABrokenAccountIsRedAtTheTop.)
func TestEveryAccountIsShownAtTheTop(t *testing.T) {
	// The anchor itself, or a query falling back on it.
	fallback := regexp.MustCompile(`^max by \([a-z_, ]+\) \(up\{|` + ` or (on \([a-z_, ]+\) )?.*\bup\{[^}]*instance=~"\$instance"\}`)
	for _, d := range loadAll(t) {
		top := 0
		for _, p := range d.Panels {
			if p.Type == "row" {
				break
			}
			if y := p.GridPos.Y; strings.Contains(d.File, "pillar") && y > 0 {
				continue
			}
			top++
			for _, tg := range p.Targets {
				if !fallback.MatchString(tg.Expr) {
					t.Errorf("%s / %q: %s has no fallback on up: an account without this value would be missing", d.File, p.Title, tg.Expr)
				}
			}
		}
		if top < 4 {
			t.Errorf("%s: %d panels at the top, want the first row's", d.File, top)
		}
		if !strings.Contains(d.File, "overview") {
			continue
		}
		first := d.Panels[0]
		if first.Type != "table" || first.GridPos.Y != 0 {
			t.Errorf("%s: the first panel is %s %q, want the accounts' table", d.File, first.Type, first.Title)
			continue
		}
		var organized, sorted bool
		for _, tr := range first.Transformations {
			switch tr.ID {
			case "organize":
				var o struct{ RenameByName map[string]string }
				_ = json.Unmarshal(tr.Options, &o)
				organized = o.RenameByName["Value #A"] == "state"
			case "sortBy":
				var o struct {
					Sort []struct {
						Field string
						Desc  bool
					}
				}
				_ = json.Unmarshal(tr.Options, &o)
				sorted = organized && len(o.Sort) == 1 && o.Sort[0].Field == "state" && o.Sort[0].Desc
			}
		}
		if !sorted {
			t.Errorf("%s / %q: not sorted by the state of each account, trouble first", d.File, first.Title)
		}
	}
}

// TestRegexpOverridesMatchWhatTheyAreFor: Grafana anchors a byRegexp
// matcher (^…$), so " composite$" would match no series and leave the
// composite undashed. Each regexp override of a panel matches some of the names
// its legends give, and not all of them.
func TestRegexpOverridesMatchWhatTheyAreFor(t *testing.T) {
	regexps := 0
	for _, d := range loadAll(t) {
		for _, p := range d.allPanels() {
			names := p.names()
			for _, o := range p.FieldConfig.Overrides {
				if o.Matcher.ID != "byRegexp" {
					continue
				}
				regexps++
				var pattern string
				_ = json.Unmarshal(o.Matcher.Options, &pattern)
				re := grafanaRegexp(t, pattern)
				matched := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return !re.MatchString(n) })
				if len(matched) == 0 || len(matched) == len(names) {
					t.Errorf("%s / %q: the override %q matches %d of the names %q", d.File, p.Title, pattern, len(matched), names)
				}
			}
		}
	}
	if regexps == 0 {
		t.Error("no regexp override: the composite is dashed by one")
	}
}

// statusColours are the colour of each class of status code, and whether
// it is a failure, drawn on an axis of its own.
var statusColours = []struct {
	code, colour string
	failure      bool
}{
	{"200", "green", false}, {"204", "green", false}, {"304", "blue", false},
	{"400", "orange", true}, {"404", "orange", true}, {"401", "red", true}, {"403", "red", true},
	{"429", "purple", true}, {"500", "red", true}, {"503", "red", true}, {"error", "dark-red", true},
}

// TestStatusCodesHaveFixedColours: status codes coloured by the order of
// their series would paint a 401 green like a 200, and a few 429s would lie
// flat on the zero line under a thousand 200s. In every panel of requests by status code,
// each code takes its class's colour whatever the account or cluster, and
// failures go on an axis of their own.
func TestStatusCodesHaveFixedColours(t *testing.T) {
	panels := 0
	for _, d := range loadAll(t) {
		for _, p := range d.allPanels() {
			if !p.showsStatusCodes() {
				continue
			}
			panels++
			for _, tg := range p.Targets {
				for _, s := range statusColours {
					name := legend(tg.LegendFormat, map[string]string{"code": s.code, "instance": "prod", "target": "prod", "cluster": "east"})
					var colour, axis string
					for _, o := range p.FieldConfig.Overrides {
						var pattern string
						_ = json.Unmarshal(o.Matcher.Options, &pattern)
						if o.Matcher.ID != "byRegexp" || !grafanaRegexp(t, pattern).MatchString(name) {
							continue
						}
						if v, ok := o.property("color"); ok {
							var c struct{ FixedColor string }
							_ = json.Unmarshal(v, &c)
							colour = c.FixedColor
						}
						if v, ok := o.property("custom.axisPlacement"); ok {
							_ = json.Unmarshal(v, &axis)
						}
					}
					if colour != s.colour || (axis == "right") != s.failure {
						t.Errorf("%s / %q: %q is %q on axis %q, want %s (its own axis: %v)", d.File, p.Title, name, colour, axis, s.colour, s.failure)
					}
				}
			}
		}
	}
	if panels < 4 {
		t.Errorf("%d panels of requests by status code, want both dashboards' in both renderings", panels)
	}
}

// TestAnAccountKeepsItsColourAndItsName: Grafana's classic palette colours
// series by their order, which differs between panels and shifts when an
// account vanishes; with four accounts a legend below a panel named three.
// Every time series outside the row of one account that names accounts
// colours them by name (palette-classic-by-name), names each alike in
// every panel, so that it has one colour across the dashboard, and lists
// them in a table or to the right, with values.
func TestAnAccountKeepsItsColourAndItsName(t *testing.T) {
	checked := 0
	for _, d := range loadAll(t) {
		inRow := d.perInstanceRow()
		formats := map[string]bool{} // how an account alone is named
		for _, p := range d.allPanels() {
			if p.Type != "timeseries" || inRow[p.ID] || !slices.ContainsFunc(p.Targets, showsAccounts) {
				continue
			}
			checked++
			if p.FieldConfig.Defaults.Color.Mode != "palette-classic-by-name" {
				t.Errorf("%s / %q: accounts coloured by %q, not by name", d.File, p.Title, p.FieldConfig.Defaults.Color.Mode)
			}
			var o legendOptions
			_ = json.Unmarshal(p.Options, &o)
			if o.Legend.DisplayMode != "table" && o.Legend.Placement != "right" || len(o.Legend.Calcs) == 0 {
				t.Errorf("%s / %q: legend %+v; with more than four accounts it needs a table or the right side, with values", d.File, p.Title, o.Legend)
			}
			for _, tg := range p.Targets {
				name := legend(tg.LegendFormat, map[string]string{"instance": "prod", "target": "prod", "cluster": "east"})
				if !strings.Contains(name, " ") { // the account alone
					formats[name] = true
				}
			}
		}
		if len(formats) != 1 {
			t.Errorf("%s: an account is named %v in different panels: it takes a colour per name", d.File, formats)
		}
	}
	if checked < 4 {
		t.Errorf("%d time series of several accounts, want the composite history, the pillar's score, indicators and durations", checked)
	}
}
