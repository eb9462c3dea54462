// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"slices"
	"strings"
	"testing"
)

// TestAPlainClusterGetsNoOperatorKinds: with only apiUrl and existingSecret,
// the chart installs on a cluster without the prometheus-operator (no
// ServiceMonitor or PrometheusRule, which it could not create) and on one
// with it (both); true renders them for `helm template` without the
// cluster's API versions (a GitOps tool), false never; another value
// fails, naming it.
func TestAPlainClusterGetsNoOperatorKinds(t *testing.T) {
	kinds := func(m manifests) string {
		k := slices.Clone(m.kinds)
		slices.Sort(k)
		return strings.Join(k, ",")
	}
	const plain = "ConfigMap,ConfigMap,Deployment,Service,ServiceAccount"
	const withOperator = "ConfigMap,ConfigMap,Deployment,PrometheusRule,Service,ServiceAccount,ServiceMonitor"
	for _, tc := range []struct {
		name   string
		apis   []string
		values map[string]any
		want   string
	}{
		{"defaults, a plain cluster", nil, nil, plain},
		{"defaults, a cluster with the operator", operatorAPIs, nil, withOperator},
		{"only ServiceMonitors served", operatorAPIs[:1], nil, "ConfigMap,ConfigMap,Deployment,Service,ServiceAccount,ServiceMonitor"},
		{"forced, helm template without API versions", nil, map[string]any{"serviceMonitor.enabled": true, "prometheusRule.enabled": true}, withOperator},
		{"forced as strings", nil, map[string]any{"serviceMonitor.enabled": "true", "prometheusRule.enabled": "true"}, withOperator},
		{"off on a cluster with the operator", operatorAPIs, map[string]any{"serviceMonitor.enabled": false, "prometheusRule.enabled": false}, plain},
	} {
		t.Run(tc.name, func(t *testing.T) {
			values := map[string]any{}
			for k, v := range required {
				values[k] = v
			}
			for k, v := range tc.values {
				values[k] = v
			}
			m, err := helmTemplateWith(t, tc.apis, "gse", "monitoring", values)
			if err != nil {
				t.Fatal(err)
			}
			if got := kinds(m); got != tc.want {
				t.Errorf("rendered %s, want %s", got, tc.want)
			}
		})
	}
	_, err := helmTemplateWith(t, nil, "gse", "monitoring", map[string]any{"apiUrl": "https://api.example.com", "existingSecret": "k", "serviceMonitor.enabled": "yes"})
	if err == nil || !strings.Contains(err.Error(), `serviceMonitor.enabled is "yes": want auto`) {
		t.Errorf("serviceMonitor.enabled=yes: %v, want an error naming the value", err)
	}
}
