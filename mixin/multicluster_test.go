// SPDX-License-Identifier: Apache-2.0

package mixin_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/global-stability/global_stability_exporter/internal/testutil/grafana"
	"github.com/global-stability/global_stability_exporter/internal/testutil/render"
)

// multiClusterTests are promtool unit tests of the mixin rendered with
// showMultiCluster, its series as a store receiving two clusters'
// Prometheus servers sees them: each with its cluster label, each target
// a probe with its target label (the README's scrape configuration).
const multiClusterTests = `rule_files: [rules.yml]
evaluation_interval: 1m
tests:
  # Cluster a's exporter down, its probes failing with it: one page, for
  # a's exporter. In cluster b, whose exporter answers, one target's probe
  # failing is that target's page: a's exporter does not silence it.
  - interval: 1m
    input_series:
      - series: 'up{cluster="a",job="global_stability",instance="prod",target="prod"}'
        values: '0x20'
      - series: 'up{cluster="a",job="global_stability_exporter",instance="gse:10110"}'
        values: '0x20'
      - series: 'up{cluster="b",job="global_stability",instance="prod",target="prod"}'
        values: '0x20'
      - series: 'up{cluster="b",job="global_stability_exporter",instance="gse:10110"}'
        values: '1x20'
    alert_rule_test:
      - eval_time: 10m
        alertname: GlobalStabilityExporterDown
        exp_alerts:
          - exp_labels: {severity: critical, cluster: a, job: global_stability_exporter, instance: "gse:10110"}
            exp_annotations:
              summary: "global_stability_exporter gse:10110 is down"
              description: "Prometheus could not scrape gse:10110 for 5m: the exporter is down or unreachable (or, for a target of a targets' file, /probe refused it: a name the file does not hold); every global_stability series of it is absent."
              runbook_url: "https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md#globalstabilityexporterdown"
          - exp_labels: {severity: critical, cluster: b, job: global_stability, instance: prod, target: prod}
            exp_annotations:
              summary: "global_stability_exporter prod is down"
              description: "Prometheus could not scrape prod for 5m: the exporter is down or unreachable (or, for a target of a targets' file, /probe refused it: a name the file does not hold); every global_stability series of it is absent."
              runbook_url: "https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md#globalstabilityexporterdown"

  # Cluster a's exporter gone from its Prometheus's targets while b's is
  # still scraped: absent() would say nothing, the store holding b's.
  - interval: 1m
    input_series:
      - series: 'up{cluster="a",job="global_stability",instance="prod"}'
        values: '1x10 _x20'
      - series: 'up{cluster="b",job="global_stability",instance="prod"}'
        values: '1x30'
    alert_rule_test:
      - eval_time: 8m
        alertname: GlobalStabilityExporterAbsent
      - eval_time: 28m
        alertname: GlobalStabilityExporterAbsent
        exp_alerts:
          - exp_labels: {severity: critical, cluster: a, job: global_stability}
            exp_annotations:
              summary: "No global_stability_exporter target is being scraped in a"
              description: "The Prometheus of a has had no target matching {job=\"global_stability\"} for 10m, after scraping one within the past day: the exporter is gone from service discovery or the scrape configuration."
              runbook_url: "https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md#globalstabilityexporterabsent"

  # A score above the warning in one cluster: its alert, with its cluster.
  - interval: 1m
    input_series:
      - series: 'global_stability_score{cluster="a",job="global_stability",instance="prod"}'
        values: '65x30'
      - series: 'global_stability_score{cluster="b",job="global_stability",instance="prod"}'
        values: '40x30'
    alert_rule_test:
      - eval_time: 25m
        alertname: GlobalStabilityScoreWarning
        exp_alerts:
          - exp_labels: {severity: warning, cluster: a, job: global_stability, instance: prod}
            exp_annotations:
              summary: "Global stability score is 65 (warning above 60)"
              description: "The composite score reported by prod has been above 60 for 15m; lower is more stable. Check which pillar drives it."
              runbook_url: "https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md#globalstabilityscorewarning"
`

// TestMultiClusterAlertsKeepTheCluster: with showMultiCluster, a match
// across series stays within a cluster, and the exporter gone from one
// cluster is noticed while another still has it. promtool runs the
// rendered rules.
func TestMultiClusterAlertsKeepTheCluster(t *testing.T) {
	promtool := lookPath(t, "promtool", "prometheus")
	files, err := render.Mixin(`{showMultiCluster: true}`)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rules.yml"), []byte(files["alerts/global_stability.rules.yml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tests.yml"), []byte(multiClusterTests), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(promtool, "test", "rules", "tests.yml")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}

// TestMultiClusterDashboardsSelectTheCluster: with showMultiCluster, each
// dashboard's first variable after the data source is the cluster, several
// of them at once, every one by default; every other variable's query and
// every panel query selects them, with the label the config names; and
// every series, bar and table row names its cluster, every aggregation
// keeping it, so that prod of two clusters reads as two accounts, in the
// panels of every account and in the row of one (which shows it in each
// cluster).
func TestMultiClusterDashboardsSelectTheCluster(t *testing.T) {
	aggregation := regexp.MustCompile(`\b(?:sum|max|min|avg|count|group) by \(([^)]*)\)`)
	for _, label := range []string{"cluster", "k8s_cluster"} {
		files, err := render.Mixin(`{showMultiCluster: true, clusterLabel: "` + label + `"}`)
		if err != nil {
			t.Fatal(err)
		}
		matcher := label + `=~"$cluster"`
		n := 0
		for path, content := range files {
			if !strings.HasPrefix(path, "dashboards/") {
				continue
			}
			n++
			d, err := grafana.Parse(path, []byte(content))
			if err != nil {
				t.Fatal(err)
			}
			var tmpl struct {
				Templating struct {
					List []struct {
						Name, Definition  string
						Multi, IncludeAll bool
						Current           struct{ Value []string }
					}
				}
			}
			if err := json.Unmarshal([]byte(content), &tmpl); err != nil {
				t.Fatal(err)
			}
			vars := tmpl.Templating.List
			if len(vars) < 3 || vars[0].Name != "datasource" || vars[1].Name != "cluster" {
				t.Errorf("%s (%s): variables %v, want datasource, cluster, then the others", path, label, vars)
				continue
			}
			if !strings.Contains(vars[1].Definition, ", "+label+")") {
				t.Errorf("%s: the cluster variable's query %q does not read the label %s", path, vars[1].Definition, label)
			}
			if v := vars[1]; !v.Multi || !v.IncludeAll || strings.Join(v.Current.Value, ",") != "$__all" {
				t.Errorf("%s: the cluster variable is multi %v, all %v, at %v: want several at once, every one by default", path, v.Multi, v.IncludeAll, v.Current.Value)
			}
			for _, v := range vars[2:] {
				if !strings.Contains(v.Definition, matcher) {
					t.Errorf("%s: variable %s's query %q does not select the cluster", path, v.Name, v.Definition)
				}
			}
			for _, p := range d.AllPanels() {
				for _, target := range p.Targets {
					selections := strings.Count(target.Expr, "{") - strings.Count(target.Expr, "{{")
					if strings.Count(target.Expr, matcher) != selections {
						t.Errorf("%s / %q: %q does not select the cluster in each of its %d selections", path, p.Title, target.Expr, selections)
					}
					if target.Format != "table" && !strings.Contains(target.LegendFormat, "{{"+label+"}}") {
						t.Errorf("%s / %q: the legend %q does not name the cluster", path, p.Title, target.LegendFormat)
					}
					for _, by := range aggregation.FindAllStringSubmatch(target.Expr, -1) {
						if !strings.Contains(by[1], label) {
							t.Errorf("%s / %q: %s aggregates the cluster away", path, p.Title, by[0])
						}
					}
				}
			}
		}
		if n != 2 {
			t.Errorf("%d dashboards rendered, want 2", n)
		}
	}
}
