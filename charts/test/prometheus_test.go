// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"sigs.k8s.io/yaml"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/grafana"
)

// TestReleaseOnRealPrometheus puts one release under a real Prometheus the
// way the prometheus-operator would: the exporter (in demo mode) scraped
// with the target labels the operator gives a ServiceMonitor's targets
// (job, namespace, service, endpoint=<port name>, ...) followed by the
// ServiceMonitor's own relabelings, and the PrometheusRule's groups as the
// rule file. Every rule must load and evaluate, every dashboard query must
// return data, and the exporter's endpoint label must arrive as itself,
// not as exported_endpoint.
func TestReleaseOnRealPrometheus(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Prometheus")
	}
	prometheus := tool(t, "prometheus")
	const release, namespace = "prod", "risk"
	m := mustTemplate(t, release, namespace, required)
	job := release + "-global-stability-exporter"

	dir := t.TempDir()
	exporterAddr := freeAddr(t)
	start(t, binary(t, "exporter"), nil, exporterAddr, "--demo", "--web.listen-address="+exporterAddr)

	// The rule file: the PrometheusRule's groups, as the operator writes them.
	rule := only(t, "PrometheusRule", m.prometheusRules)
	rules, err := yaml.Marshal(map[string]any{"groups": rule.Spec.Groups})
	if err != nil {
		t.Fatal(err)
	}
	rulesFile := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rulesFile, rules, 0o644); err != nil {
		t.Fatal(err)
	}

	// The scrape: the operator's target labels, then the ServiceMonitor's.
	ep := only(t, "ServiceMonitor", m.serviceMonitors).Spec.Endpoints[0]
	relabel := []map[string]any{
		{"target_label": "job", "replacement": job}, // the Service's name
		{"target_label": "namespace", "replacement": namespace},
		{"target_label": "service", "replacement": job},
		{"target_label": "pod", "replacement": job + "-5d9c7b-x2x4q"},
		{"target_label": "container", "replacement": "exporter"},
		{"target_label": "endpoint", "replacement": ep.Port},
	}
	for _, r := range ep.RelabelConfigs {
		relabel = append(relabel, promRelabel(r))
	}
	config, _ := json.Marshal(map[string]any{
		"global":     map[string]any{"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
		"rule_files": []string{rulesFile},
		"scrape_configs": []any{map[string]any{
			"job_name":        fmt.Sprintf("serviceMonitor/%s/%s/0", namespace, job),
			"static_configs":  []any{map[string]any{"targets": []string{exporterAddr}}},
			"relabel_configs": relabel,
		}},
	})
	configFile := filepath.Join(dir, "prometheus.yml") // JSON is YAML
	if err := os.WriteFile(configFile, config, 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	log := start(t, prometheus, nil, promAddr, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	base := "http://" + promAddr

	waitForQuery(t, base, `count_over_time(global_stability_up[1m]) >= 5 and on() count(global_stability:api_requests:rate5m) > 0`, func(n int) bool { return n > 0 }, log)

	selector := fmt.Sprintf(`job=%q, namespace=%q`, job, namespace)
	if n, _ := promQuery(base, `global_stability_scrape_success{`+selector+`, endpoint="global-stability"}`); n != 1 {
		t.Errorf("global_stability_scrape_success{endpoint=\"global-stability\"}: %d series, want 1", n)
	}
	if n, _ := promQuery(base, `{exported_endpoint!=""}`); n != 0 {
		t.Errorf("%d series carry exported_endpoint: the operator's endpoint label displaced the exporter's", n)
	}

	// Every rule loaded and evaluates.
	loaded := healthyRules(t, base)
	if want := len(strings.Split(mixinRuleNames(t), ",")); loaded != want {
		t.Errorf("Prometheus loaded %d rules, want %d", loaded, want)
	}

	// Every panel query of the release's dashboards returns data.
	checked := 0
	for _, cm := range m.configMaps {
		for key, text := range cm.Data {
			d, err := grafana.Parse(key, []byte(text))
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range d.AllPanels() {
				for _, tg := range p.Targets {
					for _, pillar := range endpoint.Pillars {
						vars := map[string]string{"instance": strings.ReplaceAll(regexp.QuoteMeta(exporterAddr), `\`, `\\`), "pillar": string(pillar), "indicator": ".+", "datasource": "prometheus"}
						expr := grafana.Interpolate(tg.Expr, vars)
						n, err := promQuery(base, expr)
						switch {
						case err != nil:
							t.Errorf("%s / %q: %s does not evaluate: %v", key, p.Title, expr, err)
						case n == 0:
							t.Errorf("%s / %q: %s returns no data", key, p.Title, expr)
						}
						checked++
						if !strings.Contains(tg.Expr, "$pillar") {
							break
						}
					}
				}
			}
		}
	}
	if checked < 20 {
		t.Errorf("only %d panel queries checked", checked)
	}
	t.Logf("%d rules loaded, %d panel queries returned data", loaded, checked)
}

// promRelabel turns a ServiceMonitor relabeling into Prometheus' own
// relabel_config, as the operator does.
func promRelabel(r monitoringv1.RelabelConfig) map[string]any {
	out := map[string]any{}
	if len(r.SourceLabels) > 0 {
		out["source_labels"] = r.SourceLabels
	}
	if r.Separator != nil {
		out["separator"] = *r.Separator
	}
	if r.TargetLabel != "" {
		out["target_label"] = r.TargetLabel
	}
	if r.Regex != "" {
		out["regex"] = r.Regex
	}
	if r.Modulus != 0 {
		out["modulus"] = r.Modulus
	}
	if r.Replacement != nil {
		out["replacement"] = *r.Replacement
	}
	if r.Action != "" {
		out["action"] = strings.ToLower(r.Action)
	}
	return out
}

func promGet(base, path string, params url.Values, into any) error {
	resp, err := http.Get(base + path + "?" + params.Encode())
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return json.NewDecoder(resp.Body).Decode(into)
}

// promQuery evaluates expr now and returns how many series came back.
// waitForQuery waits up to a minute for expr to answer a number of series
// ok accepts, failing the test with Prometheus' log if it never does.
func waitForQuery(t *testing.T, base, expr string, ok func(int) bool, log fmt.Stringer) {
	t.Helper()
	deadline, tick := time.After(time.Minute), time.NewTicker(250*time.Millisecond)
	defer tick.Stop()
	for {
		n, err := promQuery(base, expr)
		if err == nil && ok(n) {
			return
		}
		select {
		case <-deadline:
			t.Fatalf("%s: %d series (error %v) after a minute\n%s", expr, n, err, log)
		case <-tick.C:
		}
	}
}

// healthyRules counts the rules Prometheus loaded, failing the test for
// each that does not evaluate.
func healthyRules(t *testing.T, base string) int {
	t.Helper()
	var resp struct {
		Data struct {
			Groups []struct {
				Rules []struct{ Name, Health, LastError string }
			}
		}
	}
	if err := promGet(base, "/api/v1/rules", nil, &resp); err != nil {
		t.Fatal(err)
	}
	loaded := 0
	for _, g := range resp.Data.Groups {
		for _, r := range g.Rules {
			loaded++
			if r.Health != "ok" || r.LastError != "" {
				t.Errorf("rule %s: health %q, error %q", r.Name, r.Health, r.LastError)
			}
		}
	}
	return loaded
}

func promQuery(base, expr string) (int, error) {
	var r struct {
		Status, Error string
		Data          struct {
			ResultType string
			Result     json.RawMessage
		}
	}
	if err := promGet(base, "/api/v1/query", url.Values{"query": {expr}}, &r); err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s", r.Error)
	}
	var series []json.RawMessage
	if err := json.Unmarshal(r.Data.Result, &series); err != nil {
		return 1, nil // a scalar
	}
	return len(series), nil
}
