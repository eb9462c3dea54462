// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// exampleKey is the key in the kustomize example's api-key file.
const exampleKey = "gsk_example_0123456789abcdef"

// kustomizeExample builds examples/kubernetes (in a copy, beside the
// api-key file its secretGenerator reads and git ignores, and the
// dashboards it takes from dashboards/, where they are as it finds them).
func kustomizeExample(t *testing.T) manifests {
	t.Helper()
	kustomize := tool(t, "kustomize")
	root := t.TempDir()
	for _, from := range []string{"examples/kubernetes", "dashboards"} {
		if err := os.CopyFS(filepath.Join(root, from), os.DirFS(filepath.Join("..", "..", from))); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(root, "examples", "kubernetes")
	if err := os.WriteFile(filepath.Join(dir, "api-key"), []byte(exampleKey), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(kustomize, "build", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("kustomize build examples/kubernetes: %v\n%s", err, out)
	}
	return decodeStrictly(t, out)
}

// TestKustomizeExample: the kustomize example decodes strictly, carries the
// mixin's rules and both dashboards for Grafana's sidecar, unchanged (the
// committed ones of dashboards/, their one copy), each its own ConfigMap
// of a fixed name, and keeps the exporter's endpoint label from the
// operator's.
func TestKustomizeExample(t *testing.T) {
	m := kustomizeExample(t)
	selector := `job="global_stability"`
	sm := only(t, "ServiceMonitor", m.serviceMonitors)
	rl := sm.Spec.Endpoints[0].RelabelConfigs
	if len(rl) != 2 || rl[0].TargetLabel != "job" || *rl[0].Replacement != "global_stability" || strings.ToLower(rl[1].Action) != "labeldrop" || rl[1].Regex != "endpoint" {
		t.Errorf("ServiceMonitor relabelings %+v: want job=global_stability and the operator's endpoint label dropped", rl)
	}
	var names []string
	for _, g := range only(t, "PrometheusRule", m.prometheusRules).Spec.Groups {
		for _, r := range g.Rules {
			names = append(names, r.Alert+r.Record)
			// The exporter's own series: its job with one account or several.
			if !holdsSelector(strings.ReplaceAll(r.Expr.String(), `job=~"global_stability|global_stability_exporter"`, selector), selector) {
				t.Errorf("rule %s%s ignores %s", r.Alert, r.Record, selector)
			}
		}
	}
	if strings.Join(names, ",") != mixinRuleNames(t) {
		t.Errorf("the PrometheusRule holds %s, not the mixin's rules", names)
	}
	found := map[string]bool{}
	for name, cm := range m.configMaps {
		if cm.Labels["grafana_dashboard"] != "1" || cm.Annotations["grafana_folder"] == "" {
			t.Errorf("ConfigMap %s: labels %v, annotations %v; want grafana_dashboard=1 and a grafana_folder", name, cm.Labels, cm.Annotations)
		}
		for key, text := range cm.Data {
			if want := string(repoFile(t, "dashboards/"+key)); text != want {
				t.Errorf("ConfigMap %s: %s differs from dashboards/%s (run make mixin)", name, key, key)
			}
			found[key] = true
		}
	}
	if !found["global-stability-overview.json"] || !found["global-stability-pillar.json"] {
		t.Errorf("dashboards in ConfigMaps: %v, want the overview and the pillar", found)
	}
	var configMaps []string
	for name := range m.configMaps {
		configMaps = append(configMaps, name)
	}
	sort.Strings(configMaps)
	if got := strings.Join(configMaps, " "); got != "global-stability-dashboard-overview global-stability-dashboard-pillar" {
		t.Errorf("ConfigMaps %s, want one per dashboard, by its fixed name", got)
	}
	// The images: override reaches the Deployment, at the exporter's VERSION,
	// and the key file is the owner's to read only.
	pod := only(t, "Deployment", m.deployments).Spec.Template.Spec
	version := strings.TrimSpace(string(repoFile(t, "VERSION")))
	if img := pod.Containers[0].Image; img != "registry.example.com/global-stability-exporter:"+version {
		t.Errorf("image %q: the kustomization's images: override did not reach it (want tag %s)", img, version)
	}
	if mode := pod.Volumes[0].Secret.DefaultMode; mode == nil || *mode != 0o400 {
		t.Errorf("the key file's mode %v, want 0400", mode)
	}
	if s := only(t, "Secret", m.secrets); string(s.Data["api-key"]) != exampleKey {
		t.Error("the secretGenerator does not carry the api-key file")
	}
}
