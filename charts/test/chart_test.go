// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// required are the only values a real install needs.
var required = map[string]any{"apiUrl": "https://api.example.com", "existingSecret": "gse-key"}

// TestHelmLint: helm's own checks, strict (warnings fail), with the
// required values and in demo mode.
func TestHelmLint(t *testing.T) {
	helm := tool(t, "helm")
	for _, set := range [][]string{
		{"--set", "apiUrl=https://api.example.com", "--set", "existingSecret=k"},
		{"--set", "demo=true"},
	} {
		out, err := execOutput(helm, append([]string{"lint", "--strict", chartDir}, set...)...)
		if err != nil {
			t.Errorf("helm lint --strict %v: %v\n%s", set, err, out)
		}
	}
}

// TestDefaults: with only apiUrl and existingSecret, the chart renders a
// complete, locked-down exporter that reads the key from the Secret as a
// file, is scraped by a ServiceMonitor and alerts and draws through the
// mixin's rules and dashboards.
func TestDefaults(t *testing.T) {
	m := mustTemplate(t, "gse", "monitoring", required)
	slices.Sort(m.kinds)
	if got, want := strings.Join(m.kinds, ","), "ConfigMap,ConfigMap,Deployment,PrometheusRule,Service,ServiceAccount,ServiceMonitor"; got != want {
		t.Errorf("rendered %s, want %s (no Secret of the chart's own with existingSecret, no NetworkPolicy unless asked)", got, want)
	}
	d := only(t, "Deployment", m.deployments)
	if d.Name != "gse-global-stability-exporter" || d.Namespace != "monitoring" {
		t.Errorf("Deployment %s/%s", d.Namespace, d.Name)
	}
	pod := d.Spec.Template.Spec
	c := pod.Containers[0]

	// The image: the chart's appVersion, which is the exporter's VERSION.
	version := strings.TrimSpace(string(repoFile(t, "VERSION")))
	if c.Image != "ghcr.io/global-stability/global-stability-exporter:"+version {
		t.Errorf("image %q, want the tag %s (appVersion = VERSION)", c.Image, version)
	}

	// The key: a file from the Secret, never a flag value or a variable.
	if !slices.Contains(c.Args, "--api.url=https://api.example.com") || !slices.Contains(c.Args, "--api.key-file=/etc/global-stability/api-key") {
		t.Errorf("args %q lack --api.url or --api.key-file", c.Args)
	}
	for _, e := range c.Env {
		if strings.Contains(e.Name, "KEY") {
			t.Errorf("the key reaches the container as the variable %s: it must come as a file", e.Name)
		}
	}
	if len(pod.Volumes) != 1 || pod.Volumes[0].Secret == nil || pod.Volumes[0].Secret.SecretName != "gse-key" {
		t.Fatalf("volumes %+v, want the Secret gse-key", pod.Volumes)
	}
	// Readable by the exporter's group (fsGroup), writable and executable
	// by nobody: 0440, which YAML must be given in octal.
	if m := pod.Volumes[0].Secret.DefaultMode; m == nil || *m != 0o440 {
		t.Errorf("the key file's mode %v, want 0440", m)
	}
	if items := pod.Volumes[0].Secret.Items; len(items) != 1 || items[0].Key != "api-key" || items[0].Path != "api-key" {
		t.Errorf("the Secret's items %+v, want its entry api-key as the file api-key", items)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != "/etc/global-stability" || !c.VolumeMounts[0].ReadOnly || c.VolumeMounts[0].SubPath != "" {
		t.Errorf("volume mounts %+v: want the Secret read-only at /etc/global-stability, not by subPath (which never sees a new key)", c.VolumeMounts)
	}

	// Locked down: non-root, read-only root file system, nothing to escalate.
	psc, sc := pod.SecurityContext, c.SecurityContext
	switch {
	case psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot:
		t.Error("the pod may run as root")
	case psc.SeccompProfile == nil || psc.SeccompProfile.Type != "RuntimeDefault":
		t.Error("no RuntimeDefault seccomp profile")
	case sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem:
		t.Error("the root file system is writable")
	case sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation:
		t.Error("privilege escalation allowed")
	case sc.Capabilities == nil || len(sc.Capabilities.Drop) != 1 || sc.Capabilities.Drop[0] != "ALL" || len(sc.Capabilities.Add) != 0:
		t.Errorf("capabilities %+v, want all dropped", sc.Capabilities)
	}
	if pod.AutomountServiceAccountToken == nil || *pod.AutomountServiceAccountToken {
		t.Error("the service account token is mounted: the exporter never talks to the Kubernetes API")
	}
	if pod.EnableServiceLinks == nil || *pod.EnableServiceLinks {
		t.Error("service links on: <SERVICE>_PORT variables would sit beside the exporter's GLOBAL_STABILITY_* ones")
	}

	// Probes on the landing page, not /metrics (which calls the API).
	for name, p := range map[string]any{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		b, _ := json.Marshal(p)
		if !strings.Contains(string(b), `"httpGet":{"path":"/","port":"metrics"}`) {
			t.Errorf("%s probe %s, want GET / on the metrics port", name, b)
		}
	}
	if len(c.Ports) != 1 || c.Ports[0].Name != "metrics" || c.Ports[0].ContainerPort != 10110 || !slices.Contains(c.Args, "--web.listen-address=:10110") {
		t.Errorf("ports %+v, args %q: want the exporter on 10110, named metrics", c.Ports, c.Args)
	}

	// Resources and GOMEMLIMIT: those of the kustomize example, which
	// bench/RESULTS.md sets.
	example := kustomizeExample(t)
	ec := only(t, "Deployment", example.deployments).Spec.Template.Spec.Containers[0]
	if !c.Resources.Limits.Memory().Equal(*ec.Resources.Limits.Memory()) || !c.Resources.Requests.Memory().Equal(*ec.Resources.Requests.Memory()) || !c.Resources.Requests.Cpu().Equal(*ec.Resources.Requests.Cpu()) {
		t.Errorf("resources %v, the kustomize example's %v: keep them from the same bench row", c.Resources, ec.Resources)
	}
	if envValue(c.Env, "GOMEMLIMIT") != envValue(ec.Env, "GOMEMLIMIT") || envValue(c.Env, "GOMEMLIMIT") == "" {
		t.Errorf("GOMEMLIMIT %q, the kustomize example's %q", envValue(c.Env, "GOMEMLIMIT"), envValue(ec.Env, "GOMEMLIMIT"))
	}

	// The Service selects the pod; the ServiceMonitor selects the Service.
	svc := only(t, "Service", m.services)
	for k, v := range svc.Spec.Selector {
		if d.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the pod does not carry", k, v)
		}
	}
	sm := only(t, "ServiceMonitor", m.serviceMonitors)
	for k, v := range sm.Spec.Selector.MatchLabels {
		if svc.Labels[k] != v {
			t.Errorf("the ServiceMonitor selects %s=%s, which the Service does not carry", k, v)
		}
	}
	if ep := sm.Spec.Endpoints; len(ep) != 1 || ep[0].Port != "metrics" || string(ep[0].Interval) != "60s" || string(ep[0].ScrapeTimeout) != "20s" {
		t.Errorf("ServiceMonitor endpoints %+v", ep)
	}
	checkRelease(t, m, "gse-global-stability-exporter", "monitoring")
}

// checkRelease: the ServiceMonitor labels the release's series as its rules
// and dashboards select them, every rule expression and dashboard query
// selects exactly them, and the exporter's own endpoint label survives the
// operator's target label of the same name.
func checkRelease(t *testing.T, m manifests, job, namespace string) {
	t.Helper()
	selector := fmt.Sprintf(`job=%q, namespace=%q`, job, namespace)
	sm := only(t, "ServiceMonitor", m.serviceMonitors)
	rl := sm.Spec.Endpoints[0].RelabelConfigs
	if len(rl) < 2 || rl[0].TargetLabel != "job" || rl[0].Replacement == nil || *rl[0].Replacement != job {
		t.Errorf("the ServiceMonitor's first relabeling %+v, want job=%s", rl, job)
	}
	if len(rl) < 2 || strings.ToLower(rl[1].Action) != "labeldrop" || rl[1].Regex != "endpoint" {
		t.Errorf("the ServiceMonitor's relabelings %+v do not drop the operator's endpoint target label: the exporter's endpoint label would become exported_endpoint", rl)
	}
	if sm.Namespace != namespace {
		t.Errorf("ServiceMonitor in %q, want %q (the namespace label of the series)", sm.Namespace, namespace)
	}

	rule := only(t, "PrometheusRule", m.prometheusRules)
	var names []string
	for _, g := range rule.Spec.Groups {
		for _, r := range g.Rules {
			expr := r.Expr.String()
			names = append(names, r.Alert+r.Record)
			if !holdsSelector(expr, selector) {
				t.Errorf("rule %s%s does not select %s in each selection: %s", r.Alert, r.Record, selector, expr)
			}
		}
	}
	if want := mixinRuleNames(t); strings.Join(names, ",") != want {
		t.Errorf("the PrometheusRule holds %s, the mixin's rules file %s", names, want)
	}

	dashboards := 0
	for name, cm := range m.configMaps {
		for key, text := range cm.Data {
			if !strings.HasSuffix(key, ".json") {
				continue
			}
			dashboards++
			var d map[string]any
			if err := json.Unmarshal([]byte(text), &d); err != nil {
				t.Fatalf("ConfigMap %s: %s is not JSON: %v", name, key, err)
			}
			queries := dashboardQueries(d)
			if len(queries) < 5 {
				t.Errorf("%s: only %d queries found", key, len(queries))
			}
			for _, q := range queries {
				if !holdsSelector(q, selector) {
					t.Errorf("%s: query %s does not select %s", key, q, selector)
				}
			}
		}
	}
	if dashboards != 2 {
		t.Errorf("%d dashboards, want the overview and the pillar", dashboards)
	}
	all, _ := json.Marshal(m)
	if strings.Contains(string(all), "__GSE_") {
		t.Error("a placeholder of files/ is left in the rendering")
	}
}

// MarshalJSON lets a whole rendering be searched as text.
func (m manifests) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{m.deployments, m.services, m.serviceAccounts, m.secrets, m.configMaps, m.networkPolicies, m.serviceMonitors, m.prometheusRules})
}

// holdsSelector reports whether each matcher of selector appears once per
// series selection (each "{" that is not a template's "{{") of expr.
func holdsSelector(expr, selector string) bool {
	selections := strings.Count(expr, "{") - 2*strings.Count(expr, "{{")
	if selections == 0 {
		return false
	}
	for _, matcher := range strings.Split(selector, ", ") {
		if strings.Count(expr, matcher) != selections {
			return false
		}
	}
	return true
}

// dashboardQueries returns every PromQL query of a dashboard: panel
// targets, in rows too, and the template variables' queries.
func dashboardQueries(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && (k == "expr" || (k == "query" && strings.Contains(s, "global_stability"))) {
				out = append(out, s)
			}
			out = append(out, dashboardQueries(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, dashboardQueries(x)...)
		}
	}
	return out
}

// mixinRuleNames lists the rules of alerts/global_stability.rules.yml, the
// mixin's rendering with its default selector.
func mixinRuleNames(t *testing.T) string {
	t.Helper()
	var file struct {
		Groups []struct {
			Rules []struct{ Alert, Record string }
		}
	}
	if err := yaml.Unmarshal(repoFile(t, "alerts/global_stability.rules.yml"), &file); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, g := range file.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert+r.Record)
		}
	}
	return strings.Join(names, ",")
}

func envValue(env []corev1.EnvVar, name string) string {
	for _, e := range env {
		if e.Name == name {
			return e.Value
		}
	}
	return ""
}

// TestTwoReleasesNeverShareAlerts: two releases, in one namespace or with
// one name in two, share no object name, no series, no dashboard UID, title
// or file: one's alerts never fire on the other's data.
func TestTwoReleasesNeverShareAlerts(t *testing.T) {
	type release struct{ name, namespace string }
	releases := []release{{"prod", "risk"}, {"staging", "risk"}, {"prod", "other"}}
	seen := map[string]release{}
	claim := func(what string, r release) {
		if prev, ok := seen[what]; ok && prev != r {
			t.Errorf("%v and %v share %s", prev, r, what)
		}
		seen[what] = r
	}
	for _, r := range releases {
		m := mustTemplate(t, r.name, r.namespace, required)
		job := r.name + "-global-stability-exporter"
		checkRelease(t, m, job, r.namespace)
		for name, cm := range m.configMaps {
			claim("ConfigMap "+cm.Namespace+"/"+name, r)
			for key, text := range cm.Data {
				claim("dashboard file "+cm.Annotations["grafana_folder"]+"/"+key, r)
				var d struct{ UID, Title string }
				if err := json.Unmarshal([]byte(text), &d); err != nil {
					t.Fatal(err)
				}
				if d.UID == "" || len(d.UID) > 40 {
					t.Errorf("dashboard UID %q: Grafana wants 1 to 40 characters", d.UID)
				}
				claim("dashboard UID "+d.UID, r)
				claim("dashboard title "+d.Title, r)
			}
		}
		for name, d := range m.deployments {
			claim("Deployment "+d.Namespace+"/"+name, r)
		}
		claim(fmt.Sprintf("series job=%q namespace=%q", job, r.namespace), r)
	}
}

// TestRequiredValues: a release that could not work stops helm with a
// message naming the value to set.
func TestRequiredValues(t *testing.T) {
	for _, tc := range []struct {
		values map[string]any
		want   string
	}{
		{map[string]any{"existingSecret": "k"}, "apiUrl is required"},
		{map[string]any{"apiUrl": "https://api.example.com"}, "existingSecret="},
		{map[string]any{"apiUrl": "api.example.com", "existingSecret": "k"}, "needs its scheme"},
		{map[string]any{"apiUrl": "https://api.example.com", "existingSecret": "k", "apiKey": "x"}, "not both"},
		{map[string]any{"demo": true, "apiUrl": "https://api.example.com"}, "demo: true"},
	} {
		got := errorOf(helmTemplate(t, "r", "ns", tc.values))
		if !strings.Contains(got, tc.want) {
			t.Errorf("values %v: error %q, want one saying %q", tc.values, got, tc.want)
		}
	}

	// demo needs nothing, and reads no Secret.
	m := mustTemplate(t, "r", "ns", map[string]any{"demo": true})
	pod := only(t, "Deployment", m.deployments).Spec.Template.Spec
	if args := pod.Containers[0].Args; !slices.Contains(args, "--demo") || len(pod.Volumes) != 0 {
		t.Errorf("demo: args %q, volumes %+v", args, pod.Volumes)
	}

	// apiKey: the chart's own Secret, read the same way; never in the pod spec.
	m = mustTemplate(t, "r", "ns", map[string]any{"apiUrl": "https://api.example.com", "apiKey": "trial-key-0123456789"})
	secret := only(t, "Secret", m.secrets)
	d := only(t, "Deployment", m.deployments)
	if string(secret.Data["api-key"]) != "trial-key-0123456789" || d.Spec.Template.Spec.Volumes[0].Secret.SecretName != secret.Name {
		t.Errorf("apiKey: Secret %s holds %q; the pod reads %s", secret.Name, secret.Data["api-key"], d.Spec.Template.Spec.Volumes[0].Secret.SecretName)
	}
	pod2, _ := json.Marshal(d)
	if strings.Contains(string(pod2), "trial-key") || strings.Contains(string(pod2), "0123456789") {
		t.Error("the key, or a part of it, is in the Deployment")
	}
}

// TestChartVersions: the chart's appVersion is the exporter's VERSION, so
// the default image is the exporter this commit builds.
func TestChartVersions(t *testing.T) {
	var chart struct {
		APIVersion string `json:"apiVersion"`
		Version    string `json:"version"`
		AppVersion string `json:"appVersion"`
	}
	if err := yaml.Unmarshal(repoFile(t, "charts/global-stability-exporter/Chart.yaml"), &chart); err != nil {
		t.Fatal(err)
	}
	version := strings.TrimSpace(string(repoFile(t, "VERSION")))
	if chart.APIVersion != "v2" || chart.AppVersion != version || !regexp.MustCompile(`^\d+\.\d+\.\d+$`).MatchString(chart.Version) {
		t.Errorf("Chart.yaml: apiVersion %q, version %q, appVersion %q; want v2, a semantic version, and %q (VERSION)", chart.APIVersion, chart.Version, chart.AppVersion, version)
	}
}

func execOutput(name string, args ...string) (string, error) {
	out, err := exec.Command(name, args...).CombinedOutput()
	return string(out), err
}

// writeValues writes a values file for helm.
func writeValues(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "values.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
