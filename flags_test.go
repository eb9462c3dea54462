// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/pem"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"golang.org/x/crypto/bcrypt"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
	"github.com/global-stability/global_stability_exporter/targets"
)

// flagCase sets one flag (or a pair that only works together) to a value
// other than its default and observes the effect on the running binary:
// the API requests it sends, what /metrics holds, how the HTTP side
// answers. Each case runs twice, once with --flags and once with only the
// environment variables docs/configuration.md documents, so that a flag that parses
// but never reaches its effect, or a variable spelled otherwise than the
// README says, fails here.
type flagCase struct {
	name string
	// flags and env are the same settings: --name=value, and VAR=value.
	flags []string
	env   []string
	// sim configures the simulator behind the exporter; upstream, if set,
	// wraps it.
	sim      simulator.Config
	upstream func(sim *simulator.Simulator) http.Handler
	tls      bool // serve the upstream over TLS with a certificate nobody trusts
	// observe checks the effect.
	observe func(t *testing.T, r *flagRun)
}

// flagRun is one exporter started for a flagCase, against its upstream.
type flagRun struct {
	*exporter
	sim      *simulator.Simulator
	upstream http.Handler
}

// fetch GETs path with the given scrape timeout header ("" for none).
func (r *flagRun) fetch(t *testing.T, scheme, path, timeout string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, scheme+"://"+r.addr+path, nil)
	if timeout != "" {
		req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// metrics scrapes /metrics (scrape timeout 5s) and parses it.
func (r *flagRun) metrics(t *testing.T) promtext.Samples {
	t.Helper()
	code, body := r.fetch(t, "http", "/metrics", "5")
	if code != 200 {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	return parseMetrics(t, body)
}

func success(s promtext.Samples, endpoint string) float64 {
	if v, ok := s.Get("global_stability_scrape_success", "endpoint", endpoint); ok {
		return v
	}
	return -1
}

func hangOn(path string) func(*simulator.Simulator) http.Handler {
	return func(sim *simulator.Simulator) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == path {
				<-r.Context().Done()
				return
			}
			sim.ServeHTTP(w, r)
		})
	}
}

// documentEndpoints and pageEndpoints are the endpoint labels under each
// body limit, from the descriptions: a new endpoint is checked under its
// limit as soon as it is described.
var documentEndpoints, pageEndpoints = endpointsUnder(client.DocumentLimit), endpointsUnder(client.PageLimit)

func endpointsUnder(l client.Limit) []string {
	var out []string
	for _, e := range endpoint.All() {
		if e.Limit == l {
			out = append(out, e.Label)
		}
	}
	return out
}

// limitsSim serves the body limits' cases: the clock stopped, so that
// it answers each endpoint with the bytes belowEveryBody measured.
var limitsSim = simulator.Config{Events: 120, PageSize: 50, Briefings: 10, Now: func() time.Time { return limitsNow }}

var limitsNow = time.Now()

// belowEveryBody is a body limit one byte under the smallest first answer
// cfg's simulator gives any endpoint: every endpoint under that limit
// fails, and so would every other one if the limit reached it.
func belowEveryBody(cfg simulator.Config) string {
	cfg.Key = secretKey
	sim := simulator.New(cfg)
	smallest := math.MaxInt
	for _, e := range endpoint.All() {
		req := httptest.NewRequest(http.MethodGet, "/v1/"+e.Label, nil)
		req.Header.Set("Authorization", "Bearer "+secretKey)
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			panic(fmt.Sprintf("the simulator answers %s with %d", e.Label, rec.Code))
		}
		smallest = min(smallest, rec.Body.Len())
	}
	return strconv.Itoa(smallest-1) + "B"
}

func wantSuccess(t *testing.T, s promtext.Samples, want float64, endpoints ...string) {
	t.Helper()
	for _, e := range endpoints {
		if got := success(s, e); got != want {
			t.Errorf("scrape_success{endpoint=%q} = %v, want %v", e, got, want)
		}
	}
}

var flagCases = []flagCase{
	{
		name:  "api.timeout bounds each request",
		flags: []string{"--api.timeout=1s"}, env: []string{"GLOBAL_STABILITY_API_TIMEOUT=1s"},
		upstream: hangOn("/v1/summaries"),
		observe: func(t *testing.T, r *flagRun) {
			// The scrape allows 4.5s; the request gives up after 1s.
			s := r.metrics(t)
			if d, _ := s.Get("global_stability_scrape_duration_seconds", "endpoint", "summaries"); success(s, "summaries") != 0 || d >= 3 {
				t.Errorf("a hanging summaries: success %v after %vs, want 0 after about 1s (the default would wait 4.5s)", success(s, "summaries"), d)
			}
		},
	},
	{
		name:  "api.timeout bounds a scrape without a timeout header",
		flags: []string{"--api.timeout=1s"}, env: []string{"GLOBAL_STABILITY_API_TIMEOUT=1s"},
		upstream: hangOn("/v1/summaries"),
		observe: func(t *testing.T, r *flagRun) {
			start := time.Now()
			code, body := r.fetch(t, "http", "/metrics", "")
			if took := time.Since(start); code != 200 || took > 8*time.Second || success(parseMetrics(t, body), "summaries") != 0 {
				t.Errorf("without a header: %d after %v, want 200 with summaries failed well before the 10s default", code, took)
			}
		},
	},
	{
		name:  "api.cursor-param names the cursor's parameter",
		flags: []string{"--api.cursor-param=after"}, env: []string{"GLOBAL_STABILITY_API_CURSOR_PARAM=after"},
		sim: simulator.Config{CursorParam: "after", Events: 120, PageSize: 50},
		observe: func(t *testing.T, r *flagRun) {
			// With the default "cursor", this API would send page 1 again: a loop.
			if v, _ := r.metrics(t).Get("global_stability_conflict_events"); v != 120 || r.sim.Requests("conflict") != 3 {
				t.Errorf("conflict_events = %v after %d requests, want 120 after 3", v, r.sim.Requests("conflict"))
			}
		},
	},
	{
		name:  "api.page-size-param and api.page-size ask for bigger pages",
		flags: []string{"--api.page-size-param=limit", "--api.page-size=100"},
		env:   []string{"GLOBAL_STABILITY_API_PAGE_SIZE_PARAM=limit", "GLOBAL_STABILITY_API_PAGE_SIZE=100"},
		sim:   simulator.Config{PageSizeParam: "limit", Events: 120, PageSize: 50},
		observe: func(t *testing.T, r *flagRun) {
			if v, _ := r.metrics(t).Get("global_stability_conflict_events"); v != 120 || r.sim.Requests("conflict") != 2 {
				t.Errorf("conflict_events = %v after %d requests, want 120 in pages of 100: 2 requests", v, r.sim.Requests("conflict"))
			}
		},
	},
	{
		name:  "api.max-pages bounds a walk",
		flags: []string{"--api.max-pages=2"}, env: []string{"GLOBAL_STABILITY_API_MAX_PAGES=2"},
		sim: simulator.Config{Events: 120, PageSize: 50},
		observe: func(t *testing.T, r *flagRun) {
			s := r.metrics(t)
			wantSuccess(t, s, 0, "conflict")
			wantSuccess(t, s, 1, "briefings")
			if r.sim.Requests("conflict") != 2 {
				t.Errorf("%d conflict requests, want the 2 allowed", r.sim.Requests("conflict"))
			}
		},
	},
	{
		name:  "api.max-response-bytes limits every page, no document",
		flags: []string{"--api.max-response-bytes=" + belowEveryBody(limitsSim)}, env: []string{"GLOBAL_STABILITY_API_MAX_RESPONSE_BYTES=" + belowEveryBody(limitsSim)},
		sim: limitsSim,
		observe: func(t *testing.T, r *flagRun) {
			s := r.metrics(t)
			wantSuccess(t, s, 0, pageEndpoints...)
			wantSuccess(t, s, 1, documentEndpoints...)
		},
	},
	{
		name:  "api.max-document-bytes limits every document, no page",
		flags: []string{"--api.max-document-bytes=" + belowEveryBody(limitsSim)}, env: []string{"GLOBAL_STABILITY_API_MAX_DOCUMENT_BYTES=" + belowEveryBody(limitsSim)},
		sim: limitsSim,
		observe: func(t *testing.T, r *flagRun) {
			s := r.metrics(t)
			wantSuccess(t, s, 0, documentEndpoints...)
			wantSuccess(t, s, 1, pageEndpoints...)
		},
	},
	{
		name:  "api.cache-ttl serves a finished collection again",
		flags: []string{"--api.cache-ttl=1h"}, env: []string{"GLOBAL_STABILITY_API_CACHE_TTL=1h"},
		observe: func(t *testing.T, r *flagRun) {
			r.metrics(t)
			r.metrics(t)
			if n := r.sim.Requests("global-stability"); n != 1 {
				t.Errorf("two scrapes within the TTL sent %d overview requests, want 1", n)
			}
		},
	},
	{
		name:  "no-api.http-cache downloads a body the API calls fresh",
		flags: []string{"--no-api.http-cache"}, env: []string{"GLOBAL_STABILITY_API_HTTP_CACHE=false"},
		sim: simulator.Config{Validators: true, CacheControl: "max-age=300"},
		observe: func(t *testing.T, r *flagRun) {
			r.metrics(t)
			s := r.metrics(t)
			if n := r.sim.Requests("global-stability"); n != 2 {
				t.Errorf("two scrapes of an answer fresh for 5 minutes sent %d overview requests, want 2", n)
			}
			if _, ok := s.Get("global_stability_api_requests_total", "endpoint", "global-stability", "code", "304"); ok {
				t.Error("validators were sent")
			}
		},
	},
	{
		name:  "api.summary-refresh-interval 0 asks for the summary every time",
		flags: []string{"--api.summary-refresh-interval=0"}, env: []string{"GLOBAL_STABILITY_API_SUMMARY_REFRESH_INTERVAL=0s"},
		observe: func(t *testing.T, r *flagRun) {
			r.metrics(t)
			r.metrics(t)
			if n := r.sim.Requests("summaries"); n != 2 {
				t.Errorf("two scrapes sent %d summary requests, want 2", n)
			}
		},
	},
	{
		name:  "api.tls.insecure-skip-verify accepts an unknown certificate",
		flags: []string{"--api.tls.insecure-skip-verify"}, env: []string{"GLOBAL_STABILITY_API_TLS_INSECURE_SKIP_VERIFY=true"},
		tls: true,
		observe: func(t *testing.T, r *flagRun) {
			if got := up(r.metrics(t)); got != 1 {
				t.Errorf("up = %v against a self-signed API, want 1", got)
			}
		},
	},
	{
		name:  "collector.pillars off",
		flags: []string{"--no-collector.pillars"}, env: []string{"GLOBAL_STABILITY_COLLECTOR_PILLARS=false"},
		observe: func(t *testing.T, r *flagRun) {
			s := r.metrics(t)
			if success(s, "global-stability/pillar/cyber") != -1 || len(s.Family("global_stability_pillar_indicator")) != 0 || r.sim.Requests("global-stability/pillar/cyber") != 0 {
				t.Error("the drilldowns were still collected")
			}
		},
	},
	{
		name:  "collector.conflict off",
		flags: []string{"--no-collector.conflict"}, env: []string{"GLOBAL_STABILITY_COLLECTOR_CONFLICT=false"},
		observe: func(t *testing.T, r *flagRun) {
			if s := r.metrics(t); success(s, "conflict") != -1 || r.sim.Requests("conflict") != 0 {
				t.Error("conflict was still collected")
			}
		},
	},
	{
		name:  "collector.briefings off",
		flags: []string{"--no-collector.briefings"}, env: []string{"GLOBAL_STABILITY_COLLECTOR_BRIEFINGS=false"},
		observe: func(t *testing.T, r *flagRun) {
			if s := r.metrics(t); success(s, "briefings") != -1 || r.sim.Requests("briefings") != 0 {
				t.Error("briefings were still collected")
			}
		},
	},
	{
		name:  "collector.summary off",
		flags: []string{"--no-collector.summary"}, env: []string{"GLOBAL_STABILITY_COLLECTOR_SUMMARY=false"},
		observe: func(t *testing.T, r *flagRun) {
			if s := r.metrics(t); success(s, "summaries") != -1 || r.sim.Requests("summaries") != 0 {
				t.Error("the summary was still collected")
			}
		},
	},
	{
		name:  "collector.conflict.grid-degrees sets the cell size",
		flags: []string{"--collector.conflict.grid-degrees=30"}, env: []string{"GLOBAL_STABILITY_COLLECTOR_CONFLICT_GRID_DEGREES=30"},
		observe: func(t *testing.T, r *flagRun) {
			cells := r.metrics(t).Family("global_stability_conflict_events_by_cell")
			if len(cells) == 0 {
				t.Fatal("no cells")
			}
			for k := range cells {
				for _, label := range []string{`lat="`, `lon="`} {
					v := k[strings.Index(k, label)+len(label):]
					centre, err := strconv.ParseFloat(v[:strings.IndexByte(v, '"')], 64)
					if err != nil || int(centre+180)%30 != 15 {
						t.Errorf("%s is not the centre of a 30° cell", k)
					}
				}
			}
		},
	},
	{
		name:  "collector.max-label-values caps the series",
		flags: []string{"--collector.max-label-values=3"}, env: []string{"GLOBAL_STABILITY_COLLECTOR_MAX_LABEL_VALUES=3"},
		observe: func(t *testing.T, r *flagRun) {
			s := r.metrics(t)
			if n := len(s.Family("global_stability_conflict_events_by_category")); n != 3 {
				t.Errorf("%d category series, want the cap of 3", n)
			}
			if v, _ := s.Get("global_stability_label_values_dropped", "metric", "global_stability_conflict_events_by_category"); v == 0 {
				t.Error("nothing counted as dropped")
			}
		},
	},
	{
		name:  "collector.max-series bounds the series of the API's data",
		flags: []string{"--collector.max-series=30"}, env: []string{"GLOBAL_STABILITY_COLLECTOR_MAX_SERIES=30"},
		observe: func(t *testing.T, r *flagRun) {
			s := r.metrics(t)
			// The few dozen series whose labels are fixed leave the capped
			// metrics a few series to share.
			if n := len(s.Family("global_stability_conflict_events_by_actor")); n == 0 || n > 8 {
				t.Errorf("%d actor series, want a share of what 30 leaves", n)
			}
			if v, _ := s.Get("global_stability_label_values_dropped", "metric", "global_stability_conflict_events_by_actor"); v == 0 {
				t.Error("nothing counted as dropped")
			}
		},
	},
	{
		name:  "web.telemetry-path moves the metrics",
		flags: []string{"--web.telemetry-path=/stability"}, env: []string{"GLOBAL_STABILITY_WEB_TELEMETRY_PATH=/stability"},
		observe: func(t *testing.T, r *flagRun) {
			code, body := r.fetch(t, "http", "/stability", "5")
			if code != 200 || up(parseMetrics(t, body)) != 1 {
				t.Errorf("/stability: %d", code)
			}
			if code, _ := r.fetch(t, "http", "/metrics", "5"); code == 200 {
				if _, body := r.fetch(t, "http", "/metrics", "5"); strings.Contains(body, "global_stability_up") {
					t.Error("/metrics still serves the metrics")
				}
			}
		},
	},
	{
		name:  "web.max-requests bounds concurrent scrapes",
		flags: []string{"--web.max-requests=1"}, env: []string{"GLOBAL_STABILITY_WEB_MAX_REQUESTS=1"},
		upstream: func(sim *simulator.Simulator) http.Handler {
			return &blocking{sim: sim, arrived: make(chan struct{}), release: make(chan struct{})}
		},
		observe: func(t *testing.T, r *flagRun) {
			api := r.upstream.(*blocking)
			first := make(chan int, 1)
			go func() { code, _ := r.fetch(t, "http", "/metrics", "10"); first <- code }()
			<-api.arrived // the first scrape is in flight
			if code, _ := r.fetch(t, "http", "/metrics", "10"); code != http.StatusServiceUnavailable {
				t.Errorf("a second scrape beside the first: %d, want 503", code)
			}
			api.Close()
			if code := <-first; code != 200 {
				t.Errorf("the first scrape: %d", code)
			}
		},
	},
	{
		name:  "web.timeout-offset is taken off the scrape timeout",
		flags: []string{"--web.timeout-offset=3s"}, env: []string{"GLOBAL_STABILITY_WEB_TIMEOUT_OFFSET=3s"},
		upstream: hangOn("/v1/summaries"),
		observe: func(t *testing.T, r *flagRun) {
			// 5s minus 3s: summaries gives up after 2s (the default offset: 4.5s).
			s := r.metrics(t)
			if d, _ := s.Get("global_stability_scrape_duration_seconds", "endpoint", "summaries"); success(s, "summaries") != 0 || d < 1.5 || d >= 3.5 {
				t.Errorf("a hanging summaries: success %v after %vs, want 0 after about 2s", success(s, "summaries"), d)
			}
		},
	},
	{
		name:  "web.config.file protects the endpoint",
		flags: []string{"--web.config.file=" + basicAuthConfig}, env: []string{"GLOBAL_STABILITY_WEB_CONFIG_FILE=" + basicAuthConfig},
		observe: func(t *testing.T, r *flagRun) {
			if code, _ := r.fetch(t, "http", "/metrics", "5"); code != http.StatusUnauthorized {
				t.Errorf("without credentials: %d, want 401", code)
			}
		},
	},
	{
		name:  "log.level=debug logs each request",
		flags: []string{"--log.level=debug"}, env: []string{"GLOBAL_STABILITY_LOG_LEVEL=debug"},
		observe: func(t *testing.T, r *flagRun) {
			r.metrics(t)
			r.waitForLog(t, `msg="API request"`)
		},
	},
	{
		name:  "log.format=json",
		flags: []string{"--log.format=json"}, env: []string{"GLOBAL_STABILITY_LOG_FORMAT=json"},
		observe: func(t *testing.T, r *flagRun) {
			if logs := r.waitForLog(t, "Listening on"); !strings.HasPrefix(logs, "{") {
				t.Errorf("not JSON:\n%s", logs)
			}
		},
	},
}

// basicAuthConfig is a web config file requiring basic auth, written when
// the test binary starts and removed by TestEveryFlagReachesItsEffect.
var basicAuthConfig = func() string {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		panic(err)
	}
	f, err := os.CreateTemp("", "gse-web-config-*.yml")
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(f, "basic_auth_users:\n  prometheus: %s\n", hash)
	f.Close()
	return f.Name()
}()

// blocking holds every request until Close, telling arrived about the
// first.
type blocking struct {
	sim              *simulator.Simulator
	arrived, release chan struct{}
	arrivedOnce      sync.Once
	releaseOnce      sync.Once
}

func (b *blocking) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b.arrivedOnce.Do(func() { close(b.arrived) })
	select {
	case <-b.release:
	case <-r.Context().Done():
		return
	}
	b.sim.ServeHTTP(w, r)
}

func (b *blocking) Close() { b.releaseOnce.Do(func() { close(b.release) }) }

// TestEveryFlagReachesItsEffect runs every flagCase with flags and with
// environment variables.
func TestEveryFlagReachesItsEffect(t *testing.T) {
	t.Cleanup(func() { os.Remove(basicAuthConfig) })
	for _, fc := range flagCases {
		for _, mode := range []string{"flag", "env"} {
			t.Run(fc.name+"/"+mode, func(t *testing.T) {
				t.Parallel()
				runFlagCase(t, fc, mode)
			})
		}
	}
}

// TestEveryFlagHasATestOfItsEffect: every flag the exporter has is given
// by a flagCase, or named here with the test that observes its effect, so
// a new flag without a test of what it does fails here.
func TestEveryFlagHasATestOfItsEffect(t *testing.T) {
	elsewhere := map[string]string{
		"api.url":            "TestAgainstAPIWithKeyFile",
		"api.key-file":       "TestAgainstAPIWithKeyFile",
		"api.tls.ca-file":    "TestUpstreamTLS, TestTLSCAFileFromTheEnvironment",
		"api.tls.cert-file":  "TestUpstreamTLS",
		"api.tls.key-file":   "TestUpstreamTLS",
		"demo":               "TestOneAccountHasNoProbe",
		"config.file":        "TestATargetsFileServesProbes",
		"web.listen-address": "TestListenAddressFromTheEnvironment",
		"web.systemd-socket": "exporter-toolkit's own",
		"help":               "TestHelpAndVersionGoToStdout",
		"version":            "TestHelpAndVersionGoToStdout",
	}
	given := map[string]bool{}
	for _, fc := range flagCases {
		for _, arg := range fc.flags {
			name, _, _ := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
			given[strings.TrimPrefix(name, "no-")] = true
		}
	}
	app := kingpin.New(exporterName, "")
	registerFlags(app)
	for _, f := range app.Model().Flags {
		if _, named := elsewhere[f.Name]; !given[f.Name] && !named && !f.Hidden { // kingpin's completion and man page aside
			t.Errorf("--%s: no flagCase gives it, and no other test of its effect is named here", f.Name)
		}
	}
}

func runFlagCase(t *testing.T, fc flagCase, mode string) {
	cfg := fc.sim
	cfg.Key = secretKey
	sim := simulator.New(cfg)
	var handler http.Handler = sim
	if fc.upstream != nil {
		handler = fc.upstream(sim)
	}
	var srv *httptest.Server
	if fc.tls {
		srv = httptest.NewTLSServer(handler)
	} else {
		srv = httptest.NewServer(handler)
	}
	t.Cleanup(srv.Close)
	if c, ok := handler.(interface{ Close() }); ok {
		t.Cleanup(c.Close) // before the server's Close, which waits for handlers
	}
	env := []string{"GLOBAL_STABILITY_API_KEY=" + secretKey, "GLOBAL_STABILITY_API_URL=" + srv.URL}
	var args []string
	if mode == "flag" {
		args = fc.flags
	} else {
		env = append(env, fc.env...)
	}
	fc.observe(t, &flagRun{exporter: startExporter(t, env, args...), sim: sim, upstream: handler})
}

// TestListenAddressFromTheEnvironment: GLOBAL_STABILITY_WEB_LISTEN_ADDRESS
// is where the exporter listens when the flag is not given.
func TestListenAddressFromTheEnvironment(t *testing.T) {
	e := started(t, execExporter([]string{"--demo"}, "GLOBAL_STABILITY_WEB_LISTEN_ADDRESS=127.0.0.1:0"))
	if !strings.HasPrefix(e.addr, "127.0.0.1:") { // not the default, every interface
		t.Errorf("listening on %s, want the variable's 127.0.0.1", e.addr)
	}
	if got := up(e.scrape(t)); got != 1 {
		t.Errorf("up = %v", got)
	}
}

// TestTLSCAFileFromTheEnvironment: GLOBAL_STABILITY_API_TLS_CA_FILE reaches
// the client as --api.tls.ca-file does (TestUpstreamTLS covers the flag).
func TestTLSCAFileFromTheEnvironment(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: secretKey})
	srv := httptest.NewTLSServer(sim)
	t.Cleanup(srv.Close)
	ca := writeFile(t, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})))
	e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey, "GLOBAL_STABILITY_API_URL=" + srv.URL, "GLOBAL_STABILITY_API_TLS_CA_FILE=" + ca})
	if got := up(e.scrape(t)); got != 1 {
		t.Errorf("with the CA from the environment, up = %v, want 1", got)
	}
}

// TestTheFlagsGiveTheDeclaredDefaults walks the declared settings: a
// command line and an environment that set none of them give each the
// default it declares. A default lost on its way to kingpin (a boolean
// flag's "true" taken for kingpin's own default, say) fails here.
func TestTheFlagsGiveTheDeclaredDefaults(t *testing.T) {
	app := kingpin.New(exporterName, "")
	c := registerFlags(app)
	for _, f := range app.Model().Flags {
		if f.Envar != "" {
			t.Setenv(f.Envar, "") // kingpin reads an empty variable as unset
		}
	}
	if _, err := app.Parse(nil); err != nil {
		t.Fatal(err)
	}
	var want targets.Settings
	for _, st := range want.List() {
		if err := st.Value.Set(st.Default); st.Default != "" && err != nil {
			t.Fatalf("--%s: its default %q: %v", st.Flag, st.Default, err)
		}
	}
	got := c.defaults.List()
	for i, st := range want.List() {
		if st.Flag != "" && got[i].Value.String() != st.Value.String() {
			t.Errorf("--%s with nothing set is %q, want its declared default %q", st.Flag, got[i].Value.String(), st.Value.String())
		}
	}
	if !targets.Same(c.defaults, want) {
		t.Errorf("the flags' settings with nothing set:\n%+v\nwant the declared defaults:\n%+v", c.defaults, want)
	}
}

// awkwardForms are ways to write a value that YAML reads its own way (a
// number in octal, hexadecimal or with an exponent, a boolean, null) or
// that a kind may refuse: each must mean the same to every setting from a
// flag, its variable and the targets' file.
var awkwardForms = []string{"020", "010", "00", "0x10", "0o17", "1_000", "5.0", "1e3", "+5", "-1", "yes", "on", "no", "TRUE", "~", "null", "", "5s", "1d", "16MiB", "a b"}

// TestEveryFormMeansTheSameEverywhere walks every setting that has a flag
// and a field with every awkward form: the flag, its environment variable
// and the file's field give the same problems, word for word but for how
// they name the setting, or none and the same value. An empty variable is
// unset, as kingpin reads it, so it is left out. An account's URL and key
// file are required, and the key file read, by the file alone: that is
// where a target's account comes from, not how a value reads (the flags
// require them by mode: TestConfigurationErrorsStopStartUp).
func TestEveryFormMeansTheSameEverywhere(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.key"), []byte(secretKey), 0o600); err != nil {
		t.Fatal(err)
	}
	var list []targets.Setting
	var names []string // --flag="v" (VARIABLE) as field "v", --flag (VARIABLE) as field
	for _, st := range (&targets.Settings{}).List() {
		if st.Flag != "" && st.Field != "" {
			list = append(list, st)
			names = append(names, "--"+st.Flag+" ("+envar(st.Flag)+")", st.Field, "--"+st.Flag+"=", st.Field+" ", " ("+envar(st.Flag)+")", "")
		}
	}
	asField := strings.NewReplacer(names...)
	// verdict is the problems, or else the value the setting took.
	verdict := func(s targets.Settings, field string, problems []string) []string {
		for _, st := range s.List() {
			if st.Field == field && len(problems) == 0 {
				problems = []string{"value " + st.Value.String()}
			}
		}
		return problems
	}
	fromFlags := func(field string, args ...string) []string {
		app := kingpin.New(exporterName, "")
		c := registerFlags(app)
		problems, _ := parseArgs(app, args)
		return verdict(c.defaults, field, messages(append(problems, c.defaults.Validate(nameFlag)...), asField.Replace))
	}
	app := kingpin.New(exporterName, "")
	flags := registerFlags(app) // the file's defaults
	if problems, _ := parseArgs(app, nil); len(problems) > 0 {
		t.Fatal(problems)
	}
	account := regexp.MustCompile(`^(api_url is required|api_key_file is required|api_key_file: file )`)
	for _, st := range list {
		for _, form := range awkwardForms {
			flag := fromFlags(st.Field, "--"+st.Flag+"="+form)
			if form != "" {
				t.Setenv(envar(st.Flag), form)
				if env := fromFlags(st.Field); !slices.Equal(env, flag) {
					t.Errorf("%s=%q: the variable gives %q, the flag %q", envar(st.Flag), form, env, flag)
				}
				os.Unsetenv(envar(st.Flag))
			}
			fields := map[string]string{"name": "a", "api_url": "https://a.example.com", "api_key_file": "a.key", st.Field: form}
			var yaml strings.Builder
			yaml.WriteString("targets:\n  -")
			for _, f := range slices.Sorted(maps.Keys(fields)) {
				key, value := f, fields[f]
				if parent, child, nested := strings.Cut(f, "."); nested { // a.b is written a: {b: value}
					key, value = parent, "{"+child+": "+value+"}"
				}
				fmt.Fprintf(&yaml, " %s: %s\n   ", key, value)
			}
			path := filepath.Join(dir, "targets.yml")
			if err := os.WriteFile(path, []byte(yaml.String()), 0o600); err != nil {
				t.Fatal(err)
			}
			named, err := targets.Load(path, flags.defaults)
			var file []string
			if err != nil {
				file = messages(err.(interface{ Unwrap() []error }).Unwrap(), func(m string) string { return strings.TrimPrefix(m, "targets[0] (a): ") })
				file = slices.DeleteFunc(file, account.MatchString)
			} else {
				file = verdict(named[0].Settings, st.Field, nil)
			}
			accountOnly := err != nil && len(file) == 0 && strings.HasPrefix(flag[0], "value ") // the value read, and the file failed on the account alone
			if !slices.Equal(file, flag) && !accountOnly {
				t.Errorf("%s: %q: the file gives %q, the flag %q", st.Field, form, file, flag)
			}
		}
	}
}

// messages are errs' texts, each passed through name, sorted.
func messages(errs []error, name func(string) string) []string {
	var out []string
	for _, err := range errs {
		out = append(out, name(err.Error()))
	}
	slices.Sort(out)
	return out
}
