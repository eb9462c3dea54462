// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-jsonnet"
	"go.yaml.in/yaml/v2"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/grafana"
	"github.com/global-stability/global_stability_exporter/internal/testutil/render"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// The mixin's default selectors (mixin/config.libsonnet): the accounts'
// series, and the exporter's own.
const (
	defaultSelector  = `job="global_stability"`
	exporterSelector = `job=~"global_stability|global_stability_exporter"`
)

// committedDashboards parses the repository's dashboards/*.json.
func committedDashboards(t *testing.T) []grafana.Dashboard {
	t.Helper()
	paths, err := filepath.Glob(repoPath(t, "dashboards/*.json"))
	if err != nil || len(paths) < 2 {
		t.Fatalf("dashboards/*.json: %v, %v", paths, err)
	}
	files := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files["dashboards/"+filepath.Base(p)] = string(b)
	}
	return dashboardsIn(t, files)
}

// dashboardsIn parses the dashboards among rendered files.
func dashboardsIn(t *testing.T, files map[string]string) []grafana.Dashboard {
	t.Helper()
	var ds []grafana.Dashboard
	for path, content := range files {
		if !strings.HasPrefix(path, "dashboards/") {
			continue
		}
		d, err := grafana.Parse(path, []byte(content))
		if err != nil {
			t.Fatal(err)
		}
		ds = append(ds, d)
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].File < ds[j].File })
	return ds
}

// mixinConfig is the mixin's default config (mixin/config.libsonnet), field
// by field.
func mixinConfig(t *testing.T) map[string]any {
	t.Helper()
	out, err := jsonnet.MakeVM().EvaluateAnonymousSnippet("config.jsonnet", `(import '../mixin/mixin.libsonnet')._config`)
	if err != nil {
		t.Fatal(err)
	}
	var c map[string]any
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

// ruleNames lists the rules, recording and alerting, of a rules file.
func ruleNames(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Groups []struct {
			Rules []struct{ Alert, Record string }
		}
	}
	if err := yaml.Unmarshal(b, &file); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert+r.Record)
		}
	}
	return names
}

// selection is the label matchers of one series a query selects.
var selection = regexp.MustCompile(`[a-zA-Z0-9_:]\{([^{}]*)\}`)

// selects reports whether every series expr selects is selected with all
// the matchers of one of selectors (in any order: Prometheus prints a
// rule's matchers in its own).
func selects(expr string, selectors ...string) bool {
	found := selection.FindAllStringSubmatch(expr, -1)
	for _, s := range found {
		if !slices.ContainsFunc(selectors, func(sel string) bool {
			for _, m := range strings.Split(sel, ", ") {
				if !strings.Contains(s[1], m) {
					return false
				}
			}
			return true
		}) {
			return false
		}
	}
	return len(found) > 0
}

// seriesOf evaluates expr now and returns the labels of each series.
func seriesOf(base, expr, at string) ([]map[string]string, error) {
	r, err := promGet(base, "/api/v1/query", url.Values{"query": {expr}, "time": {at}})
	if err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	var series []struct{ Metric map[string]string }
	if err := json.Unmarshal(r.Data.Result, &series); err != nil {
		return nil, fmt.Errorf("%s returns no vector: %w", expr, err)
	}
	var out []map[string]string
	for _, s := range series {
		out = append(out, s.Metric)
	}
	return out, nil
}

// unresolved is a template variable left in a query ($1, label_replace's
// reference to its regexp's group, is not one: Grafana leaves it).
var unresolved = regexp.MustCompile(`\$[a-zA-Z_{]`)

// legendLabel is a label a legend names: {{label}}.
var legendLabel = regexp.MustCompile(`\{\{\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*\}\}`)

// seriesName is the name Grafana gives a series of a query: its legend
// with the series' labels and the panel's variables filled in, or, with no
// legend, the series' labels.
func seriesName(legend string, labels, vars map[string]string) string {
	if legend == "" {
		b, _ := json.Marshal(labels)
		return string(b)
	}
	name := legendLabel.ReplaceAllStringFunc(legend, func(m string) string {
		return labels[legendLabel.FindStringSubmatch(m)[1]]
	})
	return grafana.Interpolate(name, vars)
}

// panelCheck is what checkPanels is given: the instances the dashboards
// are shown for, the other variables' values (the cluster), and the
// selectors each query must hold.
type panelCheck struct {
	instances []string
	vars      map[string]string
	selectors []string
	at        string // when to evaluate, Unix seconds (see whole); "" is now
}

// checkPanels evaluates every panel query of ds on the Prometheus at base,
// wanting data for each instance (and each pillar for the pillar
// dashboard), and reads the panel as Grafana would name its series: a
// panel that shows every instance (the "All" of the instance variable)
// names each series with its instance or target and no two alike, and one
// in the row repeated per instance shows that instance's series under
// names no two alike ("conflict, conflict" once). It returns how many
// queries it evaluated.
func checkPanels(t *testing.T, base string, ds []grafana.Dashboard, c panelCheck) int {
	t.Helper()
	checked := 0
	for _, d := range ds {
		inRow := false
		for _, top := range d.Panels {
			if top.Type == "row" {
				inRow = top.Repeat == "instance"
				continue
			}
			for _, pillar := range endpoint.Pillars {
				shown := [][]string{c.instances} // all at once
				if inRow {
					shown = nil
					for _, i := range c.instances {
						shown = append(shown, []string{i})
					}
				}
				for _, instances := range shown {
					checked += checkPanel(t, base, d.File, top, pillar, instances, !inRow, c)
				}
				if !strings.Contains(fmt.Sprint(top.Targets), "$pillar") {
					break
				}
			}
		}
	}
	return checked
}

// checkPanel evaluates the queries of panel p for the instances shown.
func checkPanel(t *testing.T, base, file string, p grafana.Panel, pillar string, instances []string, named bool, c panelCheck) int {
	t.Helper()
	var quoted []string
	for _, i := range instances {
		quoted = append(quoted, regexp.QuoteMeta(i))
	}
	// $instance is multi-value: Grafana regex-escapes it, with the
	// backslashes doubled inside a PromQL string.
	vars := map[string]string{"instance": strings.ReplaceAll(strings.Join(quoted, "|"), `\`, `\\`), "pillar": pillar, "indicator": ".+", "datasource": "prometheus"}
	for k, v := range c.vars {
		vars[k] = v
	}
	names := map[string]bool{}
	for _, tg := range p.Targets {
		if !selects(tg.Expr, c.selectors...) {
			t.Errorf("%s / %q: %s does not hold the mixin's selectors %q in each selection", file, p.Title, tg.Expr, c.selectors)
		}
		expr := grafana.Interpolate(tg.Expr, vars)
		if unresolved.MatchString(expr) {
			t.Errorf("%s / %q: unresolved variable in %s", file, p.Title, expr)
		}
		series, err := seriesOf(base, expr, c.at)
		switch {
		case err != nil:
			t.Errorf("%s / %q / %s: %s does not evaluate: %v", file, p.Title, tg.RefID, expr, err)
			continue
		case len(series) == 0:
			t.Errorf("%s / %q / %s: %s returns no data for %v", file, p.Title, tg.RefID, expr, instances)
			continue
		}
		for _, labels := range series {
			if tg.Format == "table" { // a row per series, its labels the columns
				if named && labels["instance"] == "" {
					t.Errorf("%s / %q: a row of %s has no instance column: %v", file, p.Title, expr, labels)
				}
				continue
			}
			name := seriesName(tg.LegendFormat, labels, vars)
			// A panel repeated over a variable shows one of its values
			// each, the label of its name: the indicator.
			if shown := labels[p.Repeat] + "\x00" + name; names[shown] {
				t.Errorf("%s / %q: two series named %q (%v shown)", file, p.Title, name, instances)
			} else {
				names[shown] = true
			}
			if named && !slices.ContainsFunc([]string{"instance", "target"}, func(l string) bool {
				return labels[l] != "" && strings.Contains(name, labels[l])
			}) {
				t.Errorf("%s / %q: a series of %v named %q, without its instance or target", file, p.Title, labels, name)
			}
		}
	}
	return len(p.Targets)
}

// TestDashboardsAcrossClusters: two clusters, each a Prometheus scraping
// its own exporter of two targets (the same names in both) as
// examples/prometheus-targets.yml says, remote-write to a third holding
// both, which evaluates the mixin rendered with showMultiCluster. Every
// panel query answers for each target of each cluster, one cluster shown
// or both, and names the series of what it shows without a name twice: a
// query or legend that lost the cluster would show prod twice.
func TestDashboardsAcrossClusters(t *testing.T) {
	t.Parallel()
	prometheus := need(t, "prometheus")
	dir := t.TempDir()
	files, err := render.Mixin(`{showMultiCluster: true}`)
	if err != nil {
		t.Fatal(err)
	}
	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, []byte(files["alerts/global_stability.rules.yml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	central := freeAddr(t)
	writeYAML(t, filepath.Join(dir, "central.yml"), map[string]any{
		"global": map[string]any{"evaluation_interval": "1s"}, "rule_files": []string{rules}, "scrape_configs": []any{},
	})
	start(t, prometheus, "--config.file="+filepath.Join(dir, "central.yml"), "--storage.tsdb.path="+filepath.Join(dir, "central"),
		"--web.listen-address="+central, "--web.enable-remote-write-receiver", "--log.level=warn")
	base := "http://" + central

	// Four accounts of one API, as the demo runs them.
	clusters, targets := []string{"east", "west"}, []string{"prod", "staging"}
	var sims []*simulator.Simulator
	keys := map[string]string{}
	for i, cluster := range clusters {
		for j, target := range targets {
			key := fmt.Sprintf("gsk_%s_%s_0123456789", cluster, target)
			keys[cluster+"/"+target] = key
			sims = append(sims, simulator.New(simulator.Config{Key: key, Seed: uint64(2*i + j + 1),
				Validators: true, CacheControl: simulator.DemoCacheControl, RateLimit: simulator.DemoRateLimit}))
		}
	}
	api := httptest.NewServer(simulator.Accounts(sims...))
	t.Cleanup(api.Close)
	exporter := buildExporter(t, dir)
	noRules := filepath.Join(dir, "none.yml")
	writeYAML(t, noRules, map[string]any{"groups": []any{}})
	for _, cluster := range clusters {
		var file strings.Builder
		file.WriteString("targets:\n")
		for _, target := range targets {
			keyFile := filepath.Join(dir, cluster+"-"+target+".key")
			if err := os.WriteFile(keyFile, []byte(keys[cluster+"/"+target]), 0o600); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&file, "  - name: %s\n    api_url: %s\n    api_key_file: %s\n", target, api.URL, keyFile)
		}
		targetsFile := filepath.Join(dir, cluster+"-targets.yml")
		if err := os.WriteFile(targetsFile, []byte(file.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		addr := freeAddr(t)
		start(t, exporter, "--config.file="+targetsFile, "--web.listen-address="+addr)
		config := filepath.Join(dir, cluster+".yml")
		if err := os.WriteFile(config, prometheusTargetsConfig(t, addr, noRules, map[string]any{
			"global": map[string]any{"external_labels": map[string]string{"cluster": cluster}},
			"remote_write": []any{map[string]any{
				"url":          base + "/api/v1/write",
				"queue_config": map[string]any{"batch_send_deadline": "500ms", "min_backoff": "100ms", "max_backoff": "1s"},
			}},
		}, targets...), 0o644); err != nil {
			t.Fatal(err)
		}
		start(t, prometheus, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, cluster),
			"--web.listen-address="+freeAddr(t), "--log.level=warn")
	}

	// Every target of each cluster, with samples enough for rate(), and
	// the recording rules run over them.
	eventually(t, base, `count_over_time(global_stability_up{job="global_stability"}[1m]) >= 5`, 4)
	eventually(t, base, `count by (cluster, target) (global_stability:api_requests:rate5m)`, 4)
	eventually(t, base, `count by (cluster, instance) (global_stability:data_age_seconds)`, 4)
	ds := dashboardsIn(t, files)
	// One cluster, then both at once (the variable's default, All): in the
	// row of one account too, which shows it in each cluster.
	for _, cluster := range append(clusters, strings.Join(clusters, "|")) {
		n := checkPanels(t, base, ds, panelCheck{instances: targets, vars: map[string]string{"cluster": cluster}, selectors: []string{
			defaultSelector + `, cluster=~"$cluster"`, exporterSelector + `, cluster=~"$cluster"`,
		}})
		t.Logf("cluster %s: evaluated %d panel queries", cluster, n)
	}
}

// valuesOf evaluates expr now and returns each series' value by the
// label by.
func valuesOf(base, expr, by string) (map[string]float64, error) {
	r, err := promGet(base, "/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return nil, err
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	var series []struct {
		Metric map[string]string
		Value  [2]any
	}
	if err := json.Unmarshal(r.Data.Result, &series); err != nil {
		return nil, fmt.Errorf("%s returns no vector: %w", expr, err)
	}
	out := map[string]float64{}
	for _, s := range series {
		text, _ := s.Value[1].(string)
		out[s.Metric[by]], _ = strconv.ParseFloat(text, 64)
	}
	return out, nil
}

// topPanels are the panels that show every account at the top of a
// dashboard: the Overview's above its first row, the Pillar's first line.
func topPanels(d grafana.Dashboard) []grafana.Panel {
	var out []grafana.Panel
	for _, p := range d.Panels {
		if p.Type == "row" {
			break
		}
		if !strings.Contains(d.File, "pillar") || p.GridPos.Y == 0 {
			out = append(out, p)
		}
	}
	return out
}

// accountsTable returns the queries of the Overview's accounts' table, by
// the name of the column each fills.
func accountsTable(t *testing.T, ds []grafana.Dashboard) map[string]string {
	t.Helper()
	for _, d := range ds {
		if p := d.Panels[0]; strings.Contains(d.File, "overview") && p.Title == "Accounts" {
			columns := map[string]string{}
			for _, tg := range p.Targets {
				columns[tg.RefID] = tg.Expr
			}
			return map[string]string{"state": columns["A"], "API": columns["C"], "score": columns["E"], "alerts firing": columns["F"]}
		}
	}
	t.Fatal("no accounts' table at the top of the Overview")
	return nil
}

// TestABrokenAccountIsRedAtTheTop: four accounts of one exporter, scraped
// as examples/prometheus-targets.yml says, with the mixin's rules (their
// "for"s a minute to a second): prod healthy, staging's key revoked,
// partner's quota used up within its first scrapes, risk's conflict
// endpoint failing. Every panel at the top of either dashboard returns a
// value for every account, none absent; the accounts' table says what is
// wrong with each, its state putting the three in trouble before prod,
// with the alerts firing about them.
func TestABrokenAccountIsRedAtTheTop(t *testing.T) {
	t.Parallel()
	need(t, "prometheus")
	dir := t.TempDir()
	accounts := []struct {
		name string
		sim  simulator.Config
		api  float64 // what the table's API column says: OK, the key refused, out of quota, failing
	}{
		{"prod", simulator.Config{Validators: true, CacheControl: simulator.DemoCacheControl, RateLimit: simulator.DemoRateLimit}, 1},
		{"staging", simulator.Config{Revoked: true}, 401},
		{"partner", simulator.Config{RateLimit: 10}, 429},
		{"risk", simulator.Config{Failing: []string{endpoint.Conflict.Label}}, 0},
	}
	var sims []*simulator.Simulator
	var names []string
	var file strings.Builder
	file.WriteString("targets:\n")
	for i, a := range accounts {
		a.sim.Key, a.sim.Seed = fmt.Sprintf("gsk_%d_0123456789abcdef", i), uint64(i+1)
		sims = append(sims, simulator.New(a.sim))
		names = append(names, a.name)
		if err := os.WriteFile(filepath.Join(dir, a.name+".key"), []byte(a.sim.Key), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&file, "  - name: %s\n    api_url: %%s\n    api_key_file: %s\n", a.name, filepath.Join(dir, a.name+".key"))
	}
	api := httptest.NewServer(simulator.Accounts(sims...))
	t.Cleanup(api.Close)
	targetsFile := filepath.Join(dir, "targets.yml")
	if err := os.WriteFile(targetsFile, []byte(strings.ReplaceAll(file.String(), "%s", api.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	exporterAddr := freeAddr(t)
	start(t, buildExporter(t, dir), "--config.file="+targetsFile, "--web.listen-address="+exporterAddr)
	base, ds := prometheusWithTheMixin(t, dir, exporterAddr, names...)

	// Scraped, every one, and the alerts about the broken ones firing.
	eventually(t, base, `up{job="global_stability"} == 1`, 4)
	eventually(t, base, `ALERTS{alertname="GlobalStabilityScoreUnavailable", alertstate="firing", instance=~"staging|partner"}`, 2)
	eventually(t, base, `ALERTS{alertname="GlobalStabilityAPIQuotaLow", alertstate="firing", target="partner"}`, 1)

	vars := map[string]string{"instance": strings.Join(names, "|"), "pillar": "conflict", "datasource": "prometheus"}
	for _, d := range ds {
		for _, p := range topPanels(d) {
			for _, tg := range p.Targets {
				got, err := valuesOf(base, grafana.Interpolate(tg.Expr, vars), "instance")
				if err != nil {
					t.Errorf("%s / %q: %v", d.File, p.Title, err)
				}
				for _, name := range names {
					if _, ok := got[name]; !ok {
						t.Errorf("%s / %q / %s: no value for %s (%v): an account in trouble is missing", d.File, p.Title, tg.RefID, name, got)
					}
				}
			}
		}
	}
	table := map[string]map[string]float64{}
	for column, expr := range accountsTable(t, ds) {
		values, err := valuesOf(base, grafana.Interpolate(expr, vars), "instance")
		if err != nil {
			t.Fatalf("%s: %v", column, err)
		}
		table[column] = values
	}
	for _, a := range accounts {
		state, api, alerts := table["state"][a.name], table["API"][a.name], table["alerts firing"][a.name]
		if trouble := a.name != "prod"; trouble != (state >= 10) || api != a.api {
			t.Errorf("%s: state %v (TROUBLE from 10), API %v; want trouble %v and API %v", a.name, state, api, trouble, a.api)
		}
		if (a.name == "staging" || a.name == "partner") && alerts < 1 {
			t.Errorf("%s: %v alerts firing, want its own", a.name, alerts)
		}
	}
	if s := table["score"]["staging"]; s != -1 {
		t.Errorf("staging's score %v, want -1 (none: its overview refused)", s)
	}
}

// TestTheDemoShowsAnAccountInTrouble: --demo, scraped as
// examples/prometheus-targets.yml says with its three accounts and the
// mixin's rules, puts demo-c at the top of the accounts' table, out of
// quota, with GlobalStabilityAPIQuotaLow firing about it; demo-a and demo-b
// are fine.
func TestTheDemoShowsAnAccountInTrouble(t *testing.T) {
	t.Parallel()
	need(t, "prometheus")
	dir := t.TempDir()
	exporterAddr := freeAddr(t)
	start(t, buildExporter(t, dir), "--demo", "--web.listen-address="+exporterAddr)
	names := []string{"demo-a", "demo-b", "demo-c"}
	base, ds := prometheusWithTheMixin(t, dir, exporterAddr, names...)
	eventually(t, base, `up{job="global_stability"} == 1`, 3)
	eventually(t, base, `ALERTS{alertname="GlobalStabilityAPIQuotaLow", alertstate="firing", target="demo-c"}`, 1)
	vars := map[string]string{"instance": strings.Join(names, "|")}
	columns := accountsTable(t, ds)
	// Answered 429 once its answers of the first round are no longer fresh.
	eventually(t, base, grafana.Interpolate(columns["API"], vars)+" == 429", 1)
	state, err := valuesOf(base, grafana.Interpolate(columns["state"], vars), "instance")
	if err != nil {
		t.Fatal(err)
	}
	api, err := valuesOf(base, grafana.Interpolate(columns["API"], vars), "instance")
	if err != nil {
		t.Fatal(err)
	}
	if state["demo-c"] < 10 || api["demo-c"] != 429 || state["demo-a"] >= 10 || state["demo-b"] >= 10 {
		t.Errorf("state %v, API %v: want demo-c in trouble, out of quota (429), demo-a and demo-b not", state, api)
	}
}

// prometheusWithTheMixin starts a Prometheus scraping the exporter at addr
// as examples/prometheus-targets.yml says, for targets, with the mixin's
// rules, their "for"s a minute to a second; it returns its address and the
// mixin's dashboards.
func prometheusWithTheMixin(t *testing.T, dir, addr string, targets ...string) (string, []grafana.Dashboard) {
	t.Helper()
	config := scaledMixinConfig(t, "{}")
	files, err := render.Mixin(config)
	if err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, prometheusTargetsConfig(t, addr, renderRules(t, dir, config), nil, targets...), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	start(t, need(t, "prometheus"), "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	return "http://" + promAddr, dashboardsIn(t, files)
}
