// SPDX-License-Identifier: Apache-2.0

package targets_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/simulator"
	"github.com/global-stability/global_stability_exporter/targets"
)

// counted names, for each counter of the exporter, the paths that must
// count it (a new counter without an entry fails the test); every other
// path must leave it as it was.
var counted = map[string][]string{
	"global_stability_exporter_scrapes_total":     {"a scrape", "a scrape of fresh answers", "a scrape of 304s", "a scrape of bodies too large"},
	"global_stability_api_requests_total":         {"a scrape", "a scrape of 304s", "a scrape of bodies too large"},
	"global_stability_api_received_bytes_total":   {"a scrape"},
	"global_stability_api_responses_reused_total": {"a scrape of fresh answers", "a scrape of 304s"},
}

// counterPath is something a user or the API does; only do is counted.
type counterPath struct {
	name    string
	api     simulator.Config // the account's API; tooLarge: every body over its limit
	targets bool             // with a targets' file only
	prepare func(l *layout)  // before, not counted
	do      func(t *testing.T, l *layout)
}

var counterPaths = []counterPath{
	{name: "a scrape", do: func(t *testing.T, l *layout) { l.want(t, http.MethodGet, 200) }},
	{name: "a scrape of fresh answers", api: simulator.Config{CacheControl: "max-age=300"},
		prepare: func(l *layout) { l.scrape(http.MethodGet) }, do: func(t *testing.T, l *layout) { l.want(t, http.MethodGet, 200) }},
	{name: "a scrape of 304s", api: simulator.Config{Validators: true},
		prepare: func(l *layout) { l.scrape(http.MethodGet) }, do: func(t *testing.T, l *layout) { l.want(t, http.MethodGet, 200) }},
	{name: "a scrape of bodies too large", do: func(t *testing.T, l *layout) { l.set(&l.tooLarge); l.want(t, http.MethodGet, 200) }},
	{name: "a HEAD", do: func(t *testing.T, l *layout) { l.want(t, http.MethodHead, 200) }},
	{name: "a scrape refused at --web.max-requests", do: func(t *testing.T, l *layout) {
		l.set(&l.hold) // one scrape in flight takes the one place; its API answers once this is done
		held := make(chan struct{})
		go func() { defer close(held); l.scrape(http.MethodGet) }()
		<-l.reached
		l.counts = l.read(t) // what the scrape in flight counted is not this path's
		l.want(t, http.MethodGet, http.StatusServiceUnavailable)
		l.after = l.read(t)
		close(l.release)
		<-held
	}},
	{name: "a probe of a name that is no target", targets: true, do: func(t *testing.T, l *layout) {
		for _, query := range []string{"target=nope", "target=", "target=a&target=a"} {
			if w := l.serve(http.MethodGet, "/probe?"+query); w.Code != http.StatusBadRequest {
				t.Errorf("?%s: %d, want 400", query, w.Code)
			}
		}
	}},
}

// layout is an exporter of one account on its metrics path, or of a
// targets' file on /probe, with its registry of long-lived series as main
// builds it, at --web.max-requests=1.
type layout struct {
	gather        func() ([]*dto.MetricFamily, error)
	serve         func(method, target string) *httptest.ResponseRecorder
	path          string
	counts, after map[string]float64 // set by a path that reads for itself

	mu               sync.Mutex
	tooLarge, hold   bool
	once             sync.Once
	reached, release chan struct{}
}

// set turns on one of the API's ways.
func (l *layout) set(way *bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	*way = true
}

func (l *layout) scrape(method string) *httptest.ResponseRecorder { return l.serve(method, l.path) }

func (l *layout) want(t *testing.T, method string, code int) {
	t.Helper()
	if w := l.scrape(method); w.Code != code {
		t.Fatalf("%s %s: %d, want %d\n%s", method, l.path, w.Code, code, w.Body)
	}
}

// read sums each counter of the registry over its series.
func (l *layout) read(t *testing.T) map[string]float64 {
	t.Helper()
	fams, err := l.gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fams {
		if f.GetType() == dto.MetricType_COUNTER {
			for _, m := range f.GetMetric() {
				out[f.GetName()] += m.GetCounter().GetValue()
			}
		}
	}
	return out
}

// upstream is the account's API, as the path and the layout say.
func (l *layout) upstream(sim *simulator.Simulator) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		tooLarge, hold := l.tooLarge, l.hold
		l.mu.Unlock()
		if hold {
			l.once.Do(func() { close(l.reached) })
			<-l.release
		}
		if tooLarge {
			w.Header().Set("Content-Length", strconv.Itoa(16<<20+1)) // over either limit
			_, _ = w.Write([]byte(`{"` + strings.Repeat("x", 4096))) // all there will be
			return
		}
		sim.ServeHTTP(w, r)
	})
}

func newLayout(t *testing.T, named bool, api simulator.Config) *layout {
	t.Helper()
	const key = "key-counted-0123456789"
	l := &layout{reached: make(chan struct{}), release: make(chan struct{})}
	api.Key = key
	// The API's data moves each minute, and a scrape that straddles a
	// minute would see new bodies instead of 304s: its clock stands still.
	now := time.Now()
	api.Now = func() time.Time { return now }
	srv := httptest.NewServer(l.upstream(simulator.New(api)))
	t.Cleanup(srv.Close)
	env := newEnv(1) // a targets' file's, as main builds it
	if !named {      // the one account's
		env.LabelByTarget, env.reg = false, prometheus.NewRegistry()
		env.API, env.Scrapes = collector.NewAPIMetrics(), handler.NewScrapesCounter()
		env.reg.MustRegister(env.API.Collectors()...)
		env.reg.MustRegister(env.Scrapes)
	}
	l.gather = env.reg.Gather
	if named {
		set, err := newSet(targetsFile(t, t.TempDir(), map[string]*account{"a": {key: key, srv: srv}}, nil, "a"), defaults(), env.Env)
		if err != nil {
			t.Fatal(err)
		}
		l.path, l.serve = "/probe?target=a", func(method, target string) *httptest.ResponseRecorder {
			w := httptest.NewRecorder()
			set.ServeProbe(w, httptest.NewRequest(method, target, nil))
			return w
		}
		return l
	}
	s := defaults()
	s.APIURL, s.Key = srv.URL, func() (string, error) { return key, nil }
	target, err := targets.New("", s, env.Env)
	if err != nil {
		t.Fatal(err)
	}
	h := target.Handler(env.reg)
	l.path, l.serve = "/metrics", func(method, target string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(method, target, nil))
		return w
	}
	return l
}

// TestEveryCounterCountsWhatItsHelpSays walks every counter of both
// registries, the one account's and a targets' file's, through every path
// that could move it: it counts on the paths its help says it counts, and
// stays as it was on the others (a HEAD, a scrape refused at
// --web.max-requests, a probe of no target, answers reused or confirmed, a
// body refused for its length). Each help says what it leaves out.
func TestEveryCounterCountsWhatItsHelpSays(t *testing.T) {
	for _, named := range []bool{false, true} {
		seen := map[string]bool{}
		for _, p := range counterPaths {
			if p.targets && !named {
				continue
			}
			t.Run(fmt.Sprintf("targets' file %v/%s", named, p.name), func(t *testing.T) {
				l := newLayout(t, named, p.api)
				if p.prepare != nil {
					p.prepare(l)
				}
				before := l.read(t)
				p.do(t, l)
				after := l.read(t)
				if l.counts != nil {
					before, after = l.counts, l.after
				}
				for name := range after {
					seen[name] = true
					want, ok := counted[name]
					if !ok {
						t.Errorf("%s: no entry in counted: say which paths count it", name)
						continue
					}
					if moved := after[name] != before[name]; moved != slices.Contains(want, p.name) {
						t.Errorf("%s went from %v to %v; counted on this path: %v", name, before[name], after[name], slices.Contains(want, p.name))
					}
				}
			})
		}
		for name := range counted {
			if !seen[name] {
				t.Errorf("targets' file %v: %s never showed: is it still a counter of the exporter?", named, name)
			}
		}
	}
	fams, err := newLayout(t, true, simulator.Config{}).gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetType() == dto.MetricType_COUNTER && !strings.Contains(f.GetHelp(), "Not counted: ") {
			t.Errorf("%s: its help does not say what it leaves out", f.GetName())
		}
	}
}
