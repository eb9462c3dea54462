// Package e2e proves the dashboards and rules on the real thing: the
// exporter binary in --demo mode, scraped by a real Prometheus that loads
// our rules; every panel query of every dashboard and every rule is then
// evaluated through Prometheus' HTTP API and must return data.
package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/dashboards"
	"github.com/global-stability/global_stability_exporter/mixin"
)

// need returns the path of a binary, skipping the test when it is absent,
// except under CI, which installs it and must never skip.
func need(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%s not found; .ci/run installs Debian's prometheus package and CI must not skip this test", name)
		}
		t.Skipf("%s not found: install Debian's prometheus package (it brings promtool) to run the end-to-end test", name)
	}
	return path
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// start runs a command until the test ends, keeping its output for failures.
func start(t *testing.T, name string, args ...string) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(name), out.String())
		}
	})
	return &out
}

func repoPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

type promResult struct {
	Status    string
	ErrorType string
	Error     string
	Data      struct {
		ResultType string
		Result     json.RawMessage
		Groups     []struct {
			Name  string
			Rules []struct {
				Name, Query, Health, LastError, Type string
			}
		}
	}
}

func promGet(base, path string, params url.Values) (promResult, error) {
	var r promResult
	resp, err := http.Get(base + path + "?" + params.Encode())
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// query evaluates expr now and returns how many series came back.
func query(t *testing.T, base, expr string) (int, error) {
	t.Helper()
	r, err := promGet(base, "/api/v1/query", url.Values{"query": {expr}})
	if err != nil {
		return 0, err
	}
	if r.Status != "success" {
		return 0, fmt.Errorf("%s: %s", r.ErrorType, r.Error)
	}
	var series []json.RawMessage
	if r.Data.ResultType == "vector" || r.Data.ResultType == "matrix" {
		if err := json.Unmarshal(r.Data.Result, &series); err != nil {
			return 0, err
		}
		return len(series), nil
	}
	return 1, nil // a scalar or string
}

// setup is what one run puts under Prometheus: the scrape job and target
// labels the selector matches, the rules file and the dashboards.
type setup struct {
	job        string
	labels     string // YAML flow map of target labels, "{}" for none
	selector   string // the mixin's selector: every query and rule must hold it
	rules      string // path of the rules file
	dashboards []dashboards.Dashboard
	unitTests  bool // run the promtool unit tests (written for the default selector)
}

// TestDashboardsAndRulesOnRealPrometheus runs the committed dashboards and
// rules, rendered with the mixin's default selector.
func TestDashboardsAndRulesOnRealPrometheus(t *testing.T) {
	ds, err := dashboards.Load()
	if err != nil {
		t.Fatal(err)
	}
	onRealPrometheus(t, setup{job: "global_stability", labels: "{}", selector: `job="global_stability"`, rules: repoPath(t, "alerts/global_stability.rules.yml"), dashboards: ds, unitTests: true})
}

// TestMixinWithAnotherSelector renders the mixin with a selector of two
// labels, neither the default, and scrapes the exporter only under them: a
// query or rule that ignored the config would find no data and fail.
func TestMixinWithAnotherSelector(t *testing.T) {
	need(t, "prometheus")
	files, err := mixin.Render(`{selector: 'job="gsx", env="prod"'}`)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, []byte(files["alerts/global_stability.rules.yml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	var ds []dashboards.Dashboard
	for path, content := range files {
		if strings.HasPrefix(path, "dashboards/") {
			d, err := dashboards.Parse(path, []byte(content))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(content, `job=\"global_stability\"`) {
				t.Errorf("%s: the default selector is still in it", path)
			}
			ds = append(ds, d)
		}
	}
	onRealPrometheus(t, setup{job: "gsx", labels: "{env: prod}", selector: `job="gsx", env="prod"`, rules: rules, dashboards: ds})
}

func onRealPrometheus(t *testing.T, s setup) {
	prometheus, promtool := need(t, "prometheus"), need(t, "promtool")
	dir := t.TempDir()

	exporter := filepath.Join(dir, "global_stability_exporter")
	if out, err := exec.Command("go", "build", "-o", exporter, "..").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	exporterAddr := freeAddr(t)
	start(t, exporter, "--demo", "--web.listen-address="+exporterAddr)

	config := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(config, fmt.Appendf(nil, `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: %s
    static_configs: [{targets: [%q], labels: %s}]
`, s.rules, s.job, exporterAddr, s.labels), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	start(t, prometheus, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	base := "http://" + promAddr

	// Wait for enough samples that rate() and delta() have two points, and
	// for the recording rules to have run.
	deadline := time.Now().Add(60 * time.Second)
	for {
		n, err := query(t, base, `count_over_time(global_stability_up[1m]) >= 5 and on() count(global_stability:api_requests:rate5m) > 0`)
		if err == nil && n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no samples from the exporter after 60s (last error: %v)", err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	n, _ := query(t, base, `global_stability_up == 1`)
	if n != 1 {
		t.Fatalf("global_stability_up is not 1 on the demo")
	}

	instance := exporterAddr
	ds := s.dashboards
	checked := 0
	for _, d := range ds {
		for _, p := range d.AllPanels() {
			for _, tg := range p.Targets {
				if !holdsSelector(tg.Expr, s.selector) {
					t.Errorf("%s / %q: %s ignores the selector %s", d.File, p.Title, tg.Expr, s.selector)
				}
				// The pillar dashboard is checked for every pillar.
				for _, pillar := range client.Pillars() {
					// $instance is multi-value: Grafana regex-escapes it, with the
					// backslashes doubled inside a PromQL string.
					vars := map[string]string{"instance": strings.ReplaceAll(regexp.QuoteMeta(instance), `\`, `\\`), "pillar": string(pillar), "indicator": ".+", "datasource": "prometheus"}
					expr := dashboards.Interpolate(tg.Expr, vars)
					if strings.Contains(expr, "$") {
						t.Errorf("%s / %q: unresolved variable in %s", d.File, p.Title, expr)
					}
					n, err := query(t, base, expr)
					switch {
					case err != nil:
						t.Errorf("%s / %q / %s: %s does not evaluate: %v", d.File, p.Title, tg.RefID, expr, err)
					case n == 0:
						t.Errorf("%s / %q / %s: %s returns no data", d.File, p.Title, tg.RefID, expr)
					}
					checked++
					if !strings.Contains(tg.Expr, "$pillar") {
						break
					}
				}
			}
		}
	}
	t.Logf("evaluated %d panel queries", checked)

	// Every rule loaded, parsed and evaluated without error.
	r, err := promGet(base, "/api/v1/rules", nil)
	if err != nil {
		t.Fatal(err)
	}
	thresholds := map[string]float64{}
	ruleCount := 0
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			ruleCount++
			if !holdsSelector(rule.Query, s.selector) {
				t.Errorf("rule %s: %s ignores the selector %s", rule.Name, rule.Query, s.selector)
			}
			if rule.Health != "ok" || rule.LastError != "" {
				t.Errorf("rule %s: health %q, error %q", rule.Name, rule.Health, rule.LastError)
			}
			if _, err := query(t, base, rule.Query); err != nil {
				t.Errorf("rule %s: %s does not evaluate: %v", rule.Name, rule.Query, err)
			}
			if m := regexp.MustCompile(`^global_stability_score\{[^}]*\} > ([0-9.]+)$`).FindStringSubmatch(rule.Query); m != nil {
				thresholds[rule.Name], _ = strconv.ParseFloat(m[1], 64)
			}
		}
	}
	if ruleCount < 16 {
		t.Errorf("Prometheus loaded %d rules, want all 16", ruleCount)
	}
	checkGaugeMatchesAlerts(t, ds, thresholds)

	// promtool on the rules, their unit tests, the examples and a scrape.
	promtoolRun(t, promtool, filepath.Dir(s.rules), nil, "check", "rules", filepath.Base(s.rules))
	if s.unitTests {
		promtoolRun(t, promtool, repoPath(t, "alerts"), nil, "test", "rules", "global_stability.rules.test.yml")
		promtoolRun(t, promtool, repoPath(t, "examples"), nil, "check", "config", "prometheus.yml")
	}
	resp, err := http.Get("http://" + exporterAddr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	scrape, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	promtoolRun(t, promtool, dir, scrape, "check", "metrics")
}

// holdsSelector reports whether expr has each matcher of selector as many
// times as it selects series by name: Prometheus rewrites a rule's matchers
// in its own order, so they are counted one by one.
func holdsSelector(expr, selector string) bool {
	selections := strings.Count(expr, "{") - strings.Count(expr, "{{")
	for _, m := range strings.Split(selector, ", ") {
		if strings.Count(expr, m) != selections {
			return false
		}
	}
	return true
}

// checkGaugeMatchesAlerts: the composite gauge's colour steps are the
// warning and critical alert thresholds, so the two cannot drift apart.
func checkGaugeMatchesAlerts(t *testing.T, ds []dashboards.Dashboard, alerts map[string]float64) {
	t.Helper()
	warn, crit := alerts["GlobalStabilityScoreWarning"], alerts["GlobalStabilityScoreCritical"]
	if warn == 0 || crit == 0 {
		t.Fatalf("could not read the score alert thresholds: %v", alerts)
	}
	for _, d := range ds {
		for _, p := range d.AllPanels() {
			if p.Type != "gauge" || p.FieldConfig.Defaults.Thresholds == nil {
				continue
			}
			var steps []float64
			for _, s := range p.FieldConfig.Defaults.Thresholds.Steps {
				if s.Value != nil {
					steps = append(steps, *s.Value)
				}
			}
			if len(steps) != 2 || steps[0] != warn || steps[1] != crit {
				t.Errorf("%s / %q: threshold steps %v, the alerts use %v and %v", d.File, p.Title, steps, warn, crit)
			}
			return
		}
	}
	t.Error("no gauge panel for the composite score")
}

func promtoolRun(t *testing.T, promtool, dir string, stdin []byte, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
