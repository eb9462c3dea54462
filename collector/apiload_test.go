// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"encoding/json"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// apiLoad is what one simulated stretch cost the API.
type apiLoad struct {
	Requests float64 `json:"requests"`
	Bytes    float64 `json:"bytes"`
	Scrapes  int     `json:"scrapes"`
}

// runAPILoad plays an HA pair of Prometheus servers scraping one exporter
// every 15 s, 7.5 s out of phase, for d of fake time, against a simulator
// with 1,000 events, and returns what that cost the API. With check, every
// scrape's as_of values are held to what the API allowed at that moment:
// the overview's and drilldowns' no older than the API's answer of maxAge
// ago (their as_of is the minute), the summary's no older than that either
// unless its refresh interval has not passed since its own as_of.
func runAPILoad(t *testing.T, simCfg simulator.Config, store *endpoint.Store, d, maxAge time.Duration) apiLoad {
	t.Helper()
	var load apiLoad
	synctest.Test(t, func(t *testing.T) {
		// 1,000 events in 10 pages: --api.max-pages's default.
		simCfg.Key, simCfg.Events, simCfg.PageSize = testKey, 1000, 100
		sim := simulator.New(simCfg)
		e := newCachingEnv(t, sim, store, endpoint.All(), 15*time.Minute)
		start := time.Now()
		var s promtext.Samples
		for time.Since(start) < d {
			s = e.scrape(t)
			load.Scrapes++
			now := time.Now()
			allowedMinute := now.Add(-maxAge).Truncate(time.Minute)
			for _, ep := range []string{"global-stability", "global-stability/pillar/conflict", "global-stability/pillar/macro", "summaries"} {
				asOf, ok := s.Get("global_stability_as_of_timestamp_seconds", "endpoint", ep)
				if !ok {
					t.Fatalf("scrape at %s: no as_of for %s", now.Sub(start), ep)
				}
				got := time.Unix(int64(asOf), 0)
				allowed := allowedMinute
				if ep == "summaries" {
					allowed = now.Add(-maxAge).Truncate(15 * time.Minute)
					if now.Before(got.Add(15 * time.Minute)) {
						allowed = got // inside its refresh interval
					}
				}
				if got.Before(allowed) {
					t.Fatalf("scrape at %s: %s exported as_of %s, older than the API allowed (%s)", now.Sub(start), ep, got.Format(time.TimeOnly), allowed.Format(time.TimeOnly))
				}
			}
			time.Sleep(7500 * time.Millisecond)
		}
		for _, ep := range endpoint.All() {
			if v, _ := s.Get("global_stability_scrape_success", "endpoint", ep.Label); v != 1 {
				t.Fatalf("%s failed in the last scrape: the load of a failing endpoint says nothing", ep.Label)
			}
			for _, code := range []string{"200", "304"} {
				v, _ := s.Get("global_stability_api_requests_total", "endpoint", ep.Label, "code", code)
				load.Requests += v
			}
			v, _ := s.Get("global_stability_api_received_bytes_total", "endpoint", ep.Label)
			load.Bytes += v
		}
	})
	return load
}

// TestAPILoad: an HA pair against an API that sends validators and
// max-age=30 costs it at least 3 times fewer requests and 5 times fewer
// bytes than without a store, and against an API that sends no caching
// headers no more requests than that.
// Ten minutes here; BENCH_APILOAD_OUT=<file> (the bench harness, group 8)
// plays an hour and writes the numbers.
func TestAPILoad(t *testing.T) {
	d := 10 * time.Minute
	out := os.Getenv("BENCH_APILOAD_OUT")
	if out != "" {
		d = time.Hour
	}
	caching := simulator.Config{Validators: true, CacheControl: "max-age=30"}
	before := runAPILoad(t, caching, nil, d, 0)
	after := runAPILoad(t, caching, endpoint.NewStore(true), d, 30*time.Second)
	plainBefore := runAPILoad(t, simulator.Config{}, nil, d, 0)
	plainAfter := runAPILoad(t, simulator.Config{}, endpoint.NewStore(true), d, 30*time.Second)
	t.Logf("%s, HA pair every 15 s: with caching headers %.0f → %.0f requests, %.0f → %.0f bytes; without %.0f → %.0f requests",
		d, before.Requests, after.Requests, before.Bytes, after.Bytes, plainBefore.Requests, plainAfter.Requests)
	if after.Requests*3 > before.Requests {
		t.Errorf("requests %.0f → %.0f: less than 3 times fewer", before.Requests, after.Requests)
	}
	if after.Bytes*5 > before.Bytes {
		t.Errorf("bytes %.0f → %.0f: less than 5 times fewer", before.Bytes, after.Bytes)
	}
	if plainAfter.Requests > plainBefore.Requests {
		t.Errorf("an API without caching headers: %.0f requests, more than the %.0f without a store", plainAfter.Requests, plainBefore.Requests)
	}
	if out != "" {
		b, _ := json.Marshal(map[string]any{"duration": d.String(), "before": before, "after": after, "plain_before": plainBefore, "plain_after": plainAfter})
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
