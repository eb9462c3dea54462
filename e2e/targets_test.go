// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"bytes"
	"fmt"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/global-stability/global_stability_exporter/simulator"
)

// TestSeveralTargetsThroughProbe: one exporter with a targets' file, a real
// Prometheus scraping it with the scrape configuration of
// examples/prometheus-targets.yml (the README's relabeling, unchanged but
// for addresses and intervals) and the committed rules: each target
// arrives as its own instance, with its own data, and every panel of the
// committed dashboards shows it; a target added to the file and announced
// by SIGHUP is scraped; a broken file keeps the running targets and says
// so.
func TestSeveralTargetsThroughProbe(t *testing.T) {
	t.Parallel()
	prometheus := need(t, "prometheus")
	dir := t.TempDir()

	// Three accounts of one service, each with its own key and world.
	keys := map[string]string{"prod": "key-prod-0123456789", "staging": "key-staging-0123456789", "added": "key-added-0123456789"}
	var sims []*simulator.Simulator
	for i, name := range []string{"prod", "staging", "added"} {
		// A quota announced, so that the quota panel has data too.
		sims = append(sims, simulator.New(simulator.Config{Key: keys[name], Seed: uint64(i + 1), RateLimit: 1_000_000}))
		if err := os.WriteFile(filepath.Join(dir, name+".key"), []byte(keys[name]), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	api := httptest.NewServer(simulator.Accounts(sims...))
	defer api.Close()
	targetsFile := filepath.Join(dir, "targets.yml")
	writeTargets := func(names ...string) {
		var b strings.Builder
		b.WriteString("targets:\n")
		for _, n := range names {
			fmt.Fprintf(&b, "  - name: %s\n    api_url: %s\n    api_key_file: %s.key\n", n, api.URL, n)
		}
		if err := os.WriteFile(targetsFile, []byte(b.String()), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeTargets("prod", "staging")

	exporterAddr := freeAddr(t)
	exporterLog := &lockedBuffer{}
	exporter := exec.Command(buildExporter(t, dir), "--config.file="+targetsFile, "--web.listen-address="+exporterAddr)
	exporter.Stdout, exporter.Stderr = exporterLog, exporterLog
	if err := exporter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = exporter.Process.Kill()
		_ = exporter.Wait()
		if t.Failed() {
			t.Logf("exporter output:\n%s", exporterLog.String())
		}
	})

	// The committed rules and dashboards, as for one account.
	config := prometheusTargetsConfig(t, exporterAddr, repoPath(t, "alerts/global_stability.rules.yml"), nil, "prod", "staging", "added")
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, config, 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	start(t, prometheus, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	base := "http://" + promAddr

	// Each target as its own instance, with its own data, through /probe.
	eventually(t, base, `global_stability_up{job="global_stability", instance="prod", target="prod"} == 1`, 1)
	eventually(t, base, `global_stability_up{job="global_stability", instance="staging", target="staging"} == 1`, 1)
	eventually(t, base, `count by (instance) (global_stability_pillar_score{job="global_stability"}) == 4`, 2)
	// Not in the file yet: /probe answers 400, so Prometheus' up is 0.
	eventually(t, base, `up{job="global_stability", instance="added"} == 0`, 1)
	// The exporter's own series carry the target: its API requests, per target.
	eventually(t, base, `sum by (target) (global_stability_api_requests_total{job="global_stability_exporter"}) > 0`, 2)
	eventually(t, base, `global_stability_exporter_config_last_reload_successful{job="global_stability_exporter"} == 1`, 1)

	// Every panel of the committed dashboards returns data for each target,
	// and names each series with its target where it shows both.
	eventually(t, base, `count(count_over_time(global_stability_up[1m]) >= 5) + count(global_stability:api_requests:rate5m > 0 or global_stability:api_requests:rate5m == 0) > 0`, 1)
	eventually(t, base, `count by (target) (global_stability:api_requests:rate5m{job="global_stability_exporter"})`, 2)
	at := whole(t, base, `job="global_stability"`, 2)
	n := checkPanels(t, base, committedDashboards(t), panelCheck{instances: []string{"prod", "staging"}, selectors: []string{defaultSelector, exporterSelector}, at: at})
	t.Logf("evaluated %d panel queries for targets prod and staging", n)

	// A third target, announced by SIGHUP.
	writeTargets("prod", "staging", "added")
	if err := exporter.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, base, `global_stability_up{job="global_stability", instance="added"} == 1`, 1)

	// A broken file: the running targets stay and are still scraped.
	if err := os.WriteFile(targetsFile, []byte("targets:\n  - name: prod\n    api_urll: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exporter.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	eventually(t, base, `global_stability_exporter_config_last_reload_successful{job="global_stability_exporter"} == 0`, 1)
	eventually(t, base, `time() - timestamp(global_stability_up{job="global_stability"} == 1) < 3`, 3)
	if !strings.Contains(exporterLog.String(), "reloading the targets' file failed") {
		t.Errorf("the failed reload is not in the log")
	}
}

// TestSeveralAccountsAlertsFire: the committed rules (their "for"s a
// minute to a second, their expressions as they are) on a real Prometheus
// scraping one exporter with a targets' file as examples/prometheus-targets.yml
// says: the quota alert fires for the account whose quota runs low and no
// other, the reload alert once for a file that does not reload, and the
// exporter itself gone pages once, as the exporter, not once per target.
func TestSeveralAccountsAlertsFire(t *testing.T) {
	t.Parallel()
	prometheus := need(t, "prometheus")
	dir := t.TempDir()
	targetsFile := filepath.Join(dir, "targets.yml")
	var file strings.Builder
	file.WriteString("targets:\n")
	for name, quota := range map[string]int{"prod": 50, "staging": 900} { // of 1000
		key := "gsk_" + name + "_0123456789"
		api := newFakeAPI(t, key)
		api.setQuota(quota)
		if err := os.WriteFile(filepath.Join(dir, name+".key"), []byte(key), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&file, "  - name: %s\n    api_url: %s\n    api_key_file: %s.key\n", name, api.URL(), name)
	}
	if err := os.WriteFile(targetsFile, []byte(file.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	exporterAddr := freeAddr(t)
	exporter := exec.Command(buildExporter(t, dir), "--config.file="+targetsFile, "--web.listen-address="+exporterAddr)
	if err := exporter.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = exporter.Process.Kill(); _ = exporter.Wait() })

	committed, err := os.ReadFile(repoPath(t, "alerts/global_stability.rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	scaled := regexp.MustCompile(`(?m)^(\s+for: "?)(\d+)m("?)$`).ReplaceAll(committed, []byte("${1}${2}s${3}"))
	if bytes.Equal(scaled, committed) {
		t.Fatal("no for: in the committed rules to scale")
	}
	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, scaled, 0o644); err != nil {
		t.Fatal(err)
	}
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, prometheusTargetsConfig(t, exporterAddr, rules, nil, "prod", "staging"), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	start(t, prometheus, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	base := "http://" + promAddr

	// firing waits until the firing alerts of name are want (each by its
	// job/instance/target), until the test's deadline nears.
	firing := func(name string, want ...string) {
		t.Helper()
		var got []string
		if err := poll(t, func() bool {
			r, err := promGet(base, "/api/v1/alerts", nil)
			if err != nil {
				return false
			}
			got = nil
			for _, a := range r.Data.Alerts {
				if l := a.Labels; l["alertname"] == name && a.State == "firing" {
					got = append(got, l["job"]+"/"+l["instance"]+"/"+l["target"])
				}
			}
			sort.Strings(got)
			return slices.Equal(got, want)
		}); err != nil {
			t.Fatalf("%s firing for %q by the test's deadline, want %q", name, got, want)
		}
	}
	firing("GlobalStabilityAPIQuotaLow", "global_stability_exporter/"+exporterAddr+"/prod")

	if err := os.WriteFile(targetsFile, []byte("targets:\n  - name: prod\n    api_urll: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := exporter.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	firing("GlobalStabilityConfigReloadFailed", "global_stability_exporter/"+exporterAddr+"/")

	// The exporter gone: every probe fails with it. One page, held: no
	// target's page follows it.
	_ = exporter.Process.Kill()
	firing("GlobalStabilityExporterDown", "global_stability_exporter/"+exporterAddr+"/")
	evaluated(t, base, time.Now().Add(10*time.Second)) // twice the scaled "for": a target's page would be firing by now
	firing("GlobalStabilityExporterDown", "global_stability_exporter/"+exporterAddr+"/")
}

// prometheusTargetsConfig is examples/prometheus-targets.yml with the
// exporter's address, these targets, one-second intervals, the rules given
// and the top-level sections of extra (alerting, remote_write, external
// labels...): its relabeling is what is under test, so it is taken as it is.
func prometheusTargetsConfig(t *testing.T, exporterAddr, rules string, extra map[string]any, targets ...string) []byte {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "examples/prometheus-targets.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["global"] = map[string]any{"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"}
	cfg["rule_files"] = []string{rules}
	for k, v := range extra {
		if k == "global" {
			for gk, gv := range v.(map[string]any) {
				cfg["global"].(map[string]any)[gk] = gv
			}
			continue
		}
		cfg[k] = v
	}
	for _, j := range cfg["scrape_configs"].([]any) {
		job := j.(map[any]any)
		delete(job, "scrape_interval")
		delete(job, "scrape_timeout")
		switch job["job_name"] {
		case "global_stability":
			job["static_configs"] = []any{map[string]any{"targets": targets}}
			relabels := job["relabel_configs"].([]any)
			last := relabels[len(relabels)-1].(map[any]any)
			if last["target_label"] != "__address__" {
				t.Fatalf("the example's last relabeling is not the exporter's address: %v", last)
			}
			last["replacement"] = exporterAddr
		case "global_stability_exporter":
			job["static_configs"] = []any{map[string]any{"targets": []string{exporterAddr}}}
		default:
			t.Fatalf("examples/prometheus-targets.yml has a job %v the test does not know", job["job_name"])
		}
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// eventually waits until expr returns want series, until the test's deadline nears.
func eventually(t *testing.T, base, expr string, want int) {
	t.Helper()
	var n int
	var err error
	if poll(t, func() bool { n, err = query(t, base, expr); return err == nil && n == want }) != nil {
		t.Fatalf("%s: %d series (err %v) by the test's deadline, want %d", expr, n, err, want)
	}
}

// lockedBuffer is a bytes.Buffer that a process's output goroutine writes
// while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
