// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/testutil/pipenet"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// These tests hold the exporter to the API's own freshness (RFC 9111) in a
// synctest bubble: what is reused, when it is asked for again, with which
// validators, and what is exported meanwhile.

// cachingEnv is an exporter with a store, its API metrics on the gatherer.
type cachingEnv struct {
	handler http.Handler
}

func newCachingEnv(t *testing.T, upstream http.Handler, store *endpoint.Store, endpoints []*endpoint.Endpoint, refresh time.Duration) *cachingEnv {
	t.Helper()
	net := pipenet.Serve(upstream)
	t.Cleanup(net.Close)
	var labels []string
	for _, e := range endpoints {
		labels = append(labels, e.Label)
	}
	metrics := collector.NewAPIMetrics().Target(nil, labels)
	cl, err := client.New(client.Config{BaseURL: "http://api.test", APIKey: client.StaticKey(testKey), HTTPClient: net.Client(),
		Observe: metrics.Observer(log.NewNopLogger())})
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.Collectors()...)
	cfg := collector.Config{Client: cl, Logger: log.NewNopLogger(), Endpoints: endpoints, Reused: metrics.Reused,
		Endpoint: endpoint.Config{Store: store, Refresh: map[string]time.Duration{endpoint.Summary.Label: refresh}}}
	return &cachingEnv{handler: handler.New(handler.Options{
		Collections: collector.NewCollections(cfg), Gatherer: reg, Logger: log.NewNopLogger(),
		DefaultTimeout: 10 * time.Second, TimeoutOffset: 500 * time.Millisecond,
	})}
}

func (e *cachingEnv) scrape(t *testing.T) promtext.Samples {
	t.Helper()
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil).WithContext(context.Background()))
	if w.Code != http.StatusOK {
		t.Fatalf("status %d\n%s", w.Code, w.Body)
	}
	return parseSamples(t, w.Body.String())
}

// cachingAPI answers each path with the body and headers set for it, as a
// caching-aware API would (ETag and 304), and records every request.
type cachingAPI struct {
	mu       sync.Mutex
	bodies   map[string]string      // path (with query) → body
	headers  map[string]http.Header // path → extra headers
	requests []string               // "path If-None-Match"
	bare304  bool                   // a 304 without the caching headers
}

func newCachingAPI() *cachingAPI {
	return &cachingAPI{bodies: map[string]string{}, headers: map[string]http.Header{}}
}

func (f *cachingAPI) set(path, body string, headers ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.bodies[path] = body
	h := http.Header{}
	for i := 0; i+1 < len(headers); i += 2 {
		h.Set(headers[i], headers[i+1])
	}
	f.headers[path] = h
}

func (f *cachingAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	path := r.URL.RequestURI()
	f.mu.Lock()
	body, ok := f.bodies[path]
	h := f.headers[path]
	f.requests = append(f.requests, strings.TrimSpace(path+" "+r.Header.Get("If-None-Match")))
	f.mu.Unlock()
	if !ok {
		http.NotFound(w, r)
		return
	}
	for k, v := range h {
		w.Header()[k] = v
	}
	etag := fmt.Sprintf(`"%d-%d"`, len(body), strings.Count(body, "1")+7*strings.Count(body, "2"))
	if h.Get("ETag") == "" {
		w.Header().Set("ETag", etag)
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && inm == w.Header().Get("ETag") {
		f.mu.Lock()
		if f.bare304 {
			w.Header().Del("Cache-Control")
			w.Header().Del("Expires")
		}
		f.mu.Unlock()
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, body)
}

// take returns the requests since the last call.
func (f *cachingAPI) take() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := f.requests
	f.requests = nil
	return out
}

func overviewBody(score int, asOf time.Time) string {
	return fmt.Sprintf(`{"score": %d, "trend": "stable", "pillars": {"conflict": 1, "cyber": 2, "supply_chain": 3, "macro": 4}, "as_of": %q}`, score, asOf.UTC().Format(time.RFC3339))
}

// TestFreshStaleAndNotModified: while max-age allows, the stored answer is
// exported with its own as_of and no request is sent; once stale, the
// request carries the ETag, a 304 reuses the answer, and a changed answer
// replaces it.
func TestFreshStaleAndNotModified(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		t0 := time.Now()
		api.set("/v1/global-stability", overviewBody(40, t0), "Cache-Control", "max-age=30")
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)

		s := e.scrape(t)
		if got := api.take(); len(got) != 1 || got[0] != "/v1/global-stability" {
			t.Fatalf("first scrape sent %q, want one request without validators", got)
		}
		asOf := value(t, s, "global_stability_as_of_timestamp_seconds", "endpoint", "global-stability")

		time.Sleep(29 * time.Second)
		s = e.scrape(t)
		if got := api.take(); len(got) != 0 {
			t.Errorf("a scrape inside max-age=30 sent %q", got)
		}
		if v := value(t, s, "global_stability_score"); v != 40 {
			t.Errorf("score %v from the fresh answer, want 40", v)
		}
		if v := value(t, s, "global_stability_as_of_timestamp_seconds", "endpoint", "global-stability"); v != asOf {
			t.Errorf("as_of %v, want the stored answer's own %v", v, asOf)
		}
		if v := value(t, s, "global_stability_api_responses_reused_total", "endpoint", "global-stability", "reason", "fresh"); v != 1 {
			t.Errorf("reused fresh %v, want 1", v)
		}

		time.Sleep(2 * time.Second) // 31 s: stale
		s = e.scrape(t)
		got := api.take()
		if len(got) != 1 || !strings.HasSuffix(got[0], `"`) {
			t.Fatalf("a scrape past max-age sent %q, want one request with If-None-Match", got)
		}
		if v := value(t, s, "global_stability_api_responses_reused_total", "endpoint", "global-stability", "reason", "not_modified"); v != 1 {
			t.Errorf("reused not_modified %v, want 1", v)
		}
		if v := value(t, s, "global_stability_api_requests_total", "endpoint", "global-stability", "code", "304"); v != 1 {
			t.Errorf("requests with code 304: %v, want 1", v)
		}
		if v := value(t, s, "global_stability_scrape_success", "endpoint", "global-stability"); v != 1 {
			t.Errorf("a 304 counted as a failure: scrape_success %v", v)
		}
		if v := value(t, s, "global_stability_score"); v != 40 {
			t.Errorf("score %v after a 304, want 40", v)
		}

		// The 304 renewed the freshness: 30 s more without a request.
		time.Sleep(20 * time.Second)
		e.scrape(t)
		if got := api.take(); len(got) != 0 {
			t.Errorf("a scrape 20 s after a 304 with max-age=30 sent %q", got)
		}

		// Changed upstream: once stale, the new answer replaces the old.
		time.Sleep(11 * time.Second)
		api.set("/v1/global-stability", overviewBody(55, time.Now()), "Cache-Control", "max-age=30")
		s = e.scrape(t)
		if v := value(t, s, "global_stability_score"); v != 55 {
			t.Errorf("score %v after the API changed, want 55", v)
		}
		if v := value(t, s, "global_stability_api_received_bytes_total", "endpoint", "global-stability"); v <= 0 {
			t.Errorf("received bytes %v", v)
		}
	})
}

// TestNoStoreAndNoCache: no-store keeps nothing (every scrape downloads,
// no validators sent); no-cache keeps the answer but asks every time.
func TestNoStoreAndNoCache(t *testing.T) {
	for _, tc := range []struct {
		cacheControl string
		validators   bool
	}{{"no-store, max-age=30", false}, {"no-cache, max-age=30", true}} {
		t.Run(tc.cacheControl, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newCachingAPI()
				api.set("/v1/global-stability", overviewBody(40, time.Now()), "Cache-Control", tc.cacheControl)
				e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
				e.scrape(t)
				api.take()
				for range 3 {
					time.Sleep(5 * time.Second)
					s := e.scrape(t)
					got := api.take()
					if len(got) != 1 || strings.HasSuffix(got[0], `"`) != tc.validators {
						t.Fatalf("sent %q, want one request, with If-None-Match: %v", got, tc.validators)
					}
					if v := value(t, s, "global_stability_score"); v != 40 {
						t.Errorf("score %v", v)
					}
				}
			})
		})
	}
}

// TestNoCachingHeadersCostAsBefore: an API that sends no caching headers
// and no validators is asked for every body on every scrape, as without a
// store; and --no-api.http-cache ignores headers an API does send.
func TestNoCachingHeadersCostAsBefore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey}) // no validators, no Cache-Control
		e := newCachingEnv(t, sim, endpoint.NewStore(true), endpoint.All(), 0)
		for range 4 {
			e.scrape(t)
			time.Sleep(15 * time.Second)
		}
		conflictPages := sim.Requests("conflict")
		if got := sim.TotalRequests(); got != 4*(len(endpoint.All())-1)+conflictPages {
			t.Errorf("%d requests in 4 scrapes, want every endpoint every time", got)
		}
	})
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey, Validators: true, CacheControl: "max-age=300"})
		e := newCachingEnv(t, sim, endpoint.NewStore(false), []*endpoint.Endpoint{endpoint.Overview}, 0)
		for range 4 {
			s := e.scrape(t)
			if v, ok := s.Get("global_stability_api_requests_total", "endpoint", "global-stability", "code", "304"); ok {
				t.Fatalf("--no-api.http-cache sent validators: %v answers were 304", v)
			}
			time.Sleep(15 * time.Second)
		}
		if got := sim.Requests("global-stability"); got != 4 {
			t.Errorf("--no-api.http-cache: %d requests in 4 scrapes, want 4", got)
		}
	})
}

// TestWalkNeverStitchedFromTwoMoments: a paged endpoint is reused only when
// the API confirms every page; when a later page changed after earlier
// ones were confirmed, the walk starts again from the first page without
// validators, and what is exported is the new list whole.
func TestWalkNeverStitchedFromTwoMoments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		event := func(id string, escalation float64) string {
			return fmt.Sprintf(`{"id": %q, "lat": 1, "lon": 1, "category": "protest", "escalation": %v, "occurred_at": "2000-01-01T00:00:00Z"}`, id, escalation)
		}
		api.set("/v1/conflict", `{"events": [`+event("a", 0.1)+`], "next_cursor": "p2"}`)
		api.set("/v1/conflict?cursor=p2", `{"events": [`+event("b", 0.2)+`], "next_cursor": null}`)
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Conflict}, 0)
		e.scrape(t)
		api.take()

		// Unchanged: both pages confirmed by 304, the stored walk reused.
		time.Sleep(15 * time.Second)
		s := e.scrape(t)
		if got := api.take(); len(got) != 2 || !strings.HasSuffix(got[0], `"`) || !strings.HasSuffix(got[1], `"`) {
			t.Fatalf("sent %q, want both pages with If-None-Match", got)
		}
		if v := value(t, s, "global_stability_api_responses_reused_total", "endpoint", "conflict", "reason", "not_modified"); v != 1 {
			t.Errorf("reused not_modified %v, want 1", v)
		}
		if v := value(t, s, "global_stability_conflict_events"); v != 2 {
			t.Errorf("events %v from the confirmed walk, want 2", v)
		}

		// Page 2 changed (and page 1 will have, by the time it is asked
		// again): page 1's 304 must not be stitched to page 2's new body.
		time.Sleep(15 * time.Second)
		api.set("/v1/conflict?cursor=p2", `{"events": [`+event("b", 0.9)+`, `+event("c", 0.9)+`], "next_cursor": null}`)
		s = e.scrape(t)
		got := api.take()
		want := []string{"/v1/conflict 304?", "/v1/conflict?cursor=p2 (changed)", "/v1/conflict", "/v1/conflict?cursor=p2"}
		if len(got) != 4 || !strings.HasSuffix(got[0], `"`) || !strings.HasSuffix(got[1], `"`) || got[2] != "/v1/conflict" || got[3] != "/v1/conflict?cursor=p2" {
			t.Fatalf("sent %q, want %q: the walk restarted without validators", got, want)
		}
		if v := value(t, s, "global_stability_conflict_events"); v != 3 {
			t.Errorf("events %v, want the new list's 3", v)
		}
		if v := value(t, s, "global_stability_conflict_escalation_max"); v != 0.9 {
			t.Errorf("escalation max %v, want the new list's 0.9", v)
		}
	})
}

// TestSummaryRefreshInterval: a summary with as_of T is not asked for again
// before T + the interval, the spec's or one set; past it, it is; with the
// interval 0, every scrape asks.
func TestSummaryRefreshInterval(t *testing.T) {
	for _, interval := range []time.Duration{endpoint.Summary.Refresh, 2 * endpoint.Summary.Refresh} { // the spec's, and one set longer
		synctest.Test(t, func(t *testing.T) {
			sim := simulator.New(simulator.Config{Key: testKey}) // no caching headers: only the interval saves requests
			e := newCachingEnv(t, sim, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Summary}, interval)
			// synctest's clock starts on a 30-minute boundary: as_of is now.
			time.Sleep(time.Minute)
			e.scrape(t) // as_of T = 00:00, fetched at 00:01
			inside := int(interval/time.Minute) - 2
			for range inside {
				time.Sleep(time.Minute)
				e.scrape(t)
			}
			if got := sim.Requests("summaries"); got != 1 {
				t.Errorf("interval %s: %d requests inside it (00:01 to T + interval - 1m), want 1", interval, got)
			}
			time.Sleep(time.Minute) // T + interval
			s := e.scrape(t)
			if got := sim.Requests("summaries"); got != 2 {
				t.Errorf("interval %s: %d requests at T + interval, want 2", interval, got)
			}
			if v := value(t, s, "global_stability_api_responses_reused_total", "endpoint", "summaries", "reason", "refresh_interval"); v != float64(inside) {
				t.Errorf("interval %s: reused refresh_interval %v, want %d", interval, v, inside)
			}
			if asOf := value(t, s, "global_stability_as_of_timestamp_seconds", "endpoint", "summaries"); time.Unix(int64(asOf), 0).Before(time.Now().Add(-interval)) {
				t.Errorf("interval %s: as_of %v is older than the interval", interval, asOf)
			}
		})
	}
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey})
		e := newCachingEnv(t, sim, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Summary}, 0)
		for range 5 {
			time.Sleep(time.Minute)
			e.scrape(t)
		}
		if got := sim.Requests("summaries"); got != 5 {
			t.Errorf("interval 0: %d requests in 5 scrapes, want 5", got)
		}
	})
}

// TestHAPairCostsOneServer: two Prometheus servers scraping every 15 s,
// 7.5 s out of phase, against an API that allows 30 s: each endpoint is
// asked about once per 30 s, not four times, and no exported as_of is ever
// older than the API allowed.
func TestHAPairCostsOneServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey, Validators: true, CacheControl: "max-age=30"})
		e := newCachingEnv(t, sim, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
		const scrapes = 40 // 5 minutes, two servers
		for i := range scrapes {
			s := e.scrape(t)
			asOf := value(t, s, "global_stability_as_of_timestamp_seconds", "endpoint", "global-stability")
			// The simulator's as_of is the minute; max-age=30 lets it be
			// reused 30 s: never more than 90 s old.
			if age := time.Since(time.Unix(int64(asOf), 0)); age > 90*time.Second {
				t.Fatalf("scrape %d: as_of %s old, more than the API allows", i, age)
			}
			time.Sleep(7500 * time.Millisecond)
		}
		if got := sim.Requests("global-stability"); got > 11 {
			t.Errorf("%d requests for %d scrapes over 5 minutes, want about one per 30 s (at most 11)", got, scrapes)
		}
	})
}

// TestQuotaInSight: the quota the API announces is exported per endpoint,
// and gone once the API stops announcing it; a quota is never needed for
// a scrape to succeed.
func TestQuotaInSight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		reset := time.Now().Add(40 * time.Minute).Truncate(time.Second)
		api.set("/v1/global-stability", overviewBody(40, time.Now()),
			"RateLimit-Policy", `"hourly";q=1000;w=3600`, "RateLimit", fmt.Sprintf(`"hourly";r=120;t=%d`, int(time.Until(reset).Seconds())))
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
		s := e.scrape(t)
		for name, want := range map[string]float64{
			"global_stability_api_rate_limit_limit":                   1000,
			"global_stability_api_rate_limit_remaining":               120,
			"global_stability_api_rate_limit_window_seconds":          3600,
			"global_stability_api_rate_limit_reset_timestamp_seconds": float64(reset.Unix()),
		} {
			if v := value(t, s, name, "endpoint", "global-stability"); v != want {
				t.Errorf("%s %v, want %v", name, v, want)
			}
		}
		// A 304 carries the quota too.
		body := overviewBody(40, time.Now())
		api.set("/v1/global-stability", body, "RateLimit-Policy", `"hourly";q=1000;w=3600`, "RateLimit", `"hourly";r=119;t=60`)
		s = e.scrape(t)
		if v := value(t, s, "global_stability_api_requests_total", "endpoint", "global-stability", "code", "304"); v != 1 {
			t.Fatalf("%v answers 304, want 1", v)
		}
		if v := value(t, s, "global_stability_api_rate_limit_remaining", "endpoint", "global-stability"); v != 119 {
			t.Errorf("remaining %v after a 304 announcing 119", v)
		}
		// Used up: a remaining of 0 is the value that matters most; a quota
		// without a window has none exported.
		api.set("/v1/global-stability", overviewBody(42, time.Now()), "X-RateLimit-Limit", "0", "X-RateLimit-Remaining", "0")
		time.Sleep(time.Minute)
		s = e.scrape(t)
		if v, ok := s.Get("global_stability_api_rate_limit_remaining", "endpoint", "global-stability"); !ok || v != 0 {
			t.Errorf("remaining %v (present %v), want 0", v, ok)
		}
		if v, ok := s.Get("global_stability_api_rate_limit_limit", "endpoint", "global-stability"); !ok || v != 0 {
			t.Errorf("limit %v (present %v), want 0", v, ok)
		}
		if _, ok := s.Get("global_stability_api_rate_limit_window_seconds", "endpoint", "global-stability"); ok {
			t.Error("a window is exported that the API did not announce")
		}
		api.set("/v1/global-stability", overviewBody(41, time.Now()))
		time.Sleep(time.Minute)
		s = e.scrape(t)
		if _, ok := s.Get("global_stability_api_rate_limit_remaining", "endpoint", "global-stability"); ok {
			t.Error("the quota stays exported after the API stopped announcing it")
		}
		if v := value(t, s, "global_stability_scrape_success", "endpoint", "global-stability"); v != 1 {
			t.Error("a scrape without quota headers failed")
		}
	})
}

// TestFirstPageChangedReadsEveryPage: once the first page has changed, the
// later pages are asked for without validators (a 304 for them would leave
// the new first page beside old data).
func TestFirstPageChangedReadsEveryPage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		api.set("/v1/conflict", `{"events": [], "next_cursor": "p2"}`)
		api.set("/v1/conflict?cursor=p2", `{"events": [], "next_cursor": null}`)
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Conflict}, 0)
		e.scrape(t)
		api.take()
		time.Sleep(15 * time.Second)
		api.set("/v1/conflict", `{"events": [{"id": "n", "lat": 1, "lon": 1, "category": "riot", "escalation": 0.5, "occurred_at": "2000-01-01T00:00:00Z"}], "next_cursor": "p2"}`)
		s := e.scrape(t)
		if got := api.take(); len(got) != 2 || !strings.HasSuffix(got[0], `"`) || got[1] != "/v1/conflict?cursor=p2" {
			t.Fatalf("sent %q, want page 1 with If-None-Match, then page 2 without", got)
		}
		if v := value(t, s, "global_stability_conflict_events"); v != 1 {
			t.Errorf("events %v, want 1", v)
		}
	})
}

// TestAFutureAsOfHoldsNoLonger: a summary whose as_of lies ahead (valid up
// to an hour) is still asked for again one interval after it was fetched.
func TestAFutureAsOfHoldsNoLonger(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		ahead := time.Now().Add(50 * time.Minute).UTC().Format(time.RFC3339)
		api.set("/v1/summaries", `{"summary": "x", "as_of": "`+ahead+`"}`, "ETag", "")
		e := newCachingEnv(t, api, endpoint.NewStore(false), []*endpoint.Endpoint{endpoint.Summary}, 15*time.Minute)
		e.scrape(t)
		time.Sleep(15*time.Minute + time.Second)
		e.scrape(t)
		if got := api.take(); len(got) != 2 {
			t.Errorf("sent %q: an as_of 50 minutes ahead held the summary past its interval", got)
		}
	})
}

// TestAFailureIsNotHiddenByTheStore: once the stored answer is no longer
// fresh, a failing endpoint is absent and failed, not its stored answer
// shown as good; and a 304 to a request without validators is a failure.
func TestAFailureIsNotHiddenByTheStore(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		api.set("/v1/global-stability", overviewBody(40, time.Now()), "Cache-Control", "max-age=30")
		var broken sync.Mutex
		status := 0
		upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			broken.Lock()
			s := status
			broken.Unlock()
			if s != 0 {
				w.WriteHeader(s)
				return
			}
			api.ServeHTTP(w, r)
		})
		e := newCachingEnv(t, upstream, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
		e.scrape(t)
		broken.Lock()
		status = http.StatusInternalServerError
		broken.Unlock()
		time.Sleep(31 * time.Second)
		s := e.scrape(t)
		if v := value(t, s, "global_stability_scrape_success", "endpoint", "global-stability"); v != 0 {
			t.Errorf("scrape_success %v while the API fails", v)
		}
		if _, ok := s.Get("global_stability_score"); ok {
			t.Error("the stored score is exported while the API fails and the answer is stale")
		}
	})
	synctest.Test(t, func(t *testing.T) {
		upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) })
		e := newCachingEnv(t, upstream, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
		if v := value(t, e.scrape(t), "global_stability_scrape_success", "endpoint", "global-stability"); v != 0 {
			t.Errorf("a 304 to a request without validators: scrape_success %v, want 0", v)
		}
	})
}

// TestReceivedBytesAreTheBodies: the byte counter adds each body as sent,
// and nothing for a 304.
func TestReceivedBytesAreTheBodies(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		body := overviewBody(40, time.Now())
		api.set("/v1/global-stability", body)
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
		e.scrape(t)
		time.Sleep(time.Second)
		s := e.scrape(t) // a 304
		if v := value(t, s, "global_stability_api_received_bytes_total", "endpoint", "global-stability"); v != float64(len(body)) {
			t.Errorf("received bytes %v, want the one body's %d", v, len(body))
		}
	})
}

// TestA304WithoutCachingHeadersKeepsTheStoredOnes: a 304 that does not
// repeat Cache-Control leaves the stored answer's in force (RFC 9111
// section 4.3.4), so max-age=30 counts again from the 304.
func TestA304WithoutCachingHeadersKeepsTheStoredOnes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		api.bare304 = true
		api.set("/v1/global-stability", overviewBody(40, time.Now()), "Cache-Control", "max-age=30")
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
		e.scrape(t)
		time.Sleep(31 * time.Second)
		e.scrape(t) // a 304 without Cache-Control
		api.take()
		time.Sleep(20 * time.Second)
		e.scrape(t)
		if got := api.take(); len(got) != 0 {
			t.Errorf("20 s after a bare 304 of an answer with max-age=30, sent %q", got)
		}
		time.Sleep(11 * time.Second)
		e.scrape(t)
		if got := api.take(); len(got) != 1 {
			t.Errorf("31 s after it, sent %q, want one request", got)
		}
	})
}
