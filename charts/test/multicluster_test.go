// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestClusterLabelPassesThrough: with clusterLabel, the release's rules and
// dashboards are the mixin's multi-cluster rendering with that label: the
// exporter-down match stays within a cluster, and every dashboard query
// and variable (but the cluster's own and the data source) selects the
// chosen cluster; still the release's selector everywhere. A value that
// is no label name fails, naming clusterLabel.
func TestClusterLabelPassesThrough(t *testing.T) {
	m := mustTemplate(t, "gse", "monitoring", withValues(required, map[string]any{"clusterLabel": "k8s_cluster"}))
	checkRelease(t, m, "gse-global-stability-exporter", "monitoring")
	rule := only(t, "PrometheusRule", m.prometheusRules)
	found := false
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			if r.Alert == "GlobalStabilityExporterDown" {
				found = strings.Contains(r.Expr.String(), "on (k8s_cluster)")
			}
		}
	}
	if !found {
		t.Error("GlobalStabilityExporterDown does not match its exporter within the cluster: on (k8s_cluster)")
	}
	const matcher = `k8s_cluster=~"$cluster"`
	dashboards := 0
	for name, cm := range m.configMaps {
		for key, text := range cm.Data {
			if !strings.HasSuffix(key, ".json") {
				continue
			}
			dashboards++
			var d map[string]any
			if err := json.Unmarshal([]byte(text), &d); err != nil {
				t.Fatalf("ConfigMap %s: %s: %v", name, key, err)
			}
			for _, q := range dashboardQueries(d) {
				if strings.HasPrefix(q, "label_values(") && strings.HasSuffix(q, ", k8s_cluster)") {
					continue // the cluster variable itself
				}
				if !holdsSelector(q, matcher) {
					t.Errorf("%s: %s does not select the cluster", key, q)
				}
			}
			vars := fmt.Sprint(d["templating"])
			if !strings.Contains(vars, "name:cluster") {
				t.Errorf("%s has no cluster variable", key)
			}
		}
	}
	if dashboards != 2 {
		t.Errorf("%d dashboards, want 2", dashboards)
	}

	// Without it, one Prometheus: no cluster anywhere.
	plain := mustTemplate(t, "gse", "monitoring", required)
	all, _ := json.Marshal(plain)
	if strings.Contains(string(all), `$cluster`) {
		t.Error("without clusterLabel, a dashboard selects a cluster")
	}

	_, err := helmTemplate(t, "gse", "monitoring", withValues(required, map[string]any{"clusterLabel": "my-cluster"}))
	if err == nil || !strings.Contains(err.Error(), `clusterLabel "my-cluster" is not a Prometheus label name`) {
		t.Errorf("clusterLabel=my-cluster: %v, want an error naming the value", err)
	}
}
