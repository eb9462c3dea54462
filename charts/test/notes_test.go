// SPDX-License-Identifier: Apache-2.0

package charttest

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

// notes renders the chart's NOTES.txt for a release on a cluster without
// the operator's kinds, as helm install prints it. helm template leaves
// NOTES.txt out, so a copy of the chart renders it into a ConfigMap
// through tpl.
func notes(t *testing.T, release, namespace string, values map[string]any) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "chart")
	if err := os.CopyFS(dir, os.DirFS(chartDir)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(dir, "templates", "NOTES.txt"), filepath.Join(dir, "notes.txt")); err != nil {
		t.Fatal(err)
	}
	const asConfigMap = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: notes}\ndata:\n  notes: |\n{{ tpl (.Files.Get \"notes.txt\") . | indent 4 }}\n"
	if err := os.WriteFile(filepath.Join(dir, "templates", "notes.yaml"), []byte(asConfigMap), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"template", release, dir, "--namespace", namespace, "--show-only", "templates/notes.yaml"}
	for k, v := range values {
		b, _ := json.Marshal(v)
		args = append(args, "--set-json", k+"="+string(b))
	}
	out, err := exec.Command(tool(t, "helm"), args...).CombinedOutput()
	if err != nil {
		t.Fatalf("helm %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	var cm corev1.ConfigMap
	if err := yaml.UnmarshalStrict(out, &cm); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	return cm.Data["notes"]
}

// checkConfig loads jobs, as NOTES print them, in Prometheus' own checker.
func checkConfig(t *testing.T, name string, jobs []map[string]any) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "prometheus.yml")
	config, _ := json.Marshal(map[string]any{"scrape_configs": jobs}) // JSON is YAML
	if err := os.WriteFile(file, config, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(tool(t, "promtool"), "check", "config", file).CombinedOutput(); err != nil {
		t.Errorf("%s: Prometheus refuses the scrape configuration NOTES print: %v\n%s\n%s", name, err, config, out)
	}
}

// printedScrape is the scrape configuration that NOTES.txt prints, and its
// command that renders the rules, with the mixin config it passes.
func printedScrape(t *testing.T, text string) (jobs []map[string]any, command, config string) {
	t.Helper()
	_, rest, ok := strings.Cut(text, "\n  - job_name: ")
	block, _, _ := strings.Cut("  - job_name: "+rest, "\n\n")
	if !ok {
		t.Fatalf("NOTES print no scrape configuration:\n%s", text)
	}
	if err := yaml.Unmarshal([]byte(block), &jobs); err != nil {
		t.Fatalf("the scrape configuration NOTES print is no YAML list: %v\n%s", err, block)
	}
	m := regexp.MustCompile(`(?m)^ *("\$\(go env GOPATH\)/bin/jsonnet" .* --tla-code config='([^']*)' mixin/render.jsonnet)$`).FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("NOTES print no render command:\n%s", text)
	}
	return jobs, m[1], m[2]
}

// TestNotesWithoutTheOperator: where the cluster has no ServiceMonitor,
// NOTES print a scrape configuration and a render command for the rules,
// and they work as printed: the chart's defaults load in Prometheus; and
// the real exporter with the release's targets' file, scraped by a real
// Prometheus with the printed jobs unchanged (but for their addresses,
// made local), under the rules the printed command renders, delivers each
// target's probe and the exporter's own series where the rules and the
// release's dashboards look. With one account, one job on /metrics.
func TestNotesWithoutTheOperator(t *testing.T) {
	jobs, _, config := printedScrape(t, notes(t, "gse", "monitoring", required))
	if len(jobs) != 1 || jobs[0]["job_name"] != "gse-global-stability-exporter" || jobs[0]["metrics_path"] != nil ||
		config != `{selector: "job=\"gse-global-stability-exporter\", namespace=\"monitoring\"", exporterSelector: "job=\"gse-global-stability-exporter\", namespace=\"monitoring\""}` {
		t.Errorf("one account: NOTES print jobs %v and config %s", jobs, config)
	}
	for name, values := range map[string]map[string]any{"one account": required, "two targets": twoTargets("http://api.example.com")} {
		jobs, _, _ := printedScrape(t, notes(t, "gse", "monitoring", values))
		checkConfig(t, name, jobs)
	}
	if testing.Short() {
		t.Skip("runs the exporter and Prometheus")
	}
	prometheus := tool(t, "prometheus")
	simAddr := freeAddr(t)
	values := twoTargets("http://" + simAddr)
	// Short intervals, through the chart's values, so that they are printed
	// and loaded as printed; distinct, so that printed swapped, the timeout
	// over the interval, Prometheus refuses them.
	values["serviceMonitor.interval"], values["serviceMonitor.scrapeTimeout"] = "2s", "1s"
	text := notes(t, "gse", "monitoring", values)
	const service = "gse-global-stability-exporter.monitoring.svc:10110"
	if !strings.Contains(text, service) {
		t.Fatalf("NOTES do not scrape the Service %s:\n%s", service, text)
	}

	// The exporter and its API, with the release's targets' file.
	dir := t.TempDir()
	keys := map[string]string{"targets/prod/api-key": "prod-key-0123456789", "targets/staging/token": "staging-key-0123456789"}
	startSimulatorAt(t, simAddr, keys["targets/prod/api-key"], keys["targets/staging/token"])
	m, err := helmTemplateWith(t, nil, "gse", "monitoring", values)
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "etc")
	for path, key := range keys {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, path)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, path), []byte(key), 0o400); err != nil {
			t.Fatal(err)
		}
	}
	targetsFile := filepath.Join(root, "targets.yml")
	file := m.configMaps["gse-global-stability-exporter-targets"].Data["targets.yml"]
	if err := os.WriteFile(targetsFile, []byte(strings.ReplaceAll(file, "/etc/global-stability/", root+"/")), 0o400); err != nil {
		t.Fatal(err)
	}
	exporterAddr := freeAddr(t)
	start(t, binary(t, "exporter"), nil, exporterAddr, "--config.file="+targetsFile, "--web.listen-address="+exporterAddr)

	// Prometheus with what NOTES print: the jobs, the rules rendered.
	jobs, command, config := printedScrape(t, strings.ReplaceAll(text, service, exporterAddr))
	for _, j := range jobs {
		if j["scrape_interval"] != "2s" || j["scrape_timeout"] != "1s" {
			t.Errorf("NOTES print the job %v with scrape_interval %v and scrape_timeout %v; the values say 2s and 1s", j["job_name"], j["scrape_interval"], j["scrape_timeout"])
		}
	}
	// The command as printed, in a shell, where mixin/ is the repository's.
	tool(t, "jsonnet")
	mixinDir, err := filepath.Abs(filepath.Join("..", "..", "mixin"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(mixinDir, filepath.Join(dir, "mixin")); err != nil {
		t.Fatal(err)
	}
	render := exec.Command("sh", "-c", command)
	render.Dir = dir
	if out, err := render.CombinedOutput(); err != nil {
		t.Fatalf("the printed render command: %v\n%s\n%s", err, command, out)
	}
	rules := filepath.Join(dir, "out", "alerts", "global_stability.rules.yml")
	promConfig, _ := json.Marshal(map[string]any{
		"global":         map[string]any{"evaluation_interval": "1s"},
		"rule_files":     []string{rules},
		"scrape_configs": jobs,
	})
	configFile := filepath.Join(dir, "prometheus.yml") // JSON is YAML
	if err := os.WriteFile(configFile, promConfig, 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	log := start(t, prometheus, nil, promAddr, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	base := "http://" + promAddr

	// Each target's probe under the release's selector, the exporter's own
	// series under its exporter selector, and every rule healthy.
	var c struct{ Selector, ExporterSelector string }
	if err := json.Unmarshal([]byte(regexp.MustCompile(`(\w+):`).ReplaceAllString(config, `"$1":`)), &c); err != nil {
		t.Fatalf("the printed config %s: %v", config, err)
	}
	for expr, want := range map[string]int{
		`global_stability_up{` + c.Selector + `, instance=~"prod|staging", target!=""} == 1`:              2,
		`global_stability_exporter_config_last_reload_successful{` + c.ExporterSelector + `} == 1`:        1,
		`count by (target) (global_stability_api_requests_total{` + c.ExporterSelector + `, target!=""})`: 2,
	} {
		waitForQuery(t, base, expr, func(n int) bool { return n == want }, log)
	}
	if healthyRules(t, base) == 0 {
		t.Error("Prometheus loaded no rule")
	}
}
