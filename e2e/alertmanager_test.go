// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"go.yaml.in/yaml/v2"

	"github.com/global-stability/global_stability_exporter/internal/testutil/render"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// A minute of the mixin's durations is a second in the tests that run its
// alerts on a real Prometheus: every "for" and the gap window, scaled
// alike, so that which alert fires first and which one bridges a gap stay
// as in production.
func scaledMixinConfig(t *testing.T, overrides string) string {
	t.Helper()
	defaults := mixinConfig(t)
	var fields []string
	for name, v := range defaults {
		s, ok := v.(string)
		if !ok || (!strings.HasSuffix(name, "For") && name != "gapWindow") {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil || d%time.Minute != 0 {
			t.Fatalf("mixin config %s = %q: not whole minutes, cannot scale", name, s)
		}
		fields = append(fields, fmt.Sprintf("%s: '%ds'", name, d/time.Minute))
	}
	sort.Strings(fields)
	return "{" + strings.Join(fields, ", ") + "} + " + overrides
}

// renderRules writes the mixin's rules file rendered with config into dir.
func renderRules(t *testing.T, dir, config string) string {
	t.Helper()
	files, err := render.Mixin(config)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "rules.yml")
	if err := os.WriteFile(path, []byte(files["alerts/global_stability.rules.yml"]), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// fakeAPI is one API account: the simulator (authentication, the conflict
// events, the briefings) behind a listener the test can close and reopen,
// with the answers the alerts read under the test's control.
type fakeAPI struct {
	key  string
	sim  *simulator.Simulator
	addr string

	mu       sync.Mutex
	srv      *http.Server
	answers  map[string]answer // by endpoint label; absent: healthy()
	requests map[string]int
	quota    int // RateLimit remaining of 1000 announced; 0 announces none
}

// answer is what the nth request (from 0) to an endpoint gets: a status
// and a JSON body.
type answer func(n int) (int, string)

func newFakeAPI(t *testing.T, key string) *fakeAPI {
	t.Helper()
	// A page of events and one of briefings: a dozen accounts scraped every
	// second cost the machine little, so that a loaded one keeps the scale.
	sim := simulator.New(simulator.Config{Key: key, Events: 5, Briefings: 2})
	a := &fakeAPI{key: key, sim: sim, answers: map[string]answer{}, requests: map[string]int{}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	a.addr = ln.Addr().String()
	a.serve(ln)
	t.Cleanup(a.down)
	return a
}

func (a *fakeAPI) URL() string { return "http://" + a.addr }

func (a *fakeAPI) serve(ln net.Listener) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.srv = &http.Server{Handler: a, ReadHeaderTimeout: 5 * time.Second}
	go a.srv.Serve(ln) //nolint:errcheck // ends with ErrServerClosed
}

// down closes the listener: connections are refused, as from an API that
// is down.
func (a *fakeAPI) down() {
	a.mu.Lock()
	srv := a.srv
	a.srv = nil
	a.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
}

// up listens again on the same address.
func (a *fakeAPI) up() error {
	var ln net.Listener
	var err error
	for range 50 { // the port is ours, but the kernel may hold it a moment
		if ln, err = net.Listen("tcp", a.addr); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		return fmt.Errorf("listen again on %s: %w", a.addr, err)
	}
	a.serve(ln)
	return nil
}

// set makes endpoint answer as f says; nil puts the healthy answer back.
func (a *fakeAPI) set(endpoint string, f answer) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if f == nil {
		delete(a.answers, endpoint)
		return
	}
	a.answers[endpoint] = f
}

func (a *fakeAPI) setQuota(remaining int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.quota = remaining
}

func (a *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint := strings.TrimPrefix(r.URL.Path, "/v1/")
	a.mu.Lock()
	n := a.requests[endpoint]
	a.requests[endpoint]++
	f, quota := a.answers[endpoint], a.quota
	a.mu.Unlock()
	if quota > 0 { // the IETF draft's fields, as many APIs send them
		w.Header().Set("RateLimit-Policy", `"hourly";q=1000;w=3600`)
		w.Header().Set("RateLimit", fmt.Sprintf(`"hourly";r=%d;t=1800`, quota))
	}
	if f == nil {
		f = healthy(endpoint)
	}
	if r.Header.Get("Authorization") != "Bearer "+a.key || f == nil {
		a.sim.ServeHTTP(w, r) // refuses the key; or the events and briefings
		return
	}
	status, body := f(n)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

var pillarNames = []string{"conflict", "cyber", "supply_chain", "macro"}

// overview is the overview's body: score and pillars as given (nil leaves
// a pillar out), as_of age ago (negative: null).
func overview(score string, pillars map[string]float64, age time.Duration) string {
	doc := map[string]any{"score": json.RawMessage(score), "trend": "stable", "as_of": asOf(age)}
	p := map[string]float64{}
	for _, name := range pillarNames {
		if v, ok := pillars[name]; ok {
			p[name] = v
		}
	}
	doc["pillars"] = p
	b, _ := json.Marshal(doc)
	return string(b)
}

func asOf(age time.Duration) any {
	if age < 0 {
		return nil
	}
	return time.Now().Add(-age).UTC().Format(time.RFC3339)
}

// calm are pillar scores below every threshold.
var calm = map[string]float64{"conflict": 45, "cyber": 40, "supply_chain": 35, "macro": 30}

func drilldown(pillar string, age time.Duration) string {
	b, _ := json.Marshal(map[string]any{"pillar": pillar, "score": calm[pillar], "delta_24h": 1.5,
		"indicators": []map[string]any{{"key": "index", "value": 3.1}}, "as_of": asOf(age)})
	return string(b)
}

func summary(age time.Duration) string {
	b, _ := json.Marshal(map[string]any{"summary": "Quiet across all pillars.", "as_of": asOf(age)})
	return string(b)
}

// healthy is an endpoint's answer with every value the alerts read fresh
// and below its threshold (fixed, where the simulator's world wanders);
// nil for the events and briefings, which the simulator serves.
func healthy(endpoint string) answer {
	switch {
	case endpoint == "global-stability":
		return func(int) (int, string) { return 200, overview("40", calm, 0) }
	case strings.HasPrefix(endpoint, "global-stability/pillar/"):
		p := strings.TrimPrefix(endpoint, "global-stability/pillar/")
		return func(int) (int, string) { return 200, drilldown(p, 0) }
	case endpoint == "summaries":
		return func(int) (int, string) { return 200, summary(0) }
	}
	return nil
}

// notification is what Alertmanager's webhook sends.
type notification struct {
	Receiver string
	Status   string
	Alerts   []struct {
		Status      string
		Labels      map[string]string
		Annotations map[string]string
	}
	CommonLabels map[string]string
	received     time.Time
}

// webhook receives every notification of every receiver.
type webhook struct {
	*httptest.Server
	mu  sync.Mutex
	all []notification
}

func newWebhook(t *testing.T) *webhook {
	t.Helper()
	h := &webhook{}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n notification
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n.received = time.Now()
		h.mu.Lock()
		h.all = append(h.all, n)
		h.mu.Unlock()
	}))
	t.Cleanup(h.Close)
	return h
}

// of returns the notifications about alerts with label=value, in order.
func (h *webhook) of(label, value string) []notification {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []notification
	for _, n := range h.all {
		if n.CommonLabels[label] == value {
			out = append(out, n)
		}
	}
	return out
}

// events reads notifications as a person does: an announcement is a
// notification that brings an alert firing that its receiver has not been
// told of before, as "receiver firing alertname"; a resolution, a resolved
// notification, as "receiver resolved alertname". A notification that only
// says some alerts of a group ended, while others still fire, is neither.
func events(ns []notification) (announced, resolved []string) {
	told := map[string]bool{}
	for _, n := range ns {
		news := false
		for _, a := range n.Alerts {
			id := n.Receiver + fmt.Sprint(a.Labels)
			if a.Status == "firing" && !told[id] {
				told[id], news = true, true
			}
		}
		name := n.CommonLabels["alertname"]
		if news {
			announced = append(announced, n.Receiver+" firing "+name)
		}
		if n.Status == "resolved" {
			resolved = append(resolved, n.Receiver+" resolved "+name)
		}
	}
	sort.Strings(resolved)
	return announced, resolved
}

// alertmanagerConfig is examples/alertmanager/alertmanager.yml with every
// receiver replaced by the webhook (the path says which receiver it was)
// and the route's group waits shortened to the tests' scale. Its routes,
// grouping and inhibit rules are what is under test, so they are kept.
func alertmanagerConfig(t *testing.T, hook string) []byte {
	t.Helper()
	b, err := os.ReadFile(repoPath(t, "examples/alertmanager/alertmanager.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	route := cfg["route"].(map[any]any)
	ours := route["routes"].([]any)[0].(map[any]any)
	ours["group_wait"], ours["group_interval"] = "3s", "3s"
	var receivers []any
	for _, r := range cfg["receivers"].([]any) {
		rec := r.(map[any]any)
		for kind, configs := range rec {
			if kind == "name" {
				continue
			}
			for _, c := range configs.([]any) {
				if c.(map[any]any)["send_resolved"] != true {
					t.Errorf("receiver %v: %v does not set send_resolved: true; a person would never learn that the cause ended", rec["name"], kind)
				}
			}
		}
		receivers = append(receivers, map[string]any{
			"name":            rec["name"],
			"webhook_configs": []any{map[string]any{"url": fmt.Sprintf("%s/%s", hook, rec["name"]), "send_resolved": true}},
		})
	}
	cfg["receivers"] = receivers
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// startAlertmanager runs a real Alertmanager, alone (no cluster peers), and
// returns its address once it is ready.
func startAlertmanager(t *testing.T, dir string, config []byte) string {
	t.Helper()
	alertmanager := need(t, "prometheus-alertmanager")
	file := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(file, config, 0o644); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	start(t, alertmanager, "--config.file="+file, "--storage.path="+filepath.Join(dir, "am"),
		"--web.listen-address="+addr, "--cluster.listen-address=", "--log.level=warn")
	if err := poll(t, func() bool {
		resp, err := http.Get("http://" + addr + "/-/ready")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}); err != nil {
		t.Fatalf("Alertmanager not ready on %s by the test's deadline", addr)
	}
	return addr
}

// cause is one scenario: a target that starts as begin leaves it, then
// cause (its steps, each followed by the alert it must announce), then
// end; the notifications about it must be exactly those announcements and
// their resolutions.
type cause struct {
	name  string
	begin func(a *fakeAPI)
	steps []step
	end   func(c *causeRun) error
	// What each step announces is in the step; resolved, when not one
	// resolution per announcement, lists them (any order).
	resolved []string
	// Alerts that fire in Prometheus while the cause lasts but that an
	// inhibit rule must keep from every receiver: checked to fire, so that
	// the test shows the rule at work, not an alert that never came.
	hidden   []string
	instance string // the alerts' instance label: the target's name unless set
}

type step struct {
	do   func(c *causeRun) error
	want string // the announcement it brings, "receiver firing alertname"
}

type causeRun struct {
	api     *fakeAPI
	keyFile string
}

// writeKey replaces the key file as a rotation does: a new file renamed
// over the old one.
func (c *causeRun) writeKey(key string) error {
	tmp := c.keyFile + ".new"
	if err := os.WriteFile(tmp, []byte(key), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, c.keyFile)
}

// hold is how long a cause stays after its announcement before the test
// ends it: past the longest "for" of the mixin (InvalidData's 30m, here
// 30s) and its gap window, so that a twin or a blinded alert would have
// been announced too.
const hold = 40 * time.Second

// TestOneNotificationPerCause: the exporter (a targets' file, one target
// per cause, each its own API account) → a real Prometheus with the mixin,
// durations scaled a minute to a second → a real
// Alertmanager with examples/alertmanager/alertmanager.yml → a webhook per
// receiver. For each cause: exactly one notification announces it, to the
// receiver of its severity, with the labels the receiver and the runbook
// link need; no twin, no alert it blinds; and one resolved notification
// when it ends. A healthy target notifies nothing. The causes run side by
// side on one Prometheus and one Alertmanager.
func TestOneNotificationPerCause(t *testing.T) {
	t.Parallel() // mostly waiting, as is TestAlertsAcrossClusters
	prometheus := need(t, "prometheus")
	dir := t.TempDir()
	hook := newWebhook(t)
	amAddr := startAlertmanager(t, dir, alertmanagerConfig(t, hook.URL))

	const stale = 2 * time.Hour
	causes := []cause{
		{name: "healthy"},
		{
			name: "api-down",
			steps: []step{{func(c *causeRun) error { c.api.down(); return nil },
				"pager firing GlobalStabilityScoreUnavailable"}},
			end: func(c *causeRun) error { return c.api.up() },
		},
		{
			name: "key-refused",
			steps: []step{{func(c *causeRun) error { return c.writeKey("gsk_revoked_0123456789") },
				"pager firing GlobalStabilityScoreUnavailable"}},
			end: func(c *causeRun) error { return c.writeKey(c.api.key) },
		},
		{
			name: "score-null",
			steps: []step{{func(c *causeRun) error {
				c.api.set("global-stability", func(int) (int, string) { return 200, overview("null", calm, 0) })
				return nil
			}, "pager firing GlobalStabilityScoreUnavailable"}},
		},
		{
			name: "pillar-missing",
			steps: []step{{func(c *causeRun) error {
				c.api.set("global-stability", func(int) (int, string) {
					return 200, overview("40", map[string]float64{"conflict": 45, "supply_chain": 35, "macro": 30}, 0)
				})
				return nil
			}, "ticket firing GlobalStabilityPillarScoreUnavailable"}},
		},
		{
			// High from its first scrape, so that the climb is no rise
			// above the hour's low (that is GlobalStabilityRapidDeterioration,
			// a cause of its own): warning, then critical, which hides it.
			name: "score-warning-then-critical",
			begin: func(a *fakeAPI) {
				a.set("global-stability", func(int) (int, string) { return 200, overview("70", calm, 0) })
			},
			steps: []step{
				{nothing, "ticket firing GlobalStabilityScoreWarning"},
				{func(c *causeRun) error {
					c.api.set("global-stability", func(int) (int, string) { return 200, overview("78", calm, 0) })
					return nil
				}, "pager firing GlobalStabilityScoreCritical"},
			},
			resolved: []string{"pager resolved GlobalStabilityScoreCritical", "ticket resolved GlobalStabilityScoreWarning"},
			hidden:   []string{"GlobalStabilityScoreWarning"},
		},
		{
			// The API stops refreshing: every as_of ages, the summary's
			// too, which its own alert would announce but for the inhibit
			// rule.
			name: "data-stale",
			steps: []step{{func(c *causeRun) error {
				c.api.set("global-stability", func(int) (int, string) { return 200, overview("40", calm, stale) })
				for _, p := range pillarNames {
					c.api.set("global-stability/pillar/"+p, func(int) (int, string) { return 200, drilldown(p, stale) })
				}
				c.api.set("summaries", func(int) (int, string) { return 200, summary(stale) })
				return nil
			}, "ticket firing GlobalStabilityDataStale"}},
			hidden: []string{"GlobalStabilitySummaryStale"},
		},
		{
			name:     "quota-low",
			instance: "exporter", // the exporter's own series carry the quota
			steps: []step{{func(c *causeRun) error { c.api.setQuota(50); return nil },
				"ticket firing GlobalStabilityAPIQuotaLow"}},
			end: func(c *causeRun) error { c.api.setQuota(900); return nil },
		},
		// Flapping input (a hostile upstream's patterns): each must page
		// once, as the steady cause would.
		{
			name: "score-critical-null-one-in-ten",
			begin: func(a *fakeAPI) {
				a.set("global-stability", func(n int) (int, string) {
					if n%10 == 9 {
						return 200, overview("null", calm, 0)
					}
					return 200, overview("90", calm, 0)
				})
			},
			steps:  []step{{nothing, "pager firing GlobalStabilityScoreCritical"}},
			hidden: []string{"GlobalStabilityScoreWarning"},
		},
		{
			name: "score-critical-failing-every-other-scrape",
			begin: func(a *fakeAPI) {
				a.set("global-stability", func(n int) (int, string) {
					if n%2 == 1 {
						return 503, `{"error":"unavailable"}`
					}
					return 200, overview("90", calm, 0)
				})
			},
			steps:  []step{{nothing, "pager firing GlobalStabilityScoreCritical"}},
			hidden: []string{"GlobalStabilityScoreWarning"},
		},
		{
			name: "as-of-stale-missing-every-fourth",
			steps: []step{{func(c *causeRun) error {
				c.api.set("global-stability", func(n int) (int, string) {
					if n%4 == 3 {
						return 200, overview("40", calm, -1)
					}
					return 200, overview("40", calm, stale)
				})
				return nil
			}, "ticket firing GlobalStabilityDataStale"}},
		},
	}

	// One API account per cause, one target each in the exporter's file.
	runs := map[string]*causeRun{}
	var names []string
	var targets strings.Builder
	targets.WriteString("targets:\n")
	for i, c := range causes {
		key := fmt.Sprintf("gsk_cause_%02d_0123456789", i)
		api := newFakeAPI(t, key)
		if c.begin != nil {
			c.begin(api)
		}
		keyFile := filepath.Join(dir, c.name+".key")
		run := &causeRun{api: api, keyFile: keyFile}
		if err := run.writeKey(key); err != nil {
			t.Fatal(err)
		}
		runs[c.name] = run
		names = append(names, c.name)
		// The summary's 15-minute refresh interval, scaled as the mixin's
		// durations are: a summary is asked for again within 15s, so that
		// its stale as_of arrives while the cause lasts. The events and
		// briefings, which no cause touches, are not asked for: eleven
		// accounts scraped every second then leave a loaded machine the
		// time to answer the rest within the scrape's deadline.
		fmt.Fprintf(&targets, "  - name: %s\n    api_url: %s\n    api_key_file: %s\n    summary_refresh_interval: 15s\n    collectors: {conflict: false, briefings: false}\n", c.name, api.URL(), keyFile)
	}
	targetsFile := filepath.Join(dir, "targets.yml")
	if err := os.WriteFile(targetsFile, []byte(targets.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	exporterAddr := freeAddr(t)
	start(t, buildExporter(t, dir), "--config.file="+targetsFile, "--web.listen-address="+exporterAddr)

	rules := renderRules(t, dir, scaledMixinConfig(t, "{}"))
	config := prometheusTargetsConfig(t, exporterAddr, rules, map[string]any{
		"alerting": map[string]any{"alertmanagers": []any{map[string]any{"static_configs": []any{map[string]any{"targets": []string{amAddr}}}}}},
	}, names...)
	configFile := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(configFile, config, 0o644); err != nil {
		t.Fatal(err)
	}
	promAddr := freeAddr(t)
	start(t, prometheus, "--config.file="+configFile, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+promAddr, "--log.level=warn")
	base := "http://" + promAddr

	// Every cause at once: they take a minute or more each, mostly
	// waiting, and t.Parallel would run only GOMAXPROCS of them at a time.
	results := map[string]chan []string{}
	for _, c := range causes {
		result, run := make(chan []string, 1), runs[c.name]
		results[c.name] = result
		go func() { result <- c.run(t, base, hook, run, exporterAddr) }()
	}
	for _, c := range causes {
		t.Run(c.name, func(t *testing.T) {
			for _, e := range <-results[c.name] {
				t.Error(e)
			}
		})
	}
}

// nothing is a step that changes nothing: the cause is there from the start.
func nothing(*causeRun) error { return nil }

// run plays the cause on its target and returns what went wrong.
func (c cause) run(t *testing.T, base string, hook *webhook, run *causeRun, exporterAddr string) (failures []string) {
	fail := func(format string, args ...any) []string { return append(failures, fmt.Sprintf(format, args...)) }
	if err := poll(t, func() bool {
		n, err := countSeries(base, fmt.Sprintf(`global_stability_up{job="global_stability", instance=%q} == 1`, c.name))
		return err == nil && n == 1
	}); err != nil {
		return fail("the target was never scraped")
	}
	var want []string
	last := time.Now() // the last announcement's
	for _, s := range c.steps {
		if err := s.do(run); err != nil {
			return fail("%v", err)
		}
		want = append(want, s.want)
		if err := poll(t, func() bool { a, _ := events(hook.of("target", c.name)); return slices.Contains(a, s.want) }); err != nil {
			return fail("no %q by the test's deadline; notifications so far:\n%s", s.want, describe(hook.of("target", c.name)))
		}
		last = time.Now()
	}
	// Each alert the cause hides fires in Prometheus at some moment of it.
	var firing map[string]bool
	if poll(t, func() bool {
		firing, _ = firingAlerts(base, c.name)
		return !slices.ContainsFunc(c.hidden, func(h string) bool { return !firing[h] })
	}) != nil {
		failures = fail("%v do not all fire in Prometheus, so the inhibit rule that should hide them is not tested (firing: %v)", c.hidden, firing)
	}
	evaluated(t, base, last.Add(hold))
	if c.end != nil {
		if err := c.end(run); err != nil {
			return fail("%v", err)
		}
	} else {
		for _, e := range []string{"global-stability", "summaries"} {
			run.api.set(e, nil)
		}
		for _, p := range pillarNames {
			run.api.set("global-stability/pillar/"+p, nil)
		}
	}
	resolved := c.resolved
	if resolved == nil {
		for _, w := range want {
			resolved = append(resolved, strings.Replace(w, " firing ", " resolved ", 1))
		}
	}
	sort.Strings(resolved)
	if len(resolved) > 0 {
		if err := poll(t, func() bool { _, r := events(hook.of("target", c.name)); return len(r) >= len(resolved) }); err != nil {
			failures = fail("not every resolved notification by the test's deadline")
		}
	}
	evaluated(t, base, time.Now().Add(5*time.Second)) // a late notification would be here by now
	ns := hook.of("target", c.name)
	announced, gotResolved := events(ns)
	if !slices.Equal(announced, want) || !slices.Equal(gotResolved, resolved) {
		failures = fail("notifications:\n  announced %q\n  resolved  %q\nwant\n  announced %q\n  resolved  %q\n%s",
			announced, gotResolved, want, resolved, describe(ns))
	}
	instance := c.name
	if c.instance == "exporter" {
		instance = exporterAddr
	}
	return append(failures, checkLabels(ns, c.name, instance)...)
}

// firingAlerts returns the names of the alerts about target that fire in
// Prometheus now.
func firingAlerts(base, target string) (map[string]bool, error) {
	r, err := promGet(base, "/api/v1/alerts", nil)
	if err != nil {
		return nil, err
	}
	firing := map[string]bool{}
	for _, a := range r.Data.Alerts {
		if a.Labels["target"] == target && a.State == "firing" {
			firing[a.Labels["alertname"]] = true
		}
	}
	return firing, nil
}

// poll waits for ok, asking twice a second, until shortly before the
// test binary's -timeout: how long Prometheus and Alertmanager take depends
// on the machine's load, which no fixed wait can know.
func poll(t *testing.T, ok func() bool) error {
	deadline, bounded := t.Deadline()
	for !ok() {
		if bounded && time.Until(deadline) < 30*time.Second {
			return errors.New("timed out")
		}
		time.Sleep(500 * time.Millisecond)
	}
	return nil
}

// evaluated waits until Prometheus at base has evaluated every rule group
// at or after at: on a loaded machine its evaluations fall behind the
// clock, and what a rule would do by a moment is known only once it has.
func evaluated(t *testing.T, base string, at time.Time) {
	if poll(t, func() bool {
		r, err := promGet(base, "/api/v1/rules", nil)
		return err == nil && len(r.Data.Groups) > 0 && !slices.ContainsFunc(r.Data.Groups, func(g group) bool { return g.LastEvaluation.Before(at) })
	}) != nil {
		t.Errorf("Prometheus at %s has not evaluated its rules at %s by the test's deadline", base, at.Format(time.TimeOnly))
	}
}

// checkLabels: every alert notified carries what its receiver routes and
// a person needs: severity matching the receiver, the target and instance,
// a summary, and a runbook link to the alert's own section.
func checkLabels(ns []notification, target, instance string) (failures []string) {
	severity := map[string]string{"pager": "critical", "ticket": "warning"}
	for _, n := range ns {
		for _, a := range n.Alerts {
			l, name := a.Labels, a.Labels["alertname"]
			var errs []error
			if l["severity"] != severity[n.Receiver] {
				errs = append(errs, fmt.Errorf("severity %q sent to %s", l["severity"], n.Receiver))
			}
			if l["target"] != target || l["instance"] != instance {
				errs = append(errs, fmt.Errorf("target %q instance %q, want %q and %q", l["target"], l["instance"], target, instance))
			}
			if want := "docs/runbooks.md#" + strings.ToLower(name); !strings.HasSuffix(a.Annotations["runbook_url"], want) {
				errs = append(errs, fmt.Errorf("runbook_url %q, want …%s", a.Annotations["runbook_url"], want))
			}
			if a.Annotations["summary"] == "" {
				errs = append(errs, errors.New("no summary"))
			}
			if err := errors.Join(errs...); err != nil {
				failures = append(failures, fmt.Sprintf("%s to %s: %v", name, n.Receiver, err))
			}
		}
	}
	return failures
}

func describe(ns []notification) string {
	var b strings.Builder
	for _, n := range ns {
		fmt.Fprintf(&b, "  %s %s to %s:", n.received.Format("15:04:05"), n.Status, n.Receiver)
		for _, a := range n.Alerts {
			fmt.Fprintf(&b, " [%s %s %s]", a.Status, a.Labels["alertname"], a.Labels["endpoint"]+a.Labels["pillar"])
		}
		b.WriteString("\n")
	}
	return b.String()
}

// TestAlertsAcrossClusters: two clusters' Prometheus servers (external
// labels cluster a and b), each scraping its own exporter, remote-write to
// a third that evaluates the mixin rendered with showMultiCluster (and the
// durations scaled) and sends to a real Alertmanager with the example's
// configuration. Faults in cluster a notify once each, for cluster a only,
// and resolve: its API down (the composite score unavailable), then its
// exporter gone from its Prometheus's targets, which absent() could not see
// in a store that still holds cluster b's.
func TestAlertsAcrossClusters(t *testing.T) {
	t.Parallel()
	prometheus := need(t, "prometheus")
	dir := t.TempDir()
	hook := newWebhook(t)
	amAddr := startAlertmanager(t, dir, alertmanagerConfig(t, hook.URL))
	exporter := buildExporter(t, dir)

	central := freeAddr(t)
	centralDir := filepath.Join(dir, "central")
	if err := os.MkdirAll(centralDir, 0o755); err != nil {
		t.Fatal(err)
	}
	rules := renderRules(t, centralDir, scaledMixinConfig(t, "{showMultiCluster: true}"))
	writeYAML(t, filepath.Join(centralDir, "prometheus.yml"), map[string]any{
		"global":         map[string]any{"evaluation_interval": "1s"},
		"rule_files":     []string{rules},
		"alerting":       map[string]any{"alertmanagers": []any{map[string]any{"static_configs": []any{map[string]any{"targets": []string{amAddr}}}}}},
		"scrape_configs": []any{},
	})
	start(t, prometheus, "--config.file="+filepath.Join(centralDir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(centralDir, "data"),
		"--web.listen-address="+central, "--web.enable-remote-write-receiver", "--log.level=warn")
	base := "http://" + central

	// clusterConfig is a cluster's Prometheus: its exporter scraped (none
	// when gone), everything sent to the central one.
	clusterConfig := func(name, exporterAddr string) map[string]any {
		var targets []string
		if exporterAddr != "" {
			targets = []string{exporterAddr}
		}
		return map[string]any{
			"global": map[string]any{"scrape_interval": "1s", "scrape_timeout": "1s", "external_labels": map[string]string{"cluster": name}},
			"scrape_configs": []any{map[string]any{
				"job_name": "global_stability", "static_configs": []any{map[string]any{"targets": targets}},
			}},
			"remote_write": []any{map[string]any{
				"url":          base + "/api/v1/write",
				"queue_config": map[string]any{"batch_send_deadline": "500ms", "min_backoff": "100ms", "max_backoff": "1s"},
			}},
		}
	}
	apis, exporters, promAddrs := map[string]*fakeAPI{}, map[string]string{}, map[string]string{}
	for _, name := range []string{"a", "b"} {
		key := "gsk_cluster_" + name + "_0123456789"
		apis[name] = newFakeAPI(t, key)
		keyFile := filepath.Join(dir, name+".key")
		if err := os.WriteFile(keyFile, []byte(key), 0o600); err != nil {
			t.Fatal(err)
		}
		exporters[name] = freeAddr(t)
		start(t, exporter, "--api.url="+apis[name].URL(), "--api.key-file="+keyFile, "--web.listen-address="+exporters[name],
			"--api.summary-refresh-interval=15s")
		promAddrs[name] = freeAddr(t)
		cdir := filepath.Join(dir, name)
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			t.Fatal(err)
		}
		writeYAML(t, filepath.Join(cdir, "prometheus.yml"), clusterConfig(name, exporters[name]))
		start(t, prometheus, "--config.file="+filepath.Join(cdir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(cdir, "data"),
			"--web.listen-address="+promAddrs[name], "--web.enable-lifecycle", "--log.level=warn")
	}
	for _, name := range []string{"a", "b"} {
		eventually(t, base, fmt.Sprintf(`global_stability_up{cluster=%q} == 1`, name), 1)
	}

	// phase applies a fault to cluster a, waits for its one announcement,
	// holds it, ends it and waits for the resolution.
	phase := func(fault, heal func() error, want string) {
		t.Helper()
		if err := fault(); err != nil {
			t.Fatal(err)
		}
		if err := poll(t, func() bool { a, _ := events(hook.of("cluster", "a")); return slices.Contains(a, want) }); err != nil {
			t.Fatalf("no %q for cluster a by the test's deadline; notifications:\n%s", want, describe(hook.all))
		}
		evaluated(t, base, time.Now().Add(20*time.Second)) // a twin, or a notification for b, would be here by now
		if err := heal(); err != nil {
			t.Fatal(err)
		}
		resolved := strings.Replace(want, " firing ", " resolved ", 1)
		if err := poll(t, func() bool { _, r := events(hook.of("cluster", "a")); return slices.Contains(r, resolved) }); err != nil {
			t.Fatalf("no %q for cluster a by the test's deadline; notifications:\n%s", resolved, describe(hook.all))
		}
	}
	phase(func() error { apis["a"].down(); return nil }, apis["a"].up,
		"pager firing GlobalStabilityScoreUnavailable")
	reload := func(exporterAddr string) func() error {
		return func() error {
			writeYAML(t, filepath.Join(dir, "a", "prometheus.yml"), clusterConfig("a", exporterAddr))
			resp, err := http.Post("http://"+promAddrs["a"]+"/-/reload", "", nil)
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("reloading cluster a's Prometheus: %s", resp.Status)
			}
			return nil
		}
	}
	phase(reload(""), reload(exporters["a"]), "pager firing GlobalStabilityExporterAbsent")
	evaluated(t, base, time.Now().Add(5*time.Second)) // a late notification would be here by now

	announced, resolved := events(hook.of("cluster", "a"))
	wantAnnounced := []string{"pager firing GlobalStabilityScoreUnavailable", "pager firing GlobalStabilityExporterAbsent"}
	wantResolved := []string{"pager resolved GlobalStabilityExporterAbsent", "pager resolved GlobalStabilityScoreUnavailable"}
	hook.mu.Lock()
	all := slices.Clone(hook.all)
	hook.mu.Unlock()
	if !slices.Equal(announced, wantAnnounced) || !slices.Equal(resolved, wantResolved) || len(all) != len(hook.of("cluster", "a")) {
		t.Errorf("notifications (cluster a: announced %q, resolved %q; want %q and %q); every one, of any cluster:\n%s",
			announced, resolved, wantAnnounced, wantResolved, describe(all))
	}
	for _, n := range all {
		for _, a := range n.Alerts {
			if a.Labels["cluster"] != "a" {
				t.Errorf("%s notified with cluster %q: the rules lost the cluster label", a.Labels["alertname"], a.Labels["cluster"])
			}
		}
	}
}

func writeYAML(t *testing.T, path string, v any) {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
