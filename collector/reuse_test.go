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

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Rules of reuse that only a walk of several pages, a header beside
// another, or a scrape with no time left can break.

// slowPages delays the answer to some paths (in the bubble's fake time), so
// that the pages of one walk are received seconds apart.
type slowPages struct {
	api   http.Handler
	delay map[string]time.Duration // by request URI
}

func (s slowPages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	time.Sleep(s.delay[r.URL.RequestURI()])
	s.api.ServeHTTP(w, r)
}

// twoPages sets a conflict walk of two pages, each with its headers.
func twoPages(api *cachingAPI, first, second []string) {
	api.set("/v1/conflict", `{"events": [], "next_cursor": "p2"}`, first...)
	api.set("/v1/conflict?cursor=p2", `{"events": [], "next_cursor": null}`, second...)
}

// TestAWalkIsOnlyAsFreshAsItsLeastFreshPage: a stored walk is reused
// without asking only while every page of it is fresh; once one page is
// stale, the walk is revalidated, whichever page it is, and whether it
// went stale by a shorter max-age or by being received earlier.
func TestAWalkIsOnlyAsFreshAsItsLeastFreshPage(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second []string
		delay         map[string]time.Duration
		staleAt       time.Duration // after the walk was received; fresh just before
	}{
		{"the first page's max-age shorter", []string{"Cache-Control", "max-age=10"}, []string{"Cache-Control", "max-age=60"}, nil, 10 * time.Second},
		{"the second page's max-age shorter", []string{"Cache-Control", "max-age=60"}, []string{"Cache-Control", "max-age=10"}, nil, 10 * time.Second},
		// Same max-age, page 2 received 5 s after page 1: page 1 goes stale first.
		{"the same max-age, received apart", []string{"Cache-Control", "max-age=30"}, []string{"Cache-Control", "max-age=30"},
			map[string]time.Duration{"/v1/conflict?cursor=p2": 5 * time.Second}, 25 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newCachingAPI()
				twoPages(api, tc.first, tc.second)
				e := newCachingEnv(t, slowPages{api, tc.delay}, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Conflict}, 0)
				e.scrape(t) // the walk ends when its last page is received
				api.take()
				time.Sleep(tc.staleAt - time.Second)
				e.scrape(t)
				if got := api.take(); len(got) != 0 {
					t.Fatalf("%s after the walk, every page still fresh: sent %q, want nothing", tc.staleAt-time.Second, got)
				}
				time.Sleep(time.Second)
				e.scrape(t)
				if got := api.take(); len(got) == 0 || !strings.HasPrefix(got[0], "/v1/conflict ") {
					t.Fatalf("once a page is stale: sent %q, want the walk revalidated from its first page", got)
				}
			})
		})
	}
}

// TestNoStoreOnAnyPageForbidsKeepingTheWalk: no-store on any page of a walk,
// not only the first, means nothing of the walk is kept: the next
// collection asks for every page anew, without validators.
func TestNoStoreOnAnyPageForbidsKeepingTheWalk(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second []string
	}{
		{"on the second page", []string{"Cache-Control", "max-age=60"}, []string{"Cache-Control", "no-store"}},
		{"on the first page", []string{"Cache-Control", "no-store"}, []string{"Cache-Control", "max-age=60"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newCachingAPI()
				twoPages(api, tc.first, tc.second)
				e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Conflict}, 0)
				e.scrape(t)
				api.take()
				time.Sleep(time.Second)
				e.scrape(t)
				want := []string{"/v1/conflict", "/v1/conflict?cursor=p2"}
				if got := api.take(); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("sent %q, want %q: every page anew, without validators", got, want)
				}
			})
		})
	}
}

// TestVaryStarIsNeverReused: an answer with Vary: * never matches a later
// request (RFC 9111 4.1): neither reused while "fresh" nor revalidated.
func TestVaryStarIsNeverReused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		api.set("/v1/global-stability", overviewBody(40, time.Now()), "Cache-Control", "max-age=300", "Vary", "*")
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
		e.scrape(t)
		api.take()
		time.Sleep(time.Second)
		s := e.scrape(t)
		if got := api.take(); len(got) != 1 || got[0] != "/v1/global-stability" {
			t.Fatalf("sent %q, want one request without If-None-Match", got)
		}
		if v := value(t, s, "global_stability_score"); v != 40 {
			t.Errorf("score %v", v)
		}
	})
}

// TestAStoredCursorTheAPIForgotRestartsTheWalk: the first page is confirmed
// by a 304, but the API has let the stored cursor of page 2 expire and
// answers 404 (or 400, 410): the walk starts again from page 1, without
// validators, and follows the new cursors, instead of failing on every
// scrape.
func TestAStoredCursorTheAPIForgotRestartsTheWalk(t *testing.T) {
	for _, code := range []int{http.StatusBadRequest, http.StatusNotFound, http.StatusGone} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				api := newCachingAPI()
				twoPages(api, nil, nil)
				var mu sync.Mutex
				forgot := false
				upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					f := forgot
					mu.Unlock()
					if f && r.URL.Query().Get("cursor") == "p2" {
						http.Error(w, `{"error":"unknown cursor"}`, code)
						return
					}
					api.ServeHTTP(w, r)
				})
				e := newCachingEnv(t, upstream, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Conflict}, 0)
				e.scrape(t)
				api.take()
				// The cursors move on while the first page's data does not:
				// its ETag (of the data, as cachingAPI's is) still matches, so
				// the API confirms it with a 304 and the stored cursor p2 is
				// followed, which the API has forgotten.
				mu.Lock()
				forgot = true
				mu.Unlock()
				api.set("/v1/conflict", `{"events": [], "next_cursor": "q2"}`)
				api.set("/v1/conflict?cursor=q2", fmt.Sprintf(`{"events": [{"id": "e1", "lat": 1, "lon": 1, "category": "riot", "escalation": 0.5, "occurred_at": %q}], "next_cursor": null}`,
					time.Now().UTC().Format(time.RFC3339)))
				for range 2 { // and again: it must not fail on every scrape
					time.Sleep(15 * time.Second)
					s := e.scrape(t)
					if v := value(t, s, "global_stability_scrape_success", "endpoint", "conflict"); v != 1 {
						t.Fatalf("scrape_success %v after the API forgot a stored cursor", v)
					}
					if v := value(t, s, "global_stability_conflict_events"); v != 1 {
						t.Errorf("events %v, want the new walk's 1", v)
					}
				}
			})
		})
	}
}

// TestFreshAnswersNeedNoTimeLeft: a scrape whose timeout leaves nothing
// once the offset is taken (or almost nothing) still gets every answer the
// store may reuse without asking: they cost no request, so no time. Real
// time, not a bubble: with a timeout of a nanosecond the scrape's context
// has ended before the collection starts, which a bubble's fake clock
// would not let happen.
func TestFreshAnswersNeedNoTimeLeft(t *testing.T) {
	api := newCachingAPI()
	api.set("/v1/global-stability", overviewBody(40, time.Now()), "Cache-Control", "max-age=600")
	e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
	e.scrape(t)
	api.take()
	for i := range 20 {
		timeout := []string{"0.5", "0.000000001"}[i%2] // at or below the 0.5 s offset
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil).WithContext(context.Background())
		r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
		e.handler.ServeHTTP(w, r)
		s := parseSamples(t, w.Body.String())
		if v := value(t, s, "global_stability_scrape_success", "endpoint", "global-stability"); v != 1 {
			t.Fatalf("timeout %s s: scrape_success %v with a fresh answer stored", timeout, v)
		}
		if v := value(t, s, "global_stability_score"); v != 40 {
			t.Fatalf("timeout %s s: score %v", timeout, v)
		}
	}
	if got := api.take(); len(got) != 0 {
		t.Errorf("sent %q for fresh answers", got)
	}
}

// TestQuotaIsOneConventionWhole: a response with two rate-limit conventions
// is exported from the newer alone (never "500 left of 10"), and a reset in
// the year 9999, a date the API may send, is exported as that date, not
// as an overflowed negative timestamp.
func TestQuotaIsOneConventionWhole(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		api.set("/v1/global-stability", overviewBody(40, time.Now()),
			"X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "3", "X-RateLimit-Reset", "253402300799",
			"RateLimit-Remaining", "500")
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Overview}, 0)
		s := e.scrape(t)
		if v := value(t, s, "global_stability_api_rate_limit_remaining", "endpoint", "global-stability"); v != 500 {
			t.Errorf("remaining %v, want the drafts' 500", v)
		}
		for _, name := range []string{"global_stability_api_rate_limit_limit", "global_stability_api_rate_limit_reset_timestamp_seconds"} {
			if v, ok := s.Get(name, "endpoint", "global-stability"); ok {
				t.Errorf("%s %v taken from the older X-RateLimit-* beside the drafts' fields", name, v)
			}
		}
		api.set("/v1/global-stability", overviewBody(41, time.Now()), "X-RateLimit-Limit", "10", "X-RateLimit-Reset", "253402300799")
		time.Sleep(time.Second)
		s = e.scrape(t)
		if v := value(t, s, "global_stability_api_rate_limit_reset_timestamp_seconds", "endpoint", "global-stability"); v != 253402300799 {
			t.Errorf("reset %v, want 253402300799 (9999-12-31T23:59:59Z)", v)
		}
	})
}

// TestAWalkIsFreshOnlyWhileEveryPageIs: a stored walk whose first page is
// still fresh but whose later page is stale is asked for again, not
// reused without a request; what is exported then is the API's new list.
func TestAWalkIsFreshOnlyWhileEveryPageIs(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		event := func(id string, escalation float64) string {
			return fmt.Sprintf(`{"id": %q, "lat": 1, "lon": 1, "category": "protest", "escalation": %v, "occurred_at": "2000-01-01T00:00:00Z"}`, id, escalation)
		}
		api.set("/v1/conflict", `{"events": [`+event("a", 0.1)+`], "next_cursor": "p2"}`, "Cache-Control", "max-age=600")
		api.set("/v1/conflict?cursor=p2", `{"events": [`+event("b", 0.2)+`], "next_cursor": null}`, "Cache-Control", "max-age=10")
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Conflict}, 0)
		e.scrape(t)
		api.take()

		time.Sleep(5 * time.Second) // both pages fresh: no request
		e.scrape(t)
		if got := api.take(); len(got) != 0 {
			t.Fatalf("sent %q while every page was fresh, want nothing", got)
		}

		time.Sleep(10 * time.Second) // page 1 fresh, page 2 stale
		api.set("/v1/conflict?cursor=p2", `{"events": [`+event("b", 0.2)+`, `+event("c", 0.9)+`], "next_cursor": null}`, "Cache-Control", "max-age=10")
		s := e.scrape(t)
		if got := api.take(); len(got) == 0 {
			t.Fatal("a walk with a stale page was reused without asking the API")
		}
		if v := value(t, s, "global_stability_conflict_events"); v != 3 {
			t.Errorf("events %v, want the API's new list of 3", v)
		}
		if v := value(t, s, "global_stability_api_responses_reused_total", "endpoint", "conflict", "reason", "fresh"); v != 1 {
			t.Errorf("reused fresh %v, want 1 (the scrape while both pages were fresh)", v)
		}
	})
}

// TestNoStoreOnALaterPageForgetsTheWalk: no-store on the second page keeps
// the whole walk out of the store, though the first page allowed storing:
// the next scrape asks for every page again, without validators, and
// nothing is exported as reused.
func TestNoStoreOnALaterPageForgetsTheWalk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newCachingAPI()
		event := func(id string) string {
			return fmt.Sprintf(`{"id": %q, "lat": 1, "lon": 1, "category": "protest", "escalation": 0.5, "occurred_at": "2000-01-01T00:00:00Z"}`, id)
		}
		api.set("/v1/conflict", `{"events": [`+event("a")+`], "next_cursor": "p2"}`, "Cache-Control", "max-age=600")
		api.set("/v1/conflict?cursor=p2", `{"events": [`+event("b")+`], "next_cursor": null}`, "Cache-Control", "no-store")
		e := newCachingEnv(t, api, endpoint.NewStore(true), []*endpoint.Endpoint{endpoint.Conflict}, 0)
		for range 3 {
			e.scrape(t)
			time.Sleep(5 * time.Second)
		}
		got := api.take()
		want := []string{"/v1/conflict", "/v1/conflict?cursor=p2", "/v1/conflict", "/v1/conflict?cursor=p2", "/v1/conflict", "/v1/conflict?cursor=p2"}
		if strings.Join(got, " | ") != strings.Join(want, " | ") {
			t.Errorf("sent %q, want every page asked for on every scrape without validators %q", got, want)
		}
		s := e.scrape(t)
		for _, reason := range endpoint.Reasons {
			if v := value(t, s, "global_stability_api_responses_reused_total", "endpoint", "conflict", "reason", string(reason)); v != 0 {
				t.Errorf("reused %s %v, want 0: a page said no-store", reason, v)
			}
		}
	})
}
