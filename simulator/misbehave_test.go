// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	described "github.com/global-stability/global_stability_exporter/endpoint"
)

// TestScriptedTrends: each trend moves the composite from the simulator's
// start as it says, with the API's own trend word: rising past the
// warning (60) and more than 10 above its start within half an hour, as
// the score alerts need; falling as far the other way; steady at the
// pillars' means, unmoved. Before the start, the world is the one the
// seed makes.
func TestScriptedTrends(t *testing.T) {
	want := map[string]struct {
		word  string
		moved func(d float64) bool
	}{
		"rising":  {"deteriorating", func(d float64) bool { return d >= 25 }},
		"falling": {"improving", func(d float64) bool { return d <= -25 }},
		"steady":  {"stable", func(d float64) bool { return d == 0 }},
	}
	for _, trend := range Trends {
		w, ok := want[trend]
		if !ok {
			t.Fatalf("trend %q: no expectation", trend)
		}
		overview := func(at time.Time) overviewJSON {
			s := New(Config{Key: key, Trend: trend, Now: func() time.Time { return t0 }})
			s.cfg.Now = func() time.Time { return at }
			return decode[overviewJSON](t, get(t, s, "/v1/global-stability", true))
		}
		start, later := overview(t0), overview(t0.Add(30*time.Minute))
		if !w.moved(later.Score - start.Score) {
			t.Errorf("%s: composite %v at the start, %v half an hour later", trend, start.Score, later.Score)
		}
		if later.Trend != w.word {
			t.Errorf("%s: the API's trend word %q, want %q", trend, later.Trend, w.word)
		}
		if trend == "rising" && later.Score <= 60 {
			t.Errorf("rising: %v after half an hour, not past the warning", later.Score)
		}
		untouched := decode[overviewJSON](t, get(t, at(t0.Add(-time.Hour), Config{}), "/v1/global-stability", true))
		if before := overview(t0.Add(-time.Hour)); trend != "steady" && before.Score != untouched.Score {
			t.Errorf("%s: an hour before the start %v, the seed's world %v", trend, before.Score, untouched.Score)
		}
	}
	steady := New(Config{Key: key, Trend: "steady", Now: func() time.Time { return t0 }})
	for _, p := range pillarModels {
		d := decode[drilldownJSON](t, get(t, steady, "/v1/global-stability/pillar/"+p.name, true))
		if d.Score != p.mean || d.Delta24h != 0 {
			t.Errorf("steady %s: score %v (mean %v), delta_24h %v", p.name, d.Score, p.mean, d.Delta24h)
		}
	}
}

// TestARevokedKeyIsRefused: every endpoint answers a revoked key with the
// 401 of a wrong one.
func TestARevokedKeyIsRefused(t *testing.T) {
	s := at(t0, Config{Revoked: true})
	for _, e := range described.All() {
		if w := get(t, s, "/v1/"+e.Label, true); w.Code != http.StatusUnauthorized || !strings.Contains(w.Body.String(), "unauthorized") {
			t.Errorf("%s with a revoked key: %d %s", e.Label, w.Code, w.Body)
		}
	}
}

// TestFailingEndpointsAnswer500: an endpoint listed as failing answers 500
// to every request, every other one as usual.
func TestFailingEndpointsAnswer500(t *testing.T) {
	for _, failing := range described.All() {
		s := at(t0, Config{Failing: []string{failing.Label}})
		for _, e := range described.All() {
			want := map[bool]int{true: http.StatusInternalServerError, false: http.StatusOK}[e.Label == failing.Label]
			if w := get(t, s, "/v1/"+e.Label, true); w.Code != want {
				t.Errorf("%s failing: %s answers %d, want %d", failing.Label, e.Label, w.Code, want)
			}
		}
	}
}

// TestLoadFromKeysOrAFile: one account per key, seeds counting up from
// the defaults'; or one per entry of an accounts' file, each the defaults
// but for what it sets; every problem of the file at once, by account.
func TestLoadFromKeysOrAFile(t *testing.T) {
	defaults := Config{Seed: 5, Validators: true, CacheControl: DemoCacheControl, RateLimit: DemoRateLimit}
	load := func(keys []string, file string) ([]Config, error) {
		sims, err := Load(defaults, keys, file)
		var configs []Config
		for _, s := range sims {
			configs = append(configs, s.cfg)
		}
		return configs, err
	}
	got, err := load([]string{"key-a", "key-b"}, "")
	if err != nil || len(got) != 2 || got[0].Key != "key-a" || got[1].Seed != 6 || got[1].RateLimit != DemoRateLimit {
		t.Errorf("from keys: %+v, %v", got, err)
	}
	file := filepath.Join(t.TempDir(), "accounts.yml")
	write := func(text string) {
		if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("accounts:\n  - key: prod-key-0123456789\n    trend: rising\n  - key: staging-key-0123456789\n    revoked: true\n    rate_limit: 60\n    failing: [conflict, summaries]\n    latency: 10ms\n")
	got, err = load([]string{"ignored"}, file)
	if err != nil || len(got) != 2 {
		t.Fatalf("from a file: %+v, %v", got, err)
	}
	prod, staging := got[0], got[1]
	if prod.Key != "prod-key-0123456789" || prod.Trend != "rising" || prod.Seed != 5 || !prod.Validators || prod.RateLimit != DemoRateLimit {
		t.Errorf("prod: %+v, want rising with the defaults' validators and quota", prod)
	}
	if !staging.Revoked || staging.RateLimit != 60 || strings.Join(staging.Failing, ",") != "conflict,summaries" || staging.Latency != 10*time.Millisecond || staging.Seed != 6 {
		t.Errorf("staging: %+v", staging)
	}
	write("accounts:\n  - trend: sideways\n  - key: k\n    failing: [weather]\n  - key: k2\n    colour: red\n")
	_, err = load(nil, file)
	for _, want := range []string{"account 1: no key", `trend "sideways"`, `account 2: failing: "weather" is no endpoint`, "account 3", "colour"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("a bad file: error %v, want it to say %q", err, want)
		}
	}
	if _, err := load(nil, ""); err == nil {
		t.Error("no key and no file: no error")
	}
}

// TestTheDemoQuotaRunsOutInMinutes: the last account of the demo is
// answered 429 within three rounds of every endpoint (the first scrapes),
// so that --demo shows an account out of quota in its first minutes; the
// others never are.
func TestTheDemoQuotaRunsOutInMinutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // one clock hour, whenever the test runs
		demo := Demo("healthy-key", "scarce-key")
		refused := map[string]bool{}
		for range 3 {
			for _, e := range described.All() {
				for _, key := range []string{"healthy-key", "scarce-key"} {
					r := httptest.NewRequest(http.MethodGet, "/v1/"+e.Label, nil)
					r.Header.Set("Authorization", "Bearer "+key)
					w := httptest.NewRecorder()
					demo.ServeHTTP(w, r)
					refused[key] = refused[key] || w.Code == http.StatusTooManyRequests
				}
			}
		}
		if refused["healthy-key"] || !refused["scarce-key"] {
			t.Errorf("three rounds of every endpoint: refused %v; want the last account only, out of quota (%d an hour)", refused, DemoScarceRateLimit)
		}
	})
}
