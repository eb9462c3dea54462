// SPDX-License-Identifier: Apache-2.0

package mixin_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"go.yaml.in/yaml/v2"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/render"
)

// TestRenderedFilesAreCurrent: the dashboards and rules in the repository
// are exactly what the mixin renders with its default config, so an edit to
// either side alone fails CI. `make mixin` brings them back in line.
func TestRenderedFilesAreCurrent(t *testing.T) {
	files := rendered(t, "{}")
	if len(files) < 4 {
		t.Fatalf("rendered %d files, want the dashboards, the rules and the PrometheusRule", len(files))
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", path))
		if err != nil {
			t.Errorf("%s: %v (run make mixin)", path, err)
			continue
		}
		if string(got) != want {
			t.Errorf("%s differs from what mixin/ renders: run make mixin, and edit mixin/, not the rendered file", path)
		}
	}
}

var (
	renderingsMu sync.Mutex
	renderings   = map[string]map[string]string{} // config → its files
)

// rendered renders the mixin with config once for the package's tests, which
// only read it: a rendering takes seconds under the race detector.
func rendered(t *testing.T, config string) map[string]string {
	t.Helper()
	renderingsMu.Lock()
	defer renderingsMu.Unlock()
	if files, ok := renderings[config]; ok {
		return files
	}
	files, err := render.Mixin(config)
	if err != nil {
		t.Fatal(err)
	}
	renderings[config] = files
	return files
}

// alert is an alerting rule, as the rendered rules file holds it.
type alert struct {
	Alert       string
	Expr        string
	Labels      map[string]string
	Annotations map[string]string
}

// renderedAlerts returns the alerting rules of the mixin rendered with
// config, in their order.
func renderedAlerts(t *testing.T, config string) []alert {
	t.Helper()
	files := rendered(t, config)
	var rules struct{ Groups []struct{ Rules []alert } }
	if err := yaml.Unmarshal([]byte(files["alerts/global_stability.rules.yml"]), &rules); err != nil {
		t.Fatal(err)
	}
	var out []alert
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			if r.Alert != "" {
				out = append(out, r)
			}
		}
	}
	return out
}

// TestEveryAlertHasARunbook: each alert's runbook_url points at a section
// of docs/runbooks.md, and that section says what the alert means, how to
// confirm it, what causes it and what to do.
func TestEveryAlertHasARunbook(t *testing.T) {
	alerts := renderedAlerts(t, "{}")
	doc, err := os.ReadFile(filepath.Join("..", "docs", "runbooks.md"))
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]string{} // GitHub's anchor of a "## " heading → its text
	for _, part := range strings.Split("\n"+string(doc), "\n## ")[1:] {
		heading, body, _ := strings.Cut(part, "\n")
		sections[strings.ToLower(strings.TrimSpace(heading))] = body
	}
	for _, a := range alerts {
		url := a.Annotations["runbook_url"]
		base, anchor, ok := strings.Cut(url, "#")
		if !ok || !strings.HasSuffix(base, "/docs/runbooks.md") || anchor != strings.ToLower(a.Alert) {
			t.Errorf("%s: runbook_url %q does not point at its section of docs/runbooks.md", a.Alert, url)
			continue
		}
		body, ok := sections[anchor]
		if !ok {
			t.Errorf("%s: docs/runbooks.md has no section \"## %s\"", a.Alert, a.Alert)
			continue
		}
		for _, part := range []string{"**Meaning**", "**Confirm**", "**Causes**", "**Do**"} {
			if !strings.Contains(body, part) {
				t.Errorf("%s: its runbook section lacks %s", a.Alert, part)
			}
		}
		// The receiver its severity reaches in examples/alertmanager/.
		if want := "**Receiver**: `" + wantReceiver[a.Labels["severity"]] + "` (" + a.Labels["severity"] + ")"; !strings.Contains(body, want) {
			t.Errorf("%s: its runbook section does not say %s", a.Alert, want)
		}
		if a.Annotations["summary"] == "" || a.Annotations["description"] == "" || a.Labels["severity"] == "" {
			t.Errorf("%s: needs a summary, a description and a severity", a.Alert)
		}
	}
	if len(alerts) < 15 {
		t.Errorf("%d alerts, want 15", len(alerts))
	}
}

// TestUnavailableAlertsExpectTheExportersSeries: the alerts that notice an
// input gone missing build the set of series the exporter would export from
// the endpoints' descriptions (endpoints.json). An endpoint spelled
// otherwise than the exporter's would fire on every healthy exporter; one
// left out would never fire.
func TestUnavailableAlertsExpectTheExportersSeries(t *testing.T) {
	var expr string
	for _, a := range renderedAlerts(t, "{}") {
		if a.Alert == "GlobalStabilityAsOfUnavailable" {
			expr = a.Expr
		}
	}
	m := regexp.MustCompile(`endpoint=~"([^"]+)"`).FindStringSubmatch(expr)
	if m == nil {
		t.Fatalf("GlobalStabilityAsOfUnavailable has no endpoint=~ matcher: %s", expr)
	}
	re := regexp.MustCompile("^(?:" + m[1] + ")$") // Prometheus anchors a matcher's regexp
	// Every endpoint whose description exports an as_of, but the overview
	// (it has its own clause), and no other: an endpoint added with an
	// as_of fails here until the alert watches it.
	for _, e := range endpoint.All() {
		wanted := e != endpoint.Overview && slices.Contains(e.Metrics(), endpoint.AsOf)
		if re.MatchString(e.Label) != wanted {
			t.Errorf("GlobalStabilityAsOfUnavailable's endpoint=~ matches %s: %v, want %v (its description exports as_of: %v; the overview has its own clause)", e.Label, !wanted, wanted, slices.Contains(e.Metrics(), endpoint.AsOf))
		}
	}
	if !strings.Contains(expr, `endpoint="`+endpoint.Overview.Label+`"`) {
		t.Errorf("GlobalStabilityAsOfUnavailable does not expect the overview's as_of: %s", expr)
	}
}

// ownSeries are the exporter's series about itself (package collector and
// main); every other global_stability_ series is described by an endpoint.
var ownSeries = []string{
	"global_stability_up", "global_stability_scrape_success", "global_stability_scrape_duration_seconds",
	"global_stability_api_backoff_seconds", "global_stability_label_values_dropped", "global_stability_invalid_values",
	"global_stability_api_requests_total", "global_stability_exporter_build_info", "global_stability_exporter_demo",
	"global_stability_api_received_bytes_total", "global_stability_api_responses_reused_total", "global_stability_exporter_scrapes_total",
	"global_stability_api_rate_limit_limit", "global_stability_api_rate_limit_remaining",
	"global_stability_api_rate_limit_reset_timestamp_seconds", "global_stability_api_rate_limit_window_seconds",
	"global_stability_exporter_config_last_reload_successful", "global_stability_exporter_config_last_reload_success_timestamp_seconds",
}

// TestEverySeriesTheMixinReadsExists: each global_stability_ series a
// panel, a recording rule or an alert reads is one the exporter exports:
// an endpoint description's or its own. (The end-to-end test shows every
// query returning data on a real Prometheus.)
func TestEverySeriesTheMixinReadsExists(t *testing.T) {
	files := rendered(t, "{}")
	known := map[string]bool{"global_stability_exporter": true} // the program's name, in texts
	for _, s := range ownSeries {
		known[s] = true
	}
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			known[m.Name] = true
		}
	}
	for path, text := range files {
		for _, name := range regexp.MustCompile(`\bglobal_stability_[a-z0-9_]+`).FindAllString(text, -1) {
			if !known[name] {
				t.Errorf("%s reads %s, which the exporter does not export", path, name)
			}
		}
	}
}

// TestASelectorAloneIsRefused: a selector of one's own with the default
// exporterSelector would leave the quota, demo and reload alerts and the
// API panels on the default jobs, silently empty; rendering says so.
func TestASelectorAloneIsRefused(t *testing.T) {
	if _, err := render.Mixin(`{selector: 'job="gsx"'}`); err == nil || !strings.Contains(err.Error(), "set exporterSelector as well") {
		t.Errorf("a selector alone renders (error %v), want it refused naming exporterSelector", err)
	}
	if _, err := render.Mixin(`{selector: 'job="gsx"', exporterSelector: 'job="gsx"'}`); err != nil {
		t.Errorf("a selector with its exporterSelector: %v", err)
	}
}
