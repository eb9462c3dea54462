// SPDX-License-Identifier: Apache-2.0

package targets_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
	"github.com/global-stability/global_stability_exporter/targets"
)

// account is one simulated API account on a server of its own, recording
// the Authorization of every request it receives.
type account struct {
	key string
	sim *simulator.Simulator
	srv *httptest.Server

	mu   sync.Mutex
	auth []string
}

func newAccount(t *testing.T, key string, seed uint64, wrap func(http.Handler) http.Handler) *account {
	t.Helper()
	a := &account{key: key, sim: simulator.New(simulator.Config{Key: key, Seed: seed, Validators: true, CacheControl: "max-age=300"})}
	var h http.Handler = a.sim
	if wrap != nil {
		h = wrap(h)
	}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		a.auth = append(a.auth, r.Header.Get("Authorization"))
		a.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(a.srv.Close)
	return a
}

// requests returns how many requests the account received, and forgets them.
func (a *account) requests() (n int, auth []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n, auth = len(a.auth), a.auth
	a.auth = nil
	return n, auth
}

// env is a process's shared part, with its own registry to read the
// per-target series from.
type testEnv struct {
	targets.Env
	reg *prometheus.Registry
}

func newEnv(maxRequests int) testEnv {
	e := testEnv{Env: targets.Env{Logger: log.NewNopLogger(), Keys: redact.New(), API: collector.NewAPIMetrics("target"),
		Scrapes: handler.NewScrapesCounter("target"), TimeoutOffset: 500 * time.Millisecond, MaxRequests: maxRequests, LabelByTarget: true},
		reg: prometheus.NewRegistry()}
	e.reg.MustRegister(e.API.Collectors()...)
	e.reg.MustRegister(e.Scrapes)
	return e
}

// targetsFile writes a targets' file naming each account by name, with
// extra YAML lines for some, and a key file for each.
func targetsFile(t *testing.T, dir string, accounts map[string]*account, extra map[string]string, order ...string) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("targets:\n")
	for _, name := range order {
		a := accounts[name]
		keyFile := filepath.Join(dir, name+".key")
		writeAtomically(t, keyFile, a.key)
		fmt.Fprintf(&b, "  - name: %s\n    api_url: %s\n    api_key_file: %s\n%s", name, a.srv.URL, keyFile, extra[name])
	}
	path := filepath.Join(dir, "targets.yml")
	writeAtomically(t, path, b.String())
	return path
}

// newSet loads the targets' file at path with d, the defaults, and builds its
// set, as the exporter does at start-up.
func newSet(path string, d targets.Settings, env targets.Env) (*targets.Set, error) {
	named, err := targets.Load(path, d)
	if err != nil {
		return nil, err
	}
	return targets.NewSet(path, d, named, env)
}

// loadSet writes the accounts' targets' file in dir, in order, and loads
// it with the flags' defaults.
func loadSet(t *testing.T, dir string, accounts map[string]*account, env testEnv, order ...string) (*targets.Set, string) {
	t.Helper()
	path := targetsFile(t, dir, accounts, nil, order...)
	set, err := newSet(path, defaults(), env.Env)
	if err != nil {
		t.Fatal(err)
	}
	return set, path
}

// writeAtomically replaces a file by renaming a new one over it, as a
// Kubernetes volume or a careful operator does: a reader sees the old file
// or the new, never half of one.
func writeAtomically(t *testing.T, path, content string) {
	t.Helper()
	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// probe GETs /probe?<query> through set's handler and returns the status
// and body.
func probe(t *testing.T, set *targets.Set, query string) (int, string) {
	t.Helper()
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/probe?"+query, nil).WithContext(context.Background())
	r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
	set.ServeProbe(w, r)
	return w.Code, w.Body.String()
}

func samples(t *testing.T, body string) promtext.Samples {
	t.Helper()
	s, err := promtext.Parse(body)
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return s
}

// TestEachTargetIsItsOwnAccount: a probe answers with its target's data
// alone, under the names and labels /metrics gives for one account (no
// target label inside: Prometheus' relabeling adds one), and each key goes
// to its own API only.
func TestEachTargetIsItsOwnAccount(t *testing.T) {
	accounts := map[string]*account{
		"prod":    newAccount(t, "key-prod-0123456789", 1, nil),
		"staging": newAccount(t, "key-staging-0123456789", 2, nil),
	}
	env := newEnv(40)
	set, err := newSet(targetsFile(t, t.TempDir(), accounts, nil, "prod", "staging"), defaults(), env.Env)
	if err != nil {
		t.Fatal(err)
	}
	for name, a := range accounts {
		code, body := probe(t, set, "target="+name)
		s := samples(t, body)
		if v, ok := s.Get("global_stability_up"); code != 200 || !ok || v != 1 {
			t.Fatalf("%s: %d, up %v\n%s", name, code, v, body)
		}
		for series := range s { // promtext's keys: name{label="value",...}, labels sorted
			if strings.Contains(series, `{target="`) || strings.Contains(series, `,target="`) {
				t.Errorf("%s: %s has a target label inside the probe", name, series)
			}
		}
		if _, ok := s.Get("global_stability_api_requests_total", "endpoint", "summaries", "code", "200"); ok {
			t.Errorf("%s: a probe carries the exporter's own counters", name)
		}
		n, auth := a.requests()
		for _, h := range auth {
			if h != "Bearer "+a.key {
				t.Errorf("%s's API received %q", name, h)
			}
		}
		if got := value(t, env.reg, "global_stability_api_requests_total", "target", name, "endpoint", "summaries", "code", "200"); got != 1 || n == 0 {
			t.Errorf("%s: requests_total{summaries,200} %v after one probe (its API saw %d requests)", name, got, n)
		}
	}
}

// value is the value of the one series of a metric family of reg that has
// the label pairs given, or 0 when there is none.
func value(t *testing.T, reg *prometheus.Registry, name string, pairs ...string) float64 {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metrics:
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			for i := 0; i+1 < len(pairs); i += 2 {
				if labels[pairs[i]] != pairs[i+1] {
					continue metrics
				}
			}
			return m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return 0
}

// TestAKeyGoesOnlyToItsOwnOrigin: a target's API that redirects to another
// target's API (another origin) does not get that target its key: the
// redirect is refused, and the other API never sees the first target's key.
func TestAKeyGoesOnlyToItsOwnOrigin(t *testing.T) {
	other := newAccount(t, "key-other-0123456789", 2, nil)
	redirecting := newAccount(t, "key-redirecting-0123456789", 1, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/summaries" {
				http.Redirect(w, r, other.srv.URL+r.URL.Path, http.StatusFound)
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	accounts := map[string]*account{"redirecting": redirecting, "other": other}
	env := newEnv(40)
	set, err := newSet(targetsFile(t, t.TempDir(), accounts, nil, "redirecting", "other"), defaults(), env.Env)
	if err != nil {
		t.Fatal(err)
	}
	_, body := probe(t, set, "target=redirecting")
	if v, _ := samples(t, body).Get("global_stability_scrape_success", "endpoint", "summaries"); v != 0 {
		t.Errorf("a redirect to another target's origin: summaries success %v, want 0", v)
	}
	probe(t, set, "target=other")
	_, auth := other.requests()
	for _, h := range auth {
		if strings.Contains(h, redirecting.key) {
			t.Fatalf("the other target's API received the redirecting target's key")
		}
	}
	// Every line of the log is redacted of every target's keys.
	line := "echo: " + redirecting.key + " and " + other.key
	if got := env.Keys.Redact(line); strings.Contains(got, redirecting.key[4:12]) || strings.Contains(got, other.key[4:12]) {
		t.Errorf("redacted line %q still holds a key", got)
	}
}

// TestProbeTakesOnlyAName: a missing, repeated or unknown target, and
// above all a URL, is HTTP 400 naming the problem, and nothing is sent.
func TestProbeTakesOnlyAName(t *testing.T) {
	a := newAccount(t, "key-prod-0123456789", 1, nil)
	evil := newAccount(t, "unused", 1, nil)
	set, err := newSet(targetsFile(t, t.TempDir(), map[string]*account{"prod": a}, nil, "prod"), defaults(), newEnv(40).Env)
	if err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string]string{
		"":                                    "missing target",
		"target=":                             "missing target",
		"target=prod&target=prod":             "more than one target",
		"target=staging":                      `unknown target "staging"`,
		"target=" + evil.srv.URL:              "never a URL",
		"target=" + strings.Repeat("x", 1000): "<withheld: 1000 bytes>",
		"module=prod":                         "missing target",
		"target=prod%00":                      "unknown target",
	} {
		code, body := probe(t, set, query)
		if code != http.StatusBadRequest || !strings.Contains(body, want) {
			t.Errorf("?%.40s: %d %q, want 400 with %q", query, code, body, want)
		}
	}
	if n, _ := a.requests(); n != 0 {
		t.Errorf("refused probes sent %d requests", n)
	}
	if n, _ := evil.requests(); n != 0 {
		t.Errorf("a URL given as the target received %d requests", n)
	}
}

// TestReloadKeepsWhatDidNotChange: a reload keeps an unchanged target as it
// is, store and all (its fresh answers cost the API nothing afterwards),
// rebuilds a changed one, adds a new one and forgets a removed one's series.
func TestReloadKeepsWhatDidNotChange(t *testing.T) {
	dir := t.TempDir()
	accounts := map[string]*account{
		"kept":    newAccount(t, "key-kept-0123456789", 1, nil),
		"changed": newAccount(t, "key-changed-0123456789", 2, nil),
		"added":   newAccount(t, "key-added-0123456789", 3, nil),
		"removed": newAccount(t, "key-removed-0123456789", 4, nil),
	}
	env := newEnv(40)
	set, _ := loadSet(t, dir, accounts, env, "kept", "changed", "removed")
	for _, name := range []string{"kept", "changed", "removed"} {
		probe(t, set, "target="+name)
		accounts[name].requests()
	}
	kept, _ := set.Get("kept")
	targetsFile(t, dir, accounts, map[string]string{"changed": "    timeout: 20s\n"}, "kept", "changed", "added")
	if err := set.Reload(); err != nil {
		t.Fatal(err)
	}
	if again, _ := set.Get("kept"); again != kept {
		t.Error("an unchanged target was rebuilt")
	}
	for name, want := range map[string]bool{"kept": false, "changed": true, "added": true} {
		code, _ := probe(t, set, "target="+name)
		n, _ := accounts[name].requests()
		if code != 200 || (n > 0) != want {
			t.Errorf("%s after the reload: %d, %d requests; want requests %v (a kept target's fresh answers cost nothing)", name, code, n, want)
		}
	}
	if code, _ := probe(t, set, "target=removed"); code != http.StatusBadRequest {
		t.Errorf("a removed target: %d, want 400", code)
	}
	// Its series go with the reload: no probe of it was in flight.
	if v := value(t, env.reg, "global_stability_api_requests_total", "target", "removed"); v != 0 {
		t.Errorf("a removed target's request counter is still exported: %v", v)
	}
	if v := value(t, env.reg, "global_stability_api_requests_total", "target", "kept", "endpoint", "summaries", "code", "200"); v != 1 {
		t.Errorf("a kept target's counter %v, want 1 (not reset by the reload)", v)
	}
}

// TestAFailedReloadKeepsTheRunningTargets: a file that does not load
// leaves the targets as they were, says why (naming target and field) and
// sets the reload gauge to 0; the next good file sets it back to 1.
func TestAFailedReloadKeepsTheRunningTargets(t *testing.T) {
	dir := t.TempDir()
	accounts := map[string]*account{"prod": newAccount(t, "key-prod-0123456789", 1, nil)}
	env := newEnv(40)
	set, path := loadSet(t, dir, accounts, env, "prod")
	reg := prometheus.NewRegistry()
	reg.MustRegister(set.Collectors()...)
	good, _ := os.ReadFile(path)
	if err := os.WriteFile(path, append(good, "    max_pages: 0\n"...), 0o600); err != nil {
		t.Fatal(err)
	}
	err := set.Reload()
	if err == nil || !strings.Contains(err.Error(), `targets[0] (prod): max_pages "0": want at least 1`) {
		t.Errorf("reload error %v, want one naming targets[0] (prod) and max_pages", err)
	}
	if v := value(t, reg, "global_stability_exporter_config_last_reload_successful"); v != 0 {
		t.Errorf("last_reload_successful %v after a failed reload", v)
	}
	if code, _ := probe(t, set, "target=prod"); code != 200 {
		t.Errorf("the running target after a failed reload: %d", code)
	}
	w := httptest.NewRecorder()
	set.ServeReload(w, httptest.NewRequest(http.MethodPost, "/-/reload", nil))
	if body, _ := io.ReadAll(w.Body); w.Code != 500 || !strings.Contains(string(body), "max_pages") {
		t.Errorf("POST /-/reload of a bad file: %d %s", w.Code, body)
	}
	if err := os.WriteFile(path, good, 0o600); err != nil {
		t.Fatal(err)
	}
	w = httptest.NewRecorder()
	set.ServeReload(w, httptest.NewRequest(http.MethodPost, "/-/reload", nil))
	if w.Code != 200 || value(t, reg, "global_stability_exporter_config_last_reload_successful") != 1 ||
		value(t, reg, "global_stability_exporter_config_last_reload_success_timestamp_seconds") < float64(time.Now().Add(-time.Minute).Unix()) {
		t.Errorf("POST /-/reload of the good file: %d, gauges not back", w.Code)
	}
}

// TestASlowTargetNeverHoldsAnother: while one target's API has not
// answered (and its one scrape slot is taken), another target's probe is
// served at once.
func TestASlowTargetNeverHoldsAnother(t *testing.T) {
	release, arrived, once := make(chan struct{}), make(chan struct{}), sync.Once{}
	slow := newAccount(t, "key-slow-0123456789", 1, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			once.Do(func() { close(arrived) })
			select {
			case <-release:
			case <-r.Context().Done():
			}
			h.ServeHTTP(w, r)
		})
	})
	defer close(release)
	fast := newAccount(t, "key-fast-0123456789", 2, nil)
	set, err := newSet(targetsFile(t, t.TempDir(), map[string]*account{"slow": slow, "fast": fast}, nil, "slow", "fast"), defaults(), newEnv(1).Env)
	if err != nil {
		t.Fatal(err)
	}
	slowDone := make(chan struct{})
	go func() {
		defer close(slowDone)
		probe(t, set, "target=slow")
	}()
	<-arrived // the slow probe is in flight
	if code, _ := probe(t, set, "target=slow"); code != http.StatusServiceUnavailable {
		t.Errorf("a second probe of the slow target beside the first: %d, want 503 (its limit is 1)", code)
	}
	code, body := probe(t, set, "target=fast")
	if v, _ := samples(t, body).Get("global_stability_up"); code != 200 || v != 1 {
		t.Errorf("the fast target while the slow one hangs: %d, up %v", code, v)
	}
	select {
	case <-slowDone:
		t.Error("the slow probe finished before its API answered")
	default:
	}
}

// TestAReloadUnderLoadLosesNoScrape: probes in flight and arriving while
// the file is reloaded again and again (one target unchanged, one changed
// each time) are all answered whole.
func TestAReloadUnderLoadLosesNoScrape(t *testing.T) {
	dir := t.TempDir()
	accounts := map[string]*account{
		"steady":   newAccount(t, "key-steady-0123456789", 1, nil),
		"changing": newAccount(t, "key-changing-0123456789", 2, nil),
	}
	path := targetsFile(t, dir, accounts, nil, "steady", "changing")
	set, err := newSet(path, defaults(), newEnv(0).Env)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var reloads sync.WaitGroup
	reloads.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			targetsFile(t, dir, accounts, map[string]string{"changing": fmt.Sprintf("    timeout: %ds\n", 10+i%5)}, "steady", "changing")
			if err := set.Reload(); err != nil {
				t.Error(err)
				return
			}
		}
	})
	var probes sync.WaitGroup
	for range 8 {
		probes.Go(func() {
			for i := range 25 {
				name := []string{"steady", "changing"}[i%2]
				code, body := probe(t, set, "target="+name)
				if v, _ := samples(t, body).Get("global_stability_up"); code != 200 || v != 1 {
					t.Errorf("%s during reloads: %d, up %v", name, code, v)
					return
				}
			}
		})
	}
	probes.Wait()
	close(done)
	reloads.Wait()
}

// BenchmarkProbeOneOfMany is one probe of one target among 100 in a set,
// each its own account: what a probe costs beside the others.
func BenchmarkProbeOneOfMany(b *testing.B) {
	dir := b.TempDir()
	sim := simulator.New(simulator.Config{Key: "key-0-0123456789abcdef", Seed: 1, Events: 1000, PageSize: 1000})
	srv := httptest.NewServer(sim)
	b.Cleanup(srv.Close)
	var yaml strings.Builder
	yaml.WriteString("targets:\n")
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte("key-0-0123456789abcdef"), 0o600); err != nil {
		b.Fatal(err)
	}
	for i := range 100 {
		fmt.Fprintf(&yaml, "  - {name: t%d, api_url: %q, api_key_file: key}\n", i, srv.URL)
	}
	path := filepath.Join(dir, "targets.yml")
	if err := os.WriteFile(path, []byte(yaml.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	s := defaults()
	s.HTTPCache, s.SummaryRefresh = false, 0 // a whole collection each time
	set, err := newSet(path, s, newEnv(0).Env)
	if err != nil {
		b.Fatal(err)
	}
	h := http.HandlerFunc(set.ServeProbe)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/probe?target=t42", nil)
		r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "10")
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
