// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"sigs.k8s.io/yaml"
)

// twoTargets are the values of a release of two API accounts, each with its
// own Secret; apiURL is where both APIs are.
func twoTargets(apiURL string) map[string]any {
	return map[string]any{"targets": []map[string]any{
		{"name": "prod", "apiUrl": apiURL, "existingSecret": "prod-key"},
		{"name": "staging", "apiUrl": apiURL, "existingSecret": "staging-key", "existingSecretKey": "token",
			"settings": map[string]any{"timeout": "20s", "collectors": map[string]any{"briefings": false}}},
	}}
}

// holdsOneOf reports whether each series selection of expr holds the
// namespace and one of the jobs.
func holdsOneOf(expr string, jobs []string, namespace string) bool {
	selections := strings.Count(expr, "{") - 2*strings.Count(expr, "{{")
	jobMatchers := 0
	for _, j := range jobs {
		jobMatchers += strings.Count(expr, fmt.Sprintf("job=%q", j))
	}
	return selections > 0 && jobMatchers == selections && strings.Count(expr, fmt.Sprintf("namespace=%q", namespace)) == selections
}

// TestTargetsScrapeEachTarget: a release of several targets renders the
// exporter's targets' file (each key file in its own Secret's directory),
// one ServiceMonitor endpoint per target (/probe?target=NAME, instance and
// target set to the name) and one for the exporter itself, and rules and
// dashboards that select the probe job or the exporter's own; the real
// exporter, run with the Deployment's args and that file, answers each
// target's probe.
func TestTargetsScrapeEachTarget(t *testing.T) {
	simAddr := freeAddr(t)
	m := mustTemplate(t, "gse", "monitoring", twoTargets("http://"+simAddr))
	pod := only(t, "Deployment", m.deployments).Spec.Template.Spec
	c := pod.Containers[0]
	if !slices.Contains(c.Args, "--config.file=/etc/global-stability/config/targets.yml") || slices.ContainsFunc(c.Args, func(a string) bool {
		return strings.HasPrefix(a, "--api.url") || strings.HasPrefix(a, "--api.key-file")
	}) {
		t.Errorf("args %q: want --config.file and no --api.url or --api.key-file", c.Args)
	}
	cm, ok := m.configMaps["gse-global-stability-exporter-targets"]
	if !ok {
		t.Fatal("no targets ConfigMap")
	}
	var file struct {
		Targets []map[string]any `json:"targets"`
	}
	if err := yaml.UnmarshalStrict([]byte(cm.Data["targets.yml"]), &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Targets) != 2 || file.Targets[0]["api_key_file"] != "/etc/global-stability/targets/prod/api-key" ||
		file.Targets[1]["api_key_file"] != "/etc/global-stability/targets/staging/token" || file.Targets[1]["timeout"] != "20s" {
		t.Errorf("targets.yml %+v", file.Targets)
	}
	secrets := map[string]string{} // mount path → Secret
	for _, vm := range c.VolumeMounts {
		for _, v := range pod.Volumes {
			if v.Name == vm.Name && v.Secret != nil {
				if vm.SubPath != "" || !vm.ReadOnly || v.Secret.DefaultMode == nil || *v.Secret.DefaultMode != 0o440 {
					t.Errorf("key volume %s: subPath %q, read-only %v, mode %v", vm.Name, vm.SubPath, vm.ReadOnly, v.Secret.DefaultMode)
				}
				secrets[vm.MountPath] = v.Secret.SecretName
			}
		}
	}
	if secrets["/etc/global-stability/targets/prod"] != "prod-key" || secrets["/etc/global-stability/targets/staging"] != "staging-key" {
		t.Errorf("key Secrets mounted %v, want each target's own", secrets)
	}
	if pod.Volumes == nil || only(t, "Deployment", m.deployments).Spec.Template.Annotations["checksum/targets"] == "" {
		t.Error("no checksum of the targets' file on the pod: a new file would never reach the exporter")
	}

	sm := only(t, "ServiceMonitor", m.serviceMonitors)
	eps := sm.Spec.Endpoints
	if len(eps) != 3 {
		t.Fatalf("%d ServiceMonitor endpoints, want one per target and one for the exporter", len(eps))
	}
	for i, name := range []string{"prod", "staging"} {
		ep := eps[i]
		labels := map[string]string{}
		for _, r := range ep.RelabelConfigs {
			if r.Replacement != nil {
				labels[r.TargetLabel] = *r.Replacement
			}
		}
		if ep.Path != "/probe" || !slices.Equal(ep.Params["target"], []string{name}) || labels["instance"] != name || labels["target"] != name || labels["job"] != "gse-global-stability-exporter" {
			t.Errorf("endpoint %d: path %s, params %v, labels %v", i, ep.Path, ep.Params, labels)
		}
	}
	if own := eps[2]; own.Path != "/metrics" || own.RelabelConfigs[0].Replacement == nil || *own.RelabelConfigs[0].Replacement != "gse-global-stability-exporter-exporter" {
		t.Errorf("the exporter's own endpoint: %+v", own)
	}

	jobs := []string{"gse-global-stability-exporter", "gse-global-stability-exporter-exporter"}
	for _, g := range only(t, "PrometheusRule", m.prometheusRules).Spec.Groups {
		for _, r := range g.Rules {
			if expr := r.Expr.String(); !holdsOneOf(expr, jobs, "monitoring") {
				t.Errorf("rule %s%s selects neither job of the release: %s", r.Alert, r.Record, expr)
			}
		}
	}
	for name, cm := range m.configMaps {
		for key, text := range cm.Data {
			if !strings.HasSuffix(key, ".json") {
				continue
			}
			var d map[string]any
			if err := json.Unmarshal([]byte(text), &d); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, q := range dashboardQueries(d) {
				if !holdsOneOf(q, jobs, "monitoring") {
					t.Errorf("%s: %s selects neither job of the release", key, q)
				}
				if strings.Contains(q, `job="gse-global-stability-exporter-exporter"`) && strings.Contains(q, `instance=~`) && !strings.Contains(q, `target=~"$instance"`) {
					t.Errorf("%s: %s picks the exporter's own series by instance: with targets they carry a target label", key, q)
				}
			}
		}
	}

	if testing.Short() {
		return
	}
	// The real exporter, as the pod runs it: every key file where the
	// targets' file looks for it only if the Secret's item lands there.
	keys := secretData{"prod-key": {"api-key": "gsk_prod_0123456789abcdef"}, "staging-key": {"token": "gsk_staging_0123456789abcdef"}}
	startSimulatorAt(t, simAddr, "gsk_prod_0123456789abcdef", "gsk_staging_0123456789abcdef")
	addr, log := runPod(t, m, keys, nil)
	for _, name := range []string{"prod", "staging"} {
		if up := sample(t, "http://"+addr+"/probe?target="+name, "global_stability_up", log); up != "1" {
			t.Errorf("/probe?target=%s: global_stability_up %s\n%s", name, up, log)
		}
	}
}

// targetNames walk the names the exporter takes for a target (a letter
// or digit, then letters, digits, '_', '.' and '-', at most 63): each kind
// of character, first and last, the shortest and the longest, and names
// that differ only where a Kubernetes name cannot (case, '.', '_' and '-',
// the 51st character and on).
var targetNames = []string{"0", "Z", "prod.eu", "prod_eu", "prod-eu", "Prod-EU", "a--", "a__", "a..", "9._-Q",
	strings.Repeat("x", 63), strings.Repeat("x", 62) + "y"}

// TestEveryTargetNameRuns: whatever the targets' names, the Deployment is
// one the API server accepts, each target's key in a volume of its own,
// the same with and without the operator's kinds served; and the real
// exporter, run as the pod runs it, answers each target's probe.
func TestEveryTargetNameRuns(t *testing.T) {
	simAddr := freeAddr(t)
	var targets []map[string]any
	keys := secretData{}
	for i, name := range targetNames {
		secret := fmt.Sprintf("key-%d", i)
		targets = append(targets, map[string]any{"name": name, "apiUrl": "http://" + simAddr, "existingSecret": secret})
		keys[secret] = map[string]string{"api-key": chartTestKey}
	}
	var m manifests
	var deployments []*appsv1.Deployment
	for _, apis := range [][]string{nil, operatorAPIs} {
		var err error
		if m, err = helmTemplateWith(t, apis, "gse", "monitoring", map[string]any{"targets": targets}); err != nil {
			t.Fatal(err)
		}
		deployments = append(deployments, only(t, "Deployment", m.deployments))
	}
	if !equality.Semantic.DeepEqual(deployments[0], deployments[1]) {
		t.Error("the Deployment differs with the operator's kinds served")
	}
	if pod := deployments[0].Spec.Template.Spec; len(pod.Volumes) != len(targetNames)+1 || len(pod.Containers[0].VolumeMounts) != len(targetNames)+1 {
		t.Errorf("%d volumes, %d mounts: want the targets' file and one per target", len(pod.Volumes), len(pod.Containers[0].VolumeMounts))
	}

	if testing.Short() {
		return
	}
	startSimulatorAt(t, simAddr, chartTestKey)
	addr, log := runPod(t, m, keys, nil)
	for _, name := range targetNames {
		if up := sample(t, "http://"+addr+"/probe?target="+url.QueryEscape(name), "global_stability_up", log); up != "1" {
			t.Errorf("/probe?target=%s: global_stability_up %s\n%s", name, up, log)
		}
	}
}

// TestTargetsValues: what cannot work with targets fails helm, naming it.
func TestTargetsValues(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"targets": []map[string]any{{"name": "a", "apiUrl": "https://a.example.com", "existingSecret": "k"}}, "apiUrl": "https://b.example.com"}, "unset apiUrl"},
		{map[string]any{"targets": []map[string]any{{"name": "a b", "apiUrl": "https://a.example.com", "existingSecret": "k"}}}, `targets[0].name "a b"`},
		{map[string]any{"targets": []map[string]any{{"name": "-a", "apiUrl": "https://a.example.com", "existingSecret": "k"}}}, `targets[0].name "-a"`},
		{map[string]any{"targets": []map[string]any{{"name": strings.Repeat("x", 64), "apiUrl": "https://a.example.com", "existingSecret": "k"}}}, `targets[0].name "xxxx`},
		{map[string]any{"targets": []map[string]any{{"name": "a", "apiUrl": "https://a.example.com", "existingSecret": "k"}, {"name": "a", "apiUrl": "https://a.example.com", "existingSecret": "k"}}}, `targets[1].name "a": another target has it`},
		{map[string]any{"targets": []map[string]any{{"name": "a", "apiUrl": "a.example.com", "existingSecret": "k"}}}, `targets[0] (a).apiUrl "a.example.com"`},
		{map[string]any{"targets": []map[string]any{{"name": "a", "apiUrl": "https://a.example.com"}}}, "targets[0] (a).existingSecret is required"},
	} {
		_, err := helmTemplate(t, "gse", "monitoring", tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want an error with %q", tc.values, err, tc.want)
		}
	}
}
