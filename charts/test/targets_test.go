package charttest

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

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
	// The real exporter, with the file and keys where the pod would have them.
	dir := t.TempDir()
	exporter, simulator := filepath.Join(dir, "exporter"), filepath.Join(dir, "simulator")
	for out, pkg := range map[string]string{exporter: ".", simulator: "./cmd/global-stability-simulator"} {
		cmd := exec.Command("go", "build", "-o", out, pkg)
		cmd.Dir = filepath.Join("..", "..")
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go build %s: %v\n%s", pkg, err, b)
		}
	}
	start(t, simulator, nil, "--listen-address="+simAddr, "--key=prod-key-value", "--key=staging-key-value")
	root := filepath.Join(dir, "etc")
	for path, key := range map[string]string{"targets/prod/api-key": "prod-key-value", "targets/staging/token": "staging-key-value"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(key), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	targetsFile := filepath.Join(root, "targets.yml")
	if err := os.WriteFile(targetsFile, []byte(strings.ReplaceAll(cm.Data["targets.yml"], "/etc/global-stability/", root+"/")), 0o400); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	var args []string
	for _, a := range c.Args {
		if strings.HasPrefix(a, "--config.file=") {
			a = "--config.file=" + targetsFile
		}
		if strings.HasPrefix(a, "--web.listen-address=") {
			a = "--web.listen-address=" + addr
		}
		args = append(args, a)
	}
	log := start(t, exporter, []string{"PATH=" + os.Getenv("PATH")}, args...)
	for _, name := range []string{"prod", "staging"} {
		if up := waitForSample(t, "http://"+addr+"/probe?target="+name, "global_stability_up", log); up != "1" {
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
