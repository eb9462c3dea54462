// SPDX-License-Identifier: Apache-2.0

package targets_test

import (
	"fmt"
	"io"
	stdlog "log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/leakcheck"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
	"github.com/global-stability/global_stability_exporter/targets"
)

// settingCase changes one setting of the targets' file away from the
// flags' default and tells whether its effect shows.
type settingCase struct {
	yaml   string               // the target's lines that change it
	sim    simulator.Config     // the account's API (its key and seed are set)
	tls    bool                 // the API speaks TLS with a certificate nobody trusts
	effect func(p *prober) bool // whether the change shows in what the target does
}

// prober probes the one target "a" of a set and reads its API's requests.
type prober struct {
	t   *testing.T
	set *targets.Set
	sim *simulator.Simulator
	alt *account // a second account on another origin
	dir string
}

func (p *prober) probe() promtext.Samples {
	code, body := probe(p.t, p.set, "target=a")
	if code != 200 {
		p.t.Fatalf("probe: %d %s", code, body)
	}
	return samples(p.t, body)
}

func (p *prober) success(endpoint string) float64 {
	v, ok := p.probe().Get("global_stability_scrape_success", "endpoint", endpoint)
	if !ok {
		return -1
	}
	return v
}

// secondProbeAsks probes twice and reports whether the second sent the
// endpoint's request again.
func (p *prober) secondProbeAsks(endpoint string) bool {
	p.probe()
	before := p.sim.Requests(endpoint)
	p.probe()
	return p.sim.Requests(endpoint) > before
}

var noCaching = simulator.Config{} // no validators, no Cache-Control

// settingCases holds a case for every field of the targets' file but the
// collectors' groups (groupOff): TestReloadAppliesEverySetting fails for a
// field without one, so a new setting cannot go untested.
var settingCases = map[string]settingCase{
	"api_url": {yaml: "api_url: {{alt}}", effect: func(p *prober) bool {
		p.probe()
		n, _ := p.alt.requests()
		return n > 0
	}},
	"api_key_file": {yaml: "api_key_file: {{dir}}/wrong.key", effect: func(p *prober) bool {
		v, _ := p.probe().Get("global_stability_up")
		return v == 0 // the API refuses the other file's key
	}},
	"timeout": {yaml: "timeout: 300ms", effect: func(p *prober) bool {
		p.sim.SetFault("summaries", simulator.Fault{Kind: simulator.FaultSlowBody, Delay: 60 * time.Millisecond})
		defer p.sim.ClearFaults()
		return p.success("summaries") == 0
	}},
	"cursor_param": {yaml: "cursor_param: after", sim: simulator.Config{CursorParam: "after", Events: 120, PageSize: 50}, effect: func(p *prober) bool {
		return p.success("conflict") == 1 // with "cursor", page 1 again: a loop
	}},
	"page_size_param": {yaml: "page_size_param: limit\n    page_size: 120", sim: simulator.Config{PageSizeParam: "limit", Events: 120, PageSize: 50}, effect: func(p *prober) bool {
		before := p.sim.Requests("conflict")
		p.probe()
		return p.sim.Requests("conflict")-before == 1
	}},
	"page_size": {yaml: "page_size: 120\n    page_size_param: limit", sim: simulator.Config{PageSizeParam: "limit", Events: 120, PageSize: 50}, effect: func(p *prober) bool {
		before := p.sim.Requests("conflict")
		p.probe()
		return p.sim.Requests("conflict")-before == 1
	}},
	"max_pages": {yaml: "max_pages: 2", sim: simulator.Config{Events: 120, PageSize: 50}, effect: func(p *prober) bool {
		return p.success("conflict") == 0
	}},
	"max_response_bytes": {yaml: "max_response_bytes: 1KiB", sim: simulator.Config{Events: 120, PageSize: 50}, effect: func(p *prober) bool {
		return p.success("conflict") == 0 && p.success("global-stability") == 1
	}},
	"max_document_bytes": {yaml: "max_document_bytes: 100B", effect: func(p *prober) bool {
		return p.success("global-stability") == 0 && p.success("conflict") == 1
	}},
	"tls_config": {yaml: "tls_config: {insecure_skip_verify: true}", tls: true, effect: func(p *prober) bool {
		v, _ := p.probe().Get("global_stability_up")
		return v == 1
	}},
	"http_cache": {yaml: "http_cache: false", sim: simulator.Config{Validators: true, CacheControl: "max-age=300"}, effect: func(p *prober) bool {
		return p.secondProbeAsks("global-stability")
	}},
	"summary_refresh_interval": {yaml: "summary_refresh_interval: 0s", sim: noCaching, effect: func(p *prober) bool {
		return p.secondProbeAsks("summaries")
	}},
	"cache_ttl": {yaml: "cache_ttl: 1h", sim: noCaching, effect: func(p *prober) bool {
		return !p.secondProbeAsks("global-stability")
	}},
	"max_label_values": {yaml: "max_label_values: 2", effect: func(p *prober) bool {
		return len(p.probe().Family("global_stability_conflict_events_by_category")) == 2
	}},
	"max_series": {yaml: "max_series: 30", effect: func(p *prober) bool {
		v, _ := p.probe().Get("global_stability_label_values_dropped", "metric", "global_stability_conflict_events_by_actor")
		return v > 0
	}},
	"grid_degrees": {yaml: "grid_degrees: 30", effect: func(p *prober) bool {
		cells := p.probe().Family("global_stability_conflict_events_by_cell")
		for k := range cells {
			_, v, _ := strings.Cut(k, `lat="`)
			centre, err := strconv.ParseFloat(v[:strings.IndexByte(v, '"')], 64)
			if err != nil || int(centre+90)%30 != 15 {
				return false
			}
		}
		return len(cells) > 0
	}},
}

// groupOff is the case of a collectors.<group> field, from the endpoint
// descriptions: off, the group's endpoints are no longer collected, and
// every other endpoint still is.
func groupOff(group string) settingCase {
	return settingCase{yaml: "collectors: {" + group + ": false}", effect: func(p *prober) bool {
		s := p.probe()
		for _, e := range endpoint.All() {
			if _, collected := s.Get("global_stability_scrape_success", "endpoint", e.Label); collected == (e.Group == group) {
				return false
			}
		}
		return true
	}}
}

// TestReloadAppliesEverySetting changes each setting of the targets' file
// in turn: before the reload its effect is absent, after it the target was
// rebuilt and the effect shows. Whether a target "did not change" can so
// never ignore a setting.
func TestReloadAppliesEverySetting(t *testing.T) {
	d := declared(t)
	for _, st := range d.List() {
		if st.Field == "" {
			continue
		}
		c, ok := settingCases[st.Field]
		if group, isGroup := strings.CutPrefix(st.Field, "collectors."); isGroup {
			c, ok = groupOff(group), true
		}
		if !ok {
			t.Errorf("no case in settingCases for the setting %s", st.Field)
			continue
		}
		t.Run(st.Field, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			cfg := c.sim
			cfg.Key, cfg.Seed = "key-a-0123456789abcdef", 1
			sim := simulator.New(cfg)
			srv := httptest.NewUnstartedServer(sim)
			srv.Config.ErrorLog = stdlog.New(io.Discard, "", 0) // the refused handshakes before the reload
			if c.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			t.Cleanup(srv.Close)
			alt := newAccount(t, cfg.Key, 2, nil)
			writeAtomically(t, filepath.Join(dir, "a.key"), cfg.Key)
			writeAtomically(t, filepath.Join(dir, "wrong.key"), "key-nobody-knows-0123456789")
			file := func(extra string) {
				extra = strings.NewReplacer("{{alt}}", alt.srv.URL, "{{dir}}", dir).Replace(extra)
				fields := []string{"name: a", "api_url: " + srv.URL, "api_key_file: a.key"}
				for line := range strings.SplitSeq(extra, "\n    ") {
					field, _, _ := strings.Cut(line, ":") // a field of the case's replaces the base's: none is given twice
					fields = slices.DeleteFunc(fields, func(f string) bool { return strings.HasPrefix(f, field+":") })
					if line != "" {
						fields = append(fields, line)
					}
				}
				writeAtomically(t, filepath.Join(dir, "targets.yml"), "targets:\n  - "+strings.Join(fields, "\n    ")+"\n")
			}
			file("")
			set, err := newSet(filepath.Join(dir, "targets.yml"), declared(t), newEnv(40).Env)
			if err != nil {
				t.Fatal(err)
			}
			p := &prober{t: t, set: set, sim: sim, alt: alt, dir: dir}
			if c.effect(p) {
				t.Fatalf("the effect of %q shows before the reload", c.yaml)
			}
			before, _ := set.Get("a")
			file(c.yaml)
			if err := set.Reload(); err != nil {
				t.Fatal(err)
			}
			if after, _ := set.Get("a"); after == before {
				t.Errorf("%s changed, and the reload kept the target as it was", st.Field)
			}
			if !c.effect(p) {
				t.Errorf("after the reload, the effect of %q does not show", c.yaml)
			}
		})
	}
}

// TestDefaultsAreTheFlagsDefaults: the defaults a target starts from are
// the declared ones, as the flags give them.
func TestDefaultsAreTheFlagsDefaults(t *testing.T) {
	d := declared(t)
	if !targets.Same(d, defaults()) {
		t.Errorf("the declared defaults are %+v, want %+v", d, defaults())
	}
}

// TestAReloadThatCannotBuildATargetFailsVisibly: a file that loads but
// names a CA file nobody can read, or a key file that is a FIFO, fails the
// reload: the gauge says 0, the log names the target and the field, and
// the running targets go on (with their counters).
func TestAReloadThatCannotBuildATargetFailsVisibly(t *testing.T) {
	for name, edit := range map[string]func(file, fifo string) string{
		"an unreadable CA file": func(file, _ string) string { return file + "    tls_config: {ca_file: /nonexistent/ca.pem}\n" },
		"a FIFO as key file": func(file, fifo string) string {
			return regexp.MustCompile(`api_key_file: .*`).ReplaceAllString(file, "api_key_file: "+fifo)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			fifo := filepath.Join(dir, "fifo")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Skipf("no FIFO here: %v", err)
			}
			accounts := map[string]*account{"prod": newAccount(t, "key-prod-0123456789", 1, nil)}
			env := newEnv(40)
			var logs strings.Builder
			env.Logger = log.NewLogfmtLogger(log.NewSyncWriter(&logs))
			set, path := loadSet(t, dir, accounts, env, "prod")
			reg := prometheus.NewRegistry()
			reg.MustRegister(set.Collectors()...)
			probe(t, set, "target=prod")
			before, _ := set.Get("prod")
			good, _ := os.ReadFile(path)
			writeAtomically(t, path, edit(string(good), fifo))
			err := set.Reload()
			field := "api_key_file"
			if strings.Contains(name, "CA") {
				field = "tls_config"
			}
			if want := "targets[0] (prod): " + field + ": "; err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(logs.String(), want) { // named as every problem of the file is
				t.Errorf("neither error nor log say %q:\n%v\n%s", want, err, logs.String())
			}
			if v := value(t, reg, "global_stability_exporter_config_last_reload_successful"); v != 0 {
				t.Errorf("last_reload_successful %v after a reload that failed", v)
			}
			if after, _ := set.Get("prod"); after != before {
				t.Error("the running target was replaced")
			}
			if code, _ := probe(t, set, "target=prod"); code != 200 {
				t.Errorf("the running target after the failed reload: %d", code)
			}
		})
	}
}

// TestAChangedTargetKeepsItsCounters: a target rebuilt by a reload goes on
// counting from where it was (a counter reset would read as a burst of
// requests to rate()), and a probe of a name that is not a target creates
// no series.
func TestAChangedTargetKeepsItsCounters(t *testing.T) {
	dir := t.TempDir()
	accounts := map[string]*account{"prod": newAccount(t, "key-prod-0123456789", 1, nil)}
	env := newEnv(40)
	set, _ := loadSet(t, dir, accounts, env, "prod")
	probe(t, set, "target=prod")
	targetsFile(t, dir, accounts, map[string]string{"prod": "    http_cache: false\n"}, "prod")
	if err := set.Reload(); err != nil {
		t.Fatal(err)
	}
	probe(t, set, "target=prod")
	if v := value(t, env.reg, "global_stability_api_requests_total", "target", "prod", "endpoint", "summaries", "code", "200"); v != 2 {
		t.Errorf("requests_total{summaries,200} = %v after a probe before and one after the reload, want 2", v)
	}
	if v := value(t, env.reg, "global_stability_exporter_scrapes_total", "target", "prod"); v != 2 {
		t.Errorf("scrapes_total = %v, want 2", v)
	}
	for _, name := range []string{"nobody", "https://evil.example.com"} {
		probe(t, set, "target="+name)
		fams, err := env.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fams {
			for _, m := range f.GetMetric() {
				for _, l := range m.GetLabel() {
					if l.GetName() == "target" && l.GetValue() != "prod" {
						t.Errorf("a probe of %q created %s{target=%q}", name, f.GetName(), l.GetValue())
					}
				}
			}
		}
	}
}

// TestATurnedOffEndpointLeavesNoQuotaStanding: the quota an endpoint's
// answers announced (every gauge of it: limit, remaining, reset, window)
// goes with the endpoint when a reload turns it off, rather than stand at
// its last value for ever; the others' stays, and so does another target's
// quota of the same endpoint.
func TestATurnedOffEndpointLeavesNoQuotaStanding(t *testing.T) {
	dir := t.TempDir()
	set, env, accounts := announcingSet(t, dir)
	quotas := func() map[string]map[string]bool { // quota gauge → the target/endpoint pairs it has a series of
		fams, err := env.reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]map[string]bool{}
		for _, f := range fams {
			if !strings.HasPrefix(f.GetName(), "global_stability_api_rate_limit_") {
				continue
			}
			out[f.GetName()] = map[string]bool{}
			for _, m := range f.GetMetric() {
				labels := map[string]string{}
				for _, l := range m.GetLabel() {
					labels[l.GetName()] = l.GetValue()
				}
				out[f.GetName()][labels["target"]+"/"+labels["endpoint"]] = true
			}
		}
		return out
	}
	probe(t, set, "target=prod")
	probe(t, set, "target=staging")
	before := quotas()
	if len(before) != 4 {
		t.Fatalf("quota gauges before the reload: %v, want limit, remaining, reset and window", before)
	}
	for g, series := range before {
		if !series["prod/summaries"] || !series["prod/global-stability/pillar/cyber"] || !series["staging/summaries"] {
			t.Fatalf("%s before the reload: %v, want both targets' summaries and the drilldowns among them", g, series)
		}
	}
	targetsFile(t, dir, accounts, map[string]string{"prod": "    collectors: {summary: false}\n"}, "prod", "staging")
	if err := set.Reload(); err != nil {
		t.Fatal(err)
	}
	// Before any probe of the new target: each endpoint it still collects
	// (every drilldown too, built anew for each target) keeps its quota.
	after := quotas()
	for g, series := range before {
		for s := range series {
			if got, want := after[g][s], s != "prod/summaries"; got != want {
				t.Errorf("after the reload, %s has a series of %s: %v, want %v", s, g, got, want)
			}
		}
	}
	probe(t, set, "target=prod")
	for g, series := range quotas() {
		if series["prod/summaries"] || !series["prod/global-stability"] || !series["staging/summaries"] {
			t.Errorf("%s after prod's summary was turned off: %v, want prod's global-stability and staging's summaries, and no summaries of prod", g, series)
		}
	}
}

// announcingSet is a set of prod and staging from a targets' file in dir,
// each account's API announcing a quota on every answer.
func announcingSet(t *testing.T, dir string) (*targets.Set, testEnv, map[string]*account) {
	t.Helper()
	accounts := map[string]*account{
		"prod":    newAccount(t, "key-prod-0123456789", 1, announce),
		"staging": newAccount(t, "key-staging-0123456789", 2, announce),
	}
	env := newEnv(40)
	set, _ := loadSet(t, dir, accounts, env, "prod", "staging")
	return set, env, accounts
}

// announce wraps an account's API in a quota on every answer.
func announce(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("RateLimit-Limit", "100, 100;w=60") // the draft's fields: a window too
		w.Header().Set("RateLimit-Remaining", "50")
		w.Header().Set("RateLimit-Reset", "30")
		h.ServeHTTP(w, r)
	})
}

// TestARequestReadAfterAReloadBringsNothingBack: a probe that leaves a
// collection still reading a body lets its requests be read after a reload
// let go of their target. Forced here to come after the reload, they set
// no quota of an endpoint the reload turned off and no series of a target
// it removed, while a target still served counts them.
func TestARequestReadAfterAReloadBringsNothingBack(t *testing.T) {
	dir := t.TempDir()
	set, env, accounts := announcingSet(t, dir)
	prod, _ := set.Get("prod")
	staging, _ := set.Get("staging")
	targetsFile(t, dir, accounts, map[string]string{"prod": "    collectors: {summary: false}\n"}, "prod")
	if err := set.Reload(); err != nil {
		t.Fatal(err)
	}
	for _, late := range []*targets.Target{prod, staging} {
		if _, _, err := late.Collections.Gather(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	fams, err := env.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			quota := strings.HasPrefix(f.GetName(), "global_stability_api_rate_limit_")
			if labels["target"] == "staging" || quota && labels["target"]+"/"+labels["endpoint"] == "prod/summaries" {
				t.Errorf("a request read after the reload brought back %s %v", f.GetName(), labels)
			}
		}
	}
	if v := value(t, env.reg, "global_stability_api_requests_total", "target", "prod", "endpoint", "summaries", "code", "200"); v != 1 {
		t.Errorf("prod's summary requests: %v, want 1: a target still served counts every request", v)
	}
}

// TestAFailedReloadLeavesNoTargetBehind: a reload that built a target new
// to the file and then could not build the next serves neither, and the
// new one leaves no series: what /metrics shows per target is the targets
// served, with the running ones' counters as they were.
func TestAFailedReloadLeavesNoTargetBehind(t *testing.T) {
	dir := t.TempDir()
	accounts := map[string]*account{
		"prod":  newAccount(t, "key-prod-0123456789", 1, nil),
		"added": newAccount(t, "key-added-0123456789", 2, nil),
	}
	env := newEnv(40)
	set, _ := loadSet(t, dir, accounts, env, "prod")
	probe(t, set, "target=prod")
	targetsFile(t, dir, accounts, map[string]string{"prod": "    tls_config: {ca_file: /nonexistent/ca.pem}\n"}, "added", "prod")
	if err := set.Reload(); err == nil {
		t.Fatal("a reload naming a CA file that is not there succeeded")
	}
	if _, ok := set.Get("added"); ok {
		t.Error("the target of the failed reload is served")
	}
	fams, err := env.reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "target" && l.GetValue() != "prod" {
					t.Errorf("the failed reload left %s{target=%q}", f.GetName(), l.GetValue())
				}
			}
		}
	}
	if v := value(t, env.reg, "global_stability_api_requests_total", "target", "prod", "endpoint", "summaries", "code", "200"); v != 1 {
		t.Errorf("prod's requests_total{summaries,200} = %v after the failed reload, want 1", v)
	}
	if n, _ := accounts["added"].requests(); n != 0 {
		t.Errorf("the target of the failed reload sent %d requests", n)
	}
}

// TestAFailedReloadNeverShowsAKey: text where a key may have been pasted
// (a key file's path, a target's name, a field's name, a value, a URL's
// password, a CA file's path that fails the target's build) is withheld
// from a failed reload's answer, which POST /-/reload gives without
// credentials, and from its log line, both still naming the problems.
func TestAFailedReloadNeverShowsAKey(t *testing.T) {
	const key = "gsk_live_pasted_9d8c7b6a5f4e3d2c"
	accounts := map[string]*account{"prod": newAccount(t, "key-prod-0123456789", 1, nil)}
	env := newEnv(40)
	var logs strings.Builder
	env.Logger = log.NewLogfmtLogger(log.NewSyncWriter(&logs))
	set, path := loadSet(t, readableDir(t), accounts, env, "prod")
	good, _ := os.ReadFile(path)
	for name, tc := range map[string]struct{ yaml, want string }{
		"in the file": {fmt.Sprintf("targets:\n  - {name: a, api_url: https://a.example.com, api_key_file: %[1]s}\n"+
			"  - {name: %[1]s, api_url: \"https://user:%[1]s@a.example.com/?q\", api_key_file: prod.key, %[1]s: 1, timeout: %[1]s, tls_config: {min_version: %[1]s}}\n", key),
			"targets[0] (a): api_key_file: file <withheld: "},
		"in a build": {string(good) + "    tls_config: {ca_file: " + key + "}\n", "targets[0] (prod): tls_config: <withheld: "},
	} {
		t.Run(name, func(t *testing.T) {
			writeAtomically(t, path, tc.yaml)
			w := httptest.NewRecorder()
			set.ServeReload(w, httptest.NewRequest(http.MethodPost, "/-/reload", nil))
			if w.Code != http.StatusInternalServerError || !strings.Contains(w.Body.String(), tc.want) {
				t.Errorf("POST /-/reload: %d, want 500 saying %q:\n%s", w.Code, tc.want, w.Body)
			}
			for what, text := range map[string]string{"the answer": w.Body.String(), "the log": logs.String()} {
				if piece := leakcheck.Find(text, key); piece != "" {
					t.Errorf("%s shows %q of the key:\n%s", what, piece, text)
				}
			}
		})
	}
}
