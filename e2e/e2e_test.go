// SPDX-License-Identifier: Apache-2.0

// Package e2e proves the dashboards and rules on the real thing: the
// exporter binary in --demo mode, scraped by a real Prometheus that loads
// our rules; every panel query of every dashboard and every rule is then
// evaluated through Prometheus' HTTP API and must return data.
package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/grafana"
	"github.com/global-stability/global_stability_exporter/internal/testutil/render"
	"github.com/global-stability/global_stability_exporter/simulator"
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
// A command given --web.listen-address is waited for until it listens
// there: a port taken by freeAddr and let go could otherwise be taken by a
// process started before it listened (the demo's simulator, say).
func start(t *testing.T, name string, args ...string) *bytes.Buffer {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("%s output:\n%s", filepath.Base(name), out.String())
		}
	})
	for _, arg := range args {
		if addr, ok := strings.CutPrefix(arg, "--web.listen-address="); ok {
			waitListening(t, name, addr, exited)
		}
	}
	return &out
}

// waitListening returns once addr accepts a connection, failing the test
// if the process ends first.
func waitListening(t *testing.T, name, addr string, exited <-chan struct{}) {
	t.Helper()
	if poll(t, func() bool {
		select {
		case <-exited:
			t.Fatalf("%s ended before listening on %s", filepath.Base(name), addr)
		default:
		}
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err == nil
	}) != nil {
		t.Fatalf("%s not listening on %s by the test's deadline", filepath.Base(name), addr)
	}
}

func repoPath(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("..", rel))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// group is a rule group as Prometheus' API lists it.
type group struct {
	Name           string
	LastEvaluation time.Time
	Rules          []struct {
		Name, Query, Health, LastError, Type string
	}
}

type promResult struct {
	Status    string
	ErrorType string
	Error     string
	Data      struct {
		ResultType string
		Result     json.RawMessage
		Groups     []group
		Alerts     []struct {
			Labels map[string]string
			State  string
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
	return countSeries(base, expr)
}

// countSeries evaluates expr now and returns how many series came back.
func countSeries(base, expr string) (int, error) {
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
	labels     string   // YAML flow map of target labels, "{}" for none
	selectors  []string // the mixin's selectors: every query and rule must hold one
	rules      string   // path of the rules file
	dashboards []grafana.Dashboard
	unitTests  bool // run the promtool unit tests (written for the default selector)
}

// TestDashboardsAndRulesOnRealPrometheus runs the committed dashboards and
// rules, rendered with the mixin's default selectors, with one account per
// exporter on /metrics: a --demo exporter (the quick start) and one of a
// real account.
func TestDashboardsAndRulesOnRealPrometheus(t *testing.T) {
	t.Parallel()
	onRealPrometheus(t, setup{job: "global_stability", labels: "{}", selectors: []string{defaultSelector, exporterSelector},
		rules: repoPath(t, "alerts/global_stability.rules.yml"), dashboards: committedDashboards(t), unitTests: true})
}

// TestMixinWithAnotherSelector renders the mixin with a selector of two
// labels, neither the default, and scrapes the exporter only under them: a
// query or rule that ignored the config would find no data and fail.
func TestMixinWithAnotherSelector(t *testing.T) {
	t.Parallel()
	need(t, "prometheus")
	const sel = `job="gsx", env="prod"`
	files, err := render.Mixin(`{selector: 'job="gsx", env="prod"', exporterSelector: self.selector}`)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rules := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(rules, []byte(files["alerts/global_stability.rules.yml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	for path, content := range files {
		if strings.HasPrefix(path, "dashboards/") && strings.Contains(content, `job=\"global_stability`) {
			t.Errorf("%s: a default selector is still in it", path)
		}
	}
	onRealPrometheus(t, setup{job: "gsx", labels: "{env: prod}", selectors: []string{sel}, rules: rules, dashboards: dashboardsIn(t, files)})
}

func onRealPrometheus(t *testing.T, s setup) {
	prometheus, promtool := need(t, "prometheus"), need(t, "promtool")
	dir := t.TempDir()

	exporter := buildExporter(t, dir)
	demo := freeAddr(t)
	start(t, exporter, "--demo", "--web.listen-address="+demo)
	// One account: the simulator as the demo runs it.
	const key = "gsk_e2e_one_account_0123456789"
	api := httptest.NewServer(simulator.New(simulator.Config{Key: key, Validators: true, CacheControl: simulator.DemoCacheControl, RateLimit: simulator.DemoRateLimit}))
	t.Cleanup(api.Close)
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	account := freeAddr(t)
	start(t, exporter, "--api.url="+api.URL, "--api.key-file="+keyFile, "--web.listen-address="+account)

	config := filepath.Join(dir, "prometheus.yml")
	// A scrape's budget is its timeout less --web.timeout-offset (0.5 s):
	// 3 s leaves a loaded machine time to answer every endpoint, which each
	// alert here needs at the same evaluation.
	if err := os.WriteFile(config, fmt.Appendf(nil, `global:
  scrape_interval: 3s
  scrape_timeout: 3s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: %s
    static_configs: [{targets: [%q, %q], labels: %s}]
`, s.rules, s.job, demo, account, s.labels), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	start(t, prometheus, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	base := "http://" + promAddr

	// Wait for enough samples that rate() and delta() have two points, and
	// for the recording rules to have run.
	eventually(t, base, `count_over_time(global_stability_up[1m]) >= 5 and on(instance) count by (instance) (global_stability:api_requests:rate5m) > 0`, 2)
	// A moment at which the demo's and the account's exporters both answered
	// whole: the latest scrape of either may have missed its deadline.
	at := whole(t, base, fmt.Sprintf("job=%q", s.job), 2)
	checked := checkPanels(t, base, s.dashboards, panelCheck{instances: []string{demo, account}, selectors: s.selectors, at: at})
	t.Logf("evaluated %d panel queries", checked)

	// Every rule loaded, parsed and evaluated without error.
	r, err := promGet(base, "/api/v1/rules", nil)
	if err != nil {
		t.Fatal(err)
	}
	var loaded []string
	for _, g := range r.Data.Groups {
		for _, rule := range g.Rules {
			loaded = append(loaded, rule.Name)
			if !selects(rule.Query, s.selectors...) {
				t.Errorf("rule %s: %s ignores the selectors %q", rule.Name, rule.Query, s.selectors)
			}
			if rule.Health != "ok" || rule.LastError != "" {
				t.Errorf("rule %s: health %q, error %q", rule.Name, rule.Health, rule.LastError)
			}
			if _, err := query(t, base, rule.Query); err != nil {
				t.Errorf("rule %s: %s does not evaluate: %v", rule.Name, rule.Query, err)
			}
			// The exporters are healthy: an alert for an input gone missing
			// from a response (value 1: the endpoint answered) returning
			// anything expects a series the exporter does not export.
			// (Value 0, an endpoint failing, can happen on a loaded machine:
			// not checked.)
			if rule.Type == "alerting" && strings.HasSuffix(rule.Name, "Unavailable") {
				if n, err := query(t, base, "("+rule.Query+") == 1"); err != nil || n != 0 {
					t.Errorf("rule %s: fires on healthy exporters (%d series, error %v): %s", rule.Name, n, err, rule.Query)
				}
			}
		}
	}
	want := ruleNames(t, s.rules)
	sort.Strings(loaded) // the API lists the groups by name
	sort.Strings(want)
	if strings.Join(loaded, ",") != strings.Join(want, ",") {
		t.Errorf("Prometheus loaded the rules %q, want the file's %q", loaded, want)
	}

	// promtool on the rules, their unit tests, the examples and a scrape.
	promtoolRun(t, promtool, filepath.Dir(s.rules), nil, "check", "rules", filepath.Base(s.rules))
	if s.unitTests {
		promtoolRun(t, promtool, repoPath(t, "alerts"), nil, "test", "rules", "global_stability.rules.test.yml")
		promtoolRun(t, promtool, repoPath(t, "examples"), nil, "check", "config", "prometheus.yml")
		promtoolRun(t, promtool, repoPath(t, "examples"), nil, "check", "config", "prometheus-targets.yml")
	}
	for _, addr := range []string{demo, account} {
		resp, err := http.Get("http://" + addr + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		scrape, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		promtoolRun(t, promtool, dir, scrape, "check", "metrics")
	}
}

// whole waits for a moment since it was called at which each of the n
// instances of sel had answered its last scrape whole (global_stability_up
// 1), and returns it, in Unix seconds, for queries to be evaluated at: on a
// loaded machine an endpoint may miss a scrape's deadline, and a query
// evaluated just after would find its series gone. Not earlier: the data
// the test waited for before may not have been there yet. The moment is
// before every instance's latest scrape stored: a scrape still in flight is
// stored at its start, and could turn the series of an earlier moment stale.
func whole(t *testing.T, base, sel string, n int) string {
	t.Helper()
	var at string
	since := time.Now()
	if poll(t, func() bool {
		latest, err := valuesOf(base, fmt.Sprintf("min(timestamp(global_stability_up{%s}))", sel), "")
		if err != nil || len(latest) == 0 {
			return false
		}
		end := time.Now()
		r, err := promGet(base, "/api/v1/query_range", url.Values{"query": {fmt.Sprintf("count(global_stability_up{%s} == 1)", sel)},
			"start": {fmt.Sprintf("%.3f", float64(since.UnixMilli())/1e3)}, "end": {fmt.Sprint(end.Unix())}, "step": {"0.25"}})
		var series []struct{ Values [][2]any }
		if err != nil || json.Unmarshal(r.Data.Result, &series) != nil || len(series) != 1 {
			return false
		}
		for _, v := range series[0].Values {
			if ts, _ := v[0].(float64); v[1] == strconv.Itoa(n) && ts < latest[""] {
				at = fmt.Sprint(v[0])
			}
		}
		return at != ""
	}) != nil {
		t.Fatalf("no moment at which the %d instances of %s had all answered whole", n, sel)
	}
	return at
}

// buildExporter builds the exporter into dir and returns its path.
func buildExporter(t *testing.T, dir string) string {
	t.Helper()
	exporter := filepath.Join(dir, "global_stability_exporter")
	if out, err := exec.Command("go", "build", "-o", exporter, "..").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	return exporter
}

// TestUnavailableAlertsOnTheRealExporter: values the alerts read, left out
// of the API's answers the ways real APIs leave them out (a null score, a pillar
// missing, an as_of null or missing), put exactly the alert for each in
// pending state, on the real exporter's output and a real Prometheus with
// the committed rules. The promtool tests use series written by hand: this
// one fails if the exporter's series and the rules' expected set do not line
// up (a label the rules do not ignore, an endpoint or pillar spelled
// otherwise), which would make the alerts fire on nothing or on everything.
func TestUnavailableAlertsOnTheRealExporter(t *testing.T) {
	t.Parallel()
	prometheus := need(t, "prometheus")
	dir := t.TempDir()
	exporter := buildExporter(t, dir)
	const key = "gsk_e2e_unavailable_alerts"
	keyFile := filepath.Join(dir, "key")
	if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
		t.Fatal(err)
	}
	asOf := time.Now().UTC().Format(time.RFC3339)

	// a: the overview answers with every value null; one page, ScoreUnavailable.
	// b: a composite score but no cyber pillar; the macro drilldown's as_of
	// null; the summary without an as_of. The other endpoints are the
	// simulator's, healthy.
	faults := map[string]map[string]string{
		"a": {
			endpoint.Overview.Label: `{"score":null,"trend":null,"pillars":null,"as_of":null}`,
		},
		"b": {
			endpoint.Overview.Label:           `{"score":50,"trend":"stable","pillars":{"conflict":50,"supply_chain":30,"macro":20},"as_of":"` + asOf + `"}`,
			endpoint.Drilldown("macro").Label: `{"pillar":"macro","score":20,"delta_24h":1.5,"indicators":[{"key":"inflation","value":3.1}],"as_of":null}`,
			endpoint.Summary.Label:            `{"summary":"quiet"}`,
		},
	}
	targets := map[string]string{} // exporter address → a or b
	for _, name := range []string{"a", "b"} {
		sim := simulator.New(simulator.Config{Key: key})
		for endpoint, body := range faults[name] {
			sim.SetFault(endpoint, simulator.Fault{Kind: simulator.FaultBody, Body: body})
		}
		srv := httptest.NewServer(sim)
		t.Cleanup(srv.Close)
		addr := freeAddr(t)
		start(t, exporter, "--api.url="+srv.URL, "--api.key-file="+keyFile, "--web.listen-address="+addr,
			"--no-collector.conflict", "--no-collector.briefings")
		targets[addr] = name
	}

	config := filepath.Join(dir, "prometheus.yml")
	var list []string
	for addr := range targets {
		list = append(list, strconv.Quote(addr))
	}
	// A scrape's budget is its timeout less --web.timeout-offset (0.5 s):
	// 3 s leaves a loaded machine time to answer every endpoint, which each
	// alert here needs at the same evaluation.
	if err := os.WriteFile(config, fmt.Appendf(nil, `global:
  scrape_interval: 3s
  scrape_timeout: 3s
  evaluation_interval: 1s
rule_files: [%q]
scrape_configs:
  - job_name: global_stability
    static_configs: [{targets: [%s]}]
`, repoPath(t, "alerts/global_stability.rules.yml"), strings.Join(list, ", ")), 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	start(t, prometheus, "--config.file="+config, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	base := "http://" + promAddr

	// The alerts about missing data and failing endpoints that are active
	// (pending: their "for" has not passed), as alertname/target/what.
	watched := map[string]bool{
		"GlobalStabilityScoreUnavailable": true, "GlobalStabilityPillarScoreUnavailable": true,
		"GlobalStabilityAsOfUnavailable": true, "GlobalStabilityInvalidData": true, "GlobalStabilityEndpointFailing": true,
	}
	want := strings.Join([]string{
		"GlobalStabilityAsOfUnavailable/b/global-stability/pillar/macro",
		"GlobalStabilityAsOfUnavailable/b/summaries",
		"GlobalStabilityPillarScoreUnavailable/b/cyber",
		"GlobalStabilityScoreUnavailable/a/global-stability",
	}, "\n")
	var got string
	if poll(t, func() bool {
		r, err := promGet(base, "/api/v1/alerts", nil)
		if err == nil {
			var active []string
			for _, a := range r.Data.Alerts {
				if l := a.Labels; watched[l["alertname"]] {
					what := l["pillar"]
					if what == "" {
						what = l["endpoint"]
					}
					active = append(active, l["alertname"]+"/"+targets[l["instance"]]+"/"+what)
				}
			}
			sort.Strings(active)
			got = strings.Join(active, "\n")
		}
		return got == want
	}) != nil {
		t.Fatalf("active alerts about missing data by the test's deadline:\n%s\nwant exactly:\n%s", got, want)
	}
}

func promtoolRun(t *testing.T, promtool, dir string, stdin []byte, args ...string) {
	t.Helper()
	cmd := exec.CommandContext(t.Context(), promtool, args...)
	cmd.Dir = dir
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
