// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/testutil/pipenet"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

const testKey = "collector-test-key-5e1f"

var fixedNow = time.Date(2026, 11, 22, 4, 37, 12, 0, time.UTC)

// env is an exporter pointed at an upstream, with its log captured.
type env struct {
	sim     *simulator.Simulator
	handler http.Handler
	scraper *collector.Collections
	logs    *syncBuffer
	close   func() // stops the upstream and closes idle connections
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func allOn(cfg *collector.Config) {
	cfg.Endpoints = endpoint.All()
}

// newEnv starts the simulator (or upstream, when given) and an exporter.
func newEnv(t *testing.T, simCfg simulator.Config, upstream http.Handler, mods ...func(*collector.Config)) *env {
	t.Helper()
	return newEnvWithClient(t, simCfg, upstream, nil, mods...)
}

// newEnvWithClient is newEnv with client options. The upstream is served
// over in-memory connections (internal/pipenet), closed when the test ends,
// so that the env works in a bubble (inBubble).
func newEnvWithClient(t *testing.T, simCfg simulator.Config, upstream http.Handler, clientMod func(*client.Config), mods ...func(*collector.Config)) *env {
	t.Helper()
	simCfg.Key = testKey
	if simCfg.Now == nil {
		simCfg.Now = func() time.Time { return fixedNow }
	}
	e := &env{sim: simulator.New(simCfg), logs: &syncBuffer{}}
	if upstream == nil {
		upstream = e.sim
	}
	net := pipenet.Serve(upstream)
	e.close = net.Close
	t.Cleanup(e.close)
	ccfg := client.Config{BaseURL: "http://api.test", APIKey: client.StaticKey(testKey), HTTPClient: net.Client()}
	if clientMod != nil {
		clientMod(&ccfg)
	}
	cl, err := client.New(ccfg)
	if err != nil {
		t.Fatal(err)
	}
	// At info, the default --log.level: what a user sees.
	logger := level.NewFilter(log.NewLogfmtLogger(e.logs), level.AllowInfo())
	cfg := collector.Config{Client: cl, Logger: logger}
	allOn(&cfg)
	for _, m := range mods {
		m(&cfg)
	}
	e.scraper = collector.NewCollections(cfg)
	e.handler = handler.New(handler.Options{
		Collections:    e.scraper,
		Gatherer:       prometheus.NewRegistry(),
		Logger:         logger,
		DefaultTimeout: 5 * time.Second,
		TimeoutOffset:  500 * time.Millisecond,
	})
	return e
}

// inBubble runs f in a testing/synctest bubble whose clock starts at
// fixedNow: a scrape's deadline and an upstream's delays pass only when
// every goroutine waits for them, so that no load can make one expire.
func inBubble(t *testing.T, f func(t *testing.T)) {
	t.Helper()
	synctest.Test(t, func(t *testing.T) {
		time.Sleep(time.Until(fixedNow))
		f(t)
	})
}

// scrape GETs /metrics with the given scrape timeout header ("" for none).
func (e *env) scrape(t *testing.T, timeoutHeader string) (int, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if timeoutHeader != "" {
		r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeoutHeader)
	}
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, r)
	return w.Code, w.Body.String()
}

// series parses exposition text into "name{labels}" → value.
func series(t *testing.T, text string) map[string]float64 {
	t.Helper()
	s, err := promtext.Parse(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return s
}

// ownedSeries is a series an endpoint alone feeds: its metric's name and
// the label values its description fixes (the endpoint's own, a field's, the
// endpoint label of a metric that has one); labels from the data are free.
type ownedSeries struct {
	name   string
	labels map[string]string
}

// in reports whether s holds such a series.
func (o ownedSeries) in(s map[string]float64) bool {
	for k := range s {
		if o.is(k) {
			return true
		}
	}
	return false
}

// is reports whether the series written key (as promtext.Key writes it)
// is such a series.
func (o ownedSeries) is(key string) bool {
	name, labels, _ := strings.Cut(strings.TrimSuffix(key, "}"), "{")
	if name != o.name {
		return false
	}
	pairs := strings.Split(labels, ",")
	for l, v := range o.labels {
		if !slices.Contains(pairs, fmt.Sprintf("%s=%q", l, v)) {
			return false
		}
	}
	return true
}

func (o ownedSeries) String() string {
	var pairs []string
	for l, v := range o.labels {
		pairs = append(pairs, l, v)
	}
	return promtext.Key(o.name, pairs...)
}

// owned lists, from its description, every series the endpoint labelled
// label alone feeds: one per exported field, one per metric of its list.
func owned(label string) []ownedSeries {
	var out []ownedSeries
	for _, e := range endpoint.All() {
		if e.Label != label {
			continue
		}
		// The label values of m's series that do not come from the data.
		fixed := func(m *endpoint.Metric, field map[string]string) ownedSeries {
			o := ownedSeries{m.Name, map[string]string{}}
			for _, l := range m.Labels {
				if l == "endpoint" {
					o.labels[l] = e.Label
				} else if v, ok := field[l]; ok {
					o.labels[l] = v
				} else if v, ok := e.Labels[l]; ok {
					o.labels[l] = v
				}
			}
			return o
		}
		fromFields := map[*endpoint.Metric]bool{}
		for _, f := range e.Fields {
			if f.Metric != nil {
				fromFields[f.Metric] = true
				out = append(out, fixed(f.Metric, f.Labels))
			}
		}
		for _, m := range e.Metrics() {
			if !fromFields[m] {
				out = append(out, fixed(m, nil))
			}
		}
	}
	return out
}

func hasPrefix(s map[string]float64, prefix string) bool {
	for k := range s {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

func TestGoldenOutput(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, simulator.Config{Seed: 1, Events: 40, PageSize: 15, Briefings: 4}, nil)
		golden := filepath.Join("testdata", "simulator.prom")
		// Durations vary from run to run; everything else is fixed by seed and
		// clock. The series of the API's data come from the descriptions, so a
		// new endpoint's are compared as soon as it is described.
		names := []string{"global_stability_up", "global_stability_scrape_success", "global_stability_api_backoff_seconds",
			"global_stability_label_values_dropped", "global_stability_invalid_values"}
		for _, ep := range endpoint.All() {
			for _, m := range ep.Metrics() {
				if !slices.Contains(names, m.Name) {
					names = append(names, m.Name)
				}
			}
		}
		descs := make(chan *prometheus.Desc, 100)
		e.scraper.NewExporter(context.Background()).Describe(descs)
		close(descs)
		if len(descs) != len(names)+1 {
			t.Errorf("the exporter describes %d series; the golden file compares %d and leaves out global_stability_scrape_duration_seconds: compare the new one too", len(descs), len(names))
		}
		if *update {
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(e.scraper.NewExporter(context.Background()))
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			for _, mf := range mfs {
				if slices.Contains(names, mf.GetName()) {
					if _, err := expfmt.MetricFamilyToText(&buf, mf); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := os.WriteFile(golden, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		want, err := os.Open(golden)
		if err != nil {
			t.Fatalf("%v (run go test -update to create it)", err)
		}
		defer want.Close()
		if err := testutil.CollectAndCompare(e.scraper.NewExporter(context.Background()), want, names...); err != nil {
			t.Error(err)
		}
		problems, err := testutil.CollectAndLint(e.scraper.NewExporter(context.Background()))
		if err != nil || len(problems) > 0 {
			t.Errorf("lint: %v %v", err, problems)
		}
	})
}

func TestWholeContractWhenHealthy(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, simulator.Config{}, nil)
		code, body := e.scrape(t, "10")
		s := series(t, body)
		if code != 200 || s["global_stability_up"] != 1 {
			t.Fatalf("status %d, up %v\n%s", code, s["global_stability_up"], body)
		}
		for _, endpoint := range endpointLabels() {
			if s[fmt.Sprintf("global_stability_scrape_success{endpoint=%q}", endpoint)] != 1 {
				t.Errorf("endpoint %s: scrape_success not 1", endpoint)
			}
			if _, ok := s[fmt.Sprintf("global_stability_scrape_duration_seconds{endpoint=%q}", endpoint)]; !ok {
				t.Errorf("endpoint %s: no scrape_duration_seconds", endpoint)
			}
			for _, o := range owned(endpoint) {
				if !o.in(s) {
					t.Errorf("endpoint %s: no series %s", endpoint, o)
				}
			}
		}
		if e.logs.String() != "" {
			t.Errorf("a healthy scrape logged: %s", e.logs)
		}
	})
}

// TestPartialFailure breaks one endpoint at a time: it alone reports
// failure and loses its series; everything else is whole; /metrics is 200.
func TestPartialFailure(t *testing.T) {
	for _, broken := range endpointLabels() {
		t.Run(broken, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				e := newEnv(t, simulator.Config{Events: 30, PageSize: 10}, nil)
				e.sim.SetFault(broken, simulator.Fault{Kind: simulator.FaultStatus, Status: 503})
				code, body := e.scrape(t, "")
				s := series(t, body)
				if code != 200 || s["global_stability_up"] != 0 {
					t.Fatalf("status %d up %v, want 200 and up 0", code, s["global_stability_up"])
				}
				for _, endpoint := range endpointLabels() {
					want := 1.0
					if endpoint == broken {
						want = 0
					}
					if got := s[fmt.Sprintf("global_stability_scrape_success{endpoint=%q}", endpoint)]; got != want {
						t.Errorf("scrape_success{endpoint=%q} = %v, want %v", endpoint, got, want)
					}
					for _, o := range owned(endpoint) {
						if o.in(s) != (endpoint != broken) {
							t.Errorf("series %s present=%v with %s broken", o, o.in(s), broken)
						}
					}
				}
				logs := e.logs.String()
				if strings.Count(logs, "\n") != 1 || !strings.Contains(logs, "failed_endpoints="+broken+" ") || !strings.Contains(logs, "503") {
					t.Errorf("want one log line naming %s and the status, got:\n%s", broken, logs)
				}
				// The fault clears: the next scrape is whole again.
				e.sim.ClearFaults()
				if _, body := e.scrape(t, ""); series(t, body)["global_stability_up"] != 1 {
					t.Errorf("after the fault cleared, up is not 1")
				}
			})
		})
	}
}

func TestFailureOnALaterPageDropsTheWholeEndpoint(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		var calls int
		sim := simulator.New(simulator.Config{Key: testKey, Events: 30, PageSize: 10, Now: func() time.Time { return fixedNow }})
		upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/conflict") && r.URL.Query().Has("cursor") {
				calls++
				if calls == 2 { // the third page
					http.Error(w, "boom", http.StatusInternalServerError)
					return
				}
			}
			sim.ServeHTTP(w, r)
		})
		e := newEnv(t, simulator.Config{}, upstream)
		_, body := e.scrape(t, "")
		s := series(t, body)
		if s[`global_stability_scrape_success{endpoint="conflict"}`] != 0 || hasPrefix(s, "global_stability_conflict_events") {
			t.Errorf("a failed third page must fail conflict and drop every conflict series, got:\n%s", body)
		}
		if !strings.Contains(e.logs.String(), "page 3") {
			t.Errorf("log should name the page: %s", e.logs)
		}
	})
}

func TestCollectorToggles(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, simulator.Config{}, nil, func(c *collector.Config) { c.Endpoints = []*endpoint.Endpoint{endpoint.Overview} })
		_, body := e.scrape(t, "")
		s := series(t, body)
		if got := e.sim.TotalRequests(); got != 1 || s["global_stability_up"] != 1 {
			t.Errorf("with every optional collector off: %d requests, up %v; want only the overview", got, s["global_stability_up"])
		}
		if hasPrefix(s, `global_stability_scrape_success{endpoint="conflict"}`) || hasPrefix(s, "global_stability_pillar_delta_24h") {
			t.Errorf("disabled endpoints still reported:\n%s", body)
		}
	})
}

// fakeAPI serves fixed bodies by endpoint label, to test what the
// simulator never sends.
func fakeAPI(bodies map[string]string) http.Handler {
	// Any other described endpoint the simulator serves, so that a test
	// written before an endpoint was added still sees it answer.
	sim := simulator.New(simulator.Config{Key: testKey, Now: func() time.Time { return fixedNow }})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, ok := bodies[strings.TrimPrefix(r.URL.Path, "/v1/")]
		if !ok {
			r.Header.Set("Authorization", "Bearer "+testKey)
			sim.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, body)
	})
}

func TestLabelValuesAreEscapedAndCapped(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		// Plain text that the exposition format escapes (a backslash is not
		// plain: such a name is left out, TestTheKeyNeverLeavesThroughAnEscape).
		weird := []string{"ünïcødé ☢ 指标", `quote " inside`, "Riots & protests, 5% more", "new\nline", "dup", "dup"}
		var inds []string
		for i, k := range weird {
			inds = append(inds, fmt.Sprintf(`{"key":%q,"value":%d}`, k, i))
		}
		api := fakeAPI(healthyBodies(func(p string) string {
			return `{"pillar":"` + p + `","delta_24h":0.5,"indicators":[` + strings.Join(inds, ",") + `],"as_of":"2026-11-22T00:00:00Z"}`
		}, `{"score":50,"trend":"vers le \"haut\"\n","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`))
		e := newEnv(t, simulator.Config{}, api, func(c *collector.Config) { c.Endpoint.MaxLabelValues = 3 })
		code, body := e.scrape(t, "")
		s := series(t, body)
		if code != 200 || s["global_stability_up"] != 1 {
			t.Fatalf("status %d up %v\n%s", code, s["global_stability_up"], body)
		}
		if s[`global_stability_trend{trend="vers le \"haut\"\n"}`] != 1 {
			t.Errorf("trend label did not round-trip:\n%s", body)
		}
		// The cap is per pillar: each keeps its first three keys, in the API's order.
		for _, p := range endpoint.Pillars {
			for i, k := range weird[:3] {
				key := fmt.Sprintf(`global_stability_pillar_indicator{indicator=%q,pillar=%q}`, k, p)
				if v, ok := s[key]; !ok || v != float64(i) {
					t.Errorf("%s = %v, %v; want %d", key, v, ok, i)
				}
			}
		}
		// 4 pillars × (1 over the cap + 2 repeats) = 12 dropped, 12 kept.
		if n := countPrefix(s, "global_stability_pillar_indicator{"); n != 12 || s[`global_stability_label_values_dropped{metric="global_stability_pillar_indicator"}`] != 12 {
			t.Errorf("kept %d indicator series, dropped %v; want 12 kept and 12 dropped", n, s[`global_stability_label_values_dropped{metric="global_stability_pillar_indicator"}`])
		}
		if !strings.Contains(e.logs.String(), "series left out") {
			t.Errorf("dropping series must be logged: %s", e.logs)
		}
		// No events: the count is 0 and the undefined aggregates are absent.
		if v, ok := s["global_stability_conflict_events"]; !ok || v != 0 || hasPrefix(s, "global_stability_conflict_escalation") || hasPrefix(s, "global_stability_briefing_latest") {
			t.Errorf("empty lists: want count 0 and no max/mean/latest:\n%s", body)
		}
		promtoolCheck(t, body)
	})
}

// healthyBodies is a valid body for every endpoint, with the drilldowns
// from drilldown(pillar) and the overview given.
func healthyBodies(drilldown func(pillar string) string, overview string) map[string]string {
	bodies := map[string]string{
		"global-stability": overview,
		"conflict":         `{"events":[],"next_cursor":null}`,
		"briefings":        `{"briefings":[],"next_cursor":null}`,
		"summaries":        `{"summary":"s","as_of":"2026-11-22T00:00:00Z"}`,
	}
	for _, p := range endpoint.Pillars {
		bodies["global-stability/pillar/"+string(p)] = drilldown(string(p))
	}
	return bodies
}

func countPrefix(s map[string]float64, prefix string) int {
	n := 0
	for k := range s {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// promtoolCheck runs `promtool check metrics` when promtool is installed
// (CI installs it, so there it always runs).
func promtoolCheck(t *testing.T, body string) {
	t.Helper()
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("promtool not found, and CI must not skip this check")
		}
		t.Log("promtool not installed; skipping promtool check metrics")
		return
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestPromtoolCheckMetricsOnSimulator(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, simulator.Config{}, nil)
		_, body := e.scrape(t, "")
		promtoolCheck(t, body)
	})
}

func TestConflictGrid(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		ev := func(id string, lat, lon, esc float64) string {
			return fmt.Sprintf(`{"id":%q,"lat":%g,"lon":%g,"actors":["a"],"category":"battles","escalation":%g,"occurred_at":"2026-11-22T00:00:00Z"}`, id, lat, lon, esc)
		}
		events := []string{
			ev("evt_1", -30, 10, 0.2), // [-30, -25) → -27.5; [10, 15) → 12.5
			ev("evt_2", -25.0001, 14.99, 0.9),
			ev("evt_3", -25, 10, 0.5), // -25 starts the next cell
			ev("evt_4", 90, 180, 0.1), // North Pole joins the top cell; 180°E is 180°W
			ev("evt_5", -90, -180, 0.3),
		}
		api := fakeAPI(map[string]string{
			"global-stability": `{"score":50,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`,
			"conflict":         `{"events":[` + strings.Join(events, ",") + `],"next_cursor":null}`,
		})
		e := newEnv(t, simulator.Config{}, api, func(c *collector.Config) {
			c.Endpoints = []*endpoint.Endpoint{endpoint.Overview, endpoint.Conflict}
		})
		_, body := e.scrape(t, "")
		s := series(t, body)
		want := map[string]float64{
			`global_stability_conflict_events_by_cell{lat="-27.5",lon="12.5"}`:         2,
			`global_stability_conflict_escalation_max_by_cell{lat="-27.5",lon="12.5"}`: 0.9,
			`global_stability_conflict_events_by_cell{lat="-22.5",lon="12.5"}`:         1,
			`global_stability_conflict_events_by_cell{lat="87.5",lon="-177.5"}`:        1,
			`global_stability_conflict_events_by_cell{lat="-87.5",lon="-177.5"}`:       1,
		}
		for k, v := range want {
			if got, ok := s[k]; !ok || got != v {
				t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
			}
		}

		// The label cap applies: with room for one cell, only the busiest stays.
		e = newEnv(t, simulator.Config{}, api, func(c *collector.Config) {
			c.Endpoints = []*endpoint.Endpoint{endpoint.Overview, endpoint.Conflict}
			c.Endpoint.MaxLabelValues = 1
			c.Endpoint.GridDegrees = 10
		})
		_, body = e.scrape(t, "")
		s = series(t, body)
		if s[`global_stability_conflict_events_by_cell{lat="-25",lon="15"}`] != 3 ||
			s[`global_stability_label_values_dropped{metric="global_stability_conflict_events_by_cell"}`] != 2 {
			t.Errorf("at 10° with a cap of 1, want the busiest cell (3 events) and 2 dropped:\n%s", body)
		}
	})
}
