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
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/testutil/pipenet"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// These tests run in a testing/synctest bubble: time is fake, and moves
// only when every goroutine of the test waits for it. HTTP runs over
// in-memory connections (internal/pipenet), with a real server and the
// exporter's real client, so a TTL of an hour takes no wall time and a
// deadline is met or missed exactly, on any machine.

// bubbleEnv is an exporter in a bubble, against upstream.
type bubbleEnv struct {
	handler http.Handler
	logs    *syncBuffer
}

func newBubbleEnv(t *testing.T, upstream http.Handler, mods ...func(*collector.Config)) *bubbleEnv {
	t.Helper()
	net := pipenet.Serve(upstream)
	t.Cleanup(net.Close)
	cl, err := client.New(client.Config{BaseURL: "http://api.test", APIKey: client.StaticKey(testKey), HTTPClient: net.Client()})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := level.NewFilter(log.NewLogfmtLogger(logs), level.AllowInfo())
	cfg := collector.Config{Client: cl, Logger: logger}
	allOn(&cfg)
	for _, m := range mods {
		m(&cfg)
	}
	return &bubbleEnv{logs: logs, handler: handler.New(handler.Options{
		Collections:    collector.NewCollections(cfg),
		Gatherer:       prometheus.NewRegistry(),
		Logger:         logger,
		DefaultTimeout: 10 * time.Second,
		TimeoutOffset:  500 * time.Millisecond,
	})}
}

// scrape scrapes with the given X-Prometheus-Scrape-Timeout-Seconds ("" for
// none) and returns the parsed exposition.
func (e *bubbleEnv) scrape(t *testing.T, ctx context.Context, timeout string) promtext.Samples {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil).WithContext(ctx)
	if timeout != "" {
		r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
	}
	w := httptest.NewRecorder()
	e.handler.ServeHTTP(w, r)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d\n%s", w.Code, w.Body)
	}
	return parseSamples(t, w.Body.String())
}

func value(t *testing.T, s promtext.Samples, name string, pairs ...string) float64 {
	t.Helper()
	v, ok := s.Get(name, pairs...)
	if !ok {
		t.Fatalf("%s%v is absent", name, pairs)
	}
	return v
}

// TestCacheTTLExpires: with --api.cache-ttl=1m, a finished collection
// serves scrapes for a minute after it finished, and not a moment longer.
func TestCacheTTLExpires(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey, Latency: 2 * time.Second})
		e := newBubbleEnv(t, sim, func(c *collector.Config) { c.CacheTTL = time.Minute })
		ctx := context.Background()
		e.scrape(t, ctx, "")
		one := sim.TotalRequests() // one collection's worth
		finished := time.Now()
		for _, at := range []time.Duration{time.Second, 30 * time.Second, time.Minute - time.Nanosecond} {
			time.Sleep(time.Until(finished.Add(at)))
			if s := e.scrape(t, ctx, ""); value(t, s, "global_stability_up") != 1 || sim.TotalRequests() != one {
				t.Fatalf("%v after the collection finished: %d requests in all, want the cached collection's %d", at, sim.TotalRequests(), one)
			}
		}
		time.Sleep(time.Until(finished.Add(time.Minute)))
		e.scrape(t, ctx, "")
		if got := sim.TotalRequests(); got != 2*one {
			t.Errorf("a minute after the collection finished: %d requests in all, want a new collection (%d)", got, 2*one)
		}
	})
}

// TestNoCacheWithoutTTL: without a TTL, a finished collection serves no
// later scrape, however soon it comes.
func TestNoCacheWithoutTTL(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey})
		e := newBubbleEnv(t, sim)
		e.scrape(t, context.Background(), "")
		one := sim.TotalRequests()
		e.scrape(t, context.Background(), "")
		if got := sim.TotalRequests(); got != 2*one {
			t.Errorf("two scrapes at the same instant, one after the other: %d requests, want %d", got, 2*one)
		}
	})
}

// TestBackoffFollowsRetryAfter: after a 503 with Retry-After (seconds, or
// an HTTP date), the endpoint is not called until that time has passed;
// meanwhile it fails without a request and the back-off gauge says, in
// seconds, how long is left.
func TestBackoffFollowsRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		form   string
		status int
	}{{"seconds", 503}, {"HTTP date", 503}, {"seconds", 429}, {"HTTP date", 429}} {
		form := tc.form
		t.Run(fmt.Sprintf("%d %s", tc.status, form), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sim := simulator.New(simulator.Config{Key: testKey})
				var mu sync.Mutex
				unavailable := true
				upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					mu.Lock()
					down := unavailable
					mu.Unlock()
					if down && r.URL.Path == "/v1/global-stability" {
						retry := "120"
						if form == "HTTP date" {
							retry = time.Now().Add(120 * time.Second).UTC().Format(http.TimeFormat)
						}
						w.Header().Set("Retry-After", retry)
						http.Error(w, "come back later", tc.status)
						return
					}
					sim.ServeHTTP(w, r)
				})
				e := newBubbleEnv(t, upstream, overviewOnly)
				ctx := context.Background()
				start := time.Now()
				overviewRequests := func() int { return sim.Requests("global-stability") }

				s := e.scrape(t, ctx, "")
				if value(t, s, "global_stability_scrape_success", "endpoint", "global-stability") != 0 {
					t.Fatal("the 503 did not fail the endpoint")
				}
				if got := value(t, s, "global_stability_api_backoff_seconds", "endpoint", "global-stability"); got != 120 {
					t.Errorf("back-off right after the 503 = %v, want 120 (seconds)", got)
				}
				mu.Lock()
				unavailable = false // the API is back, but asked for two minutes
				mu.Unlock()

				time.Sleep(time.Until(start.Add(45 * time.Second)))
				s = e.scrape(t, ctx, "")
				if got := value(t, s, "global_stability_api_backoff_seconds", "endpoint", "global-stability"); got != 75 {
					t.Errorf("back-off 45s later = %v, want 75 (seconds)", got)
				}
				if value(t, s, "global_stability_scrape_success", "endpoint", "global-stability") != 0 || overviewRequests() != 0 {
					t.Errorf("during the back-off: success %v, %d requests reached the API; want 0 and 0",
						value(t, s, "global_stability_scrape_success", "endpoint", "global-stability"), overviewRequests())
				}
				if !strings.Contains(e.logs.String(), "Retry-After") {
					t.Errorf("the log should say why no request was sent: %s", e.logs)
				}

				time.Sleep(time.Until(start.Add(120 * time.Second)))
				s = e.scrape(t, ctx, "")
				if value(t, s, "global_stability_scrape_success", "endpoint", "global-stability") != 1 || overviewRequests() != 1 {
					t.Errorf("when Retry-After has passed: success %v after %d requests; want the endpoint called again and whole",
						value(t, s, "global_stability_scrape_success", "endpoint", "global-stability"), overviewRequests())
				}
				if got := value(t, s, "global_stability_api_backoff_seconds", "endpoint", "global-stability"); got != 0 {
					t.Errorf("back-off after it ended = %v, want 0", got)
				}
			})
		})
	}
}

// TestALaterScrapeExtendsTheCollection: a scrape with 1s to spare starts a
// collection from an API that takes 3s; a scrape with 9.5s joins it a
// moment later, at its deadline, or just after it. The first fails at its
// own deadline, exactly; the second must get the whole answer, whether it
// joined in time to extend the collection or found it expired and started
// another.
func TestALaterScrapeExtendsTheCollection(t *testing.T) {
	for _, joinAt := range []time.Duration{500 * time.Millisecond, time.Second, time.Second + time.Nanosecond} {
		t.Run(joinAt.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				sim := simulator.New(simulator.Config{Key: testKey, Latency: 3 * time.Second})
				e := newBubbleEnv(t, sim, overviewOnly)
				ctx := context.Background()
				start := time.Now()
				var short, long promtext.Samples
				var shortEnded, longEnded time.Duration
				var wg sync.WaitGroup
				wg.Go(func() {
					short = e.scrape(t, ctx, "1.5") // 1s after the 0.5s offset
					shortEnded = time.Since(start)
				})
				wg.Go(func() {
					time.Sleep(joinAt)
					long = e.scrape(t, ctx, "10")
					longEnded = time.Since(start)
				})
				wg.Wait()
				if value(t, short, "global_stability_up") != 0 || shortEnded != time.Second {
					t.Errorf("the 1s scrape: up %v after %v; want 0 after exactly 1s", value(t, short, "global_stability_up"), shortEnded)
				}
				if value(t, long, "global_stability_up") != 1 {
					t.Errorf("the 9.5s scrape, joining at %v, got up 0: it inherited the 1s deadline", joinAt)
				}
				if joinAt < time.Second && (sim.TotalRequests() != 1 || longEnded != 3*time.Second) {
					t.Errorf("joining in time: %d requests, answered after %v; want the shared collection's 1 request, answered at 3s", sim.TotalRequests(), longEnded)
				}
			})
		})
	}
}

// TestLeavingScrapeCancelsAtOnce: when the only scrape waiting for a
// collection goes away (Prometheus hung up), its requests are canceled
// that very moment, not at the collection's deadline.
func TestLeavingScrapeCancelsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var canceledAt time.Time
		hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
			mu.Lock()
			canceledAt = time.Now()
			mu.Unlock()
		})
		e := newBubbleEnv(t, hang, overviewOnly)
		ctx, hangUp := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			r := httptest.NewRequest(http.MethodGet, "/metrics", nil).WithContext(ctx)
			r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "120")
			e.handler.ServeHTTP(httptest.NewRecorder(), r)
		}()
		time.Sleep(3 * time.Second)
		disconnected := time.Now()
		hangUp()
		<-done
		synctest.Wait() // the upstream handler notices the cancel
		mu.Lock()
		defer mu.Unlock()
		if canceledAt.IsZero() {
			t.Fatal("the upstream request was never canceled")
		}
		if lag := canceledAt.Sub(disconnected); lag != 0 {
			t.Errorf("the upstream request ended %v after the scrape left, want at once", lag)
		}
	})
}

// TestFailuresAreLoggedAgainEveryFiveMinutes: the same failures make one
// line, then one more every five minutes with the count of scrapes left
// out, then one line when every endpoint answers again.
func TestFailuresAreLoggedAgainEveryFiveMinutes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey})
		sim.SetFault("global-stability", simulator.Fault{Kind: simulator.FaultStatus, Status: 500})
		e := newBubbleEnv(t, sim, overviewOnly)
		// A scrape every 15s for 10 minutes: 41 scrapes, the same failure.
		for i := range 41 {
			if i > 0 {
				time.Sleep(15 * time.Second)
			}
			e.scrape(t, context.Background(), "")
		}
		logs := splitLines(e.logs.String())
		if len(logs) != 3 || containsAll(logs[0], "same_failures_not_logged") ||
			!containsAll(logs[1], "same_failures_not_logged=19", "failed_endpoints=global-stability") ||
			!containsAll(logs[2], "same_failures_not_logged=19") {
			t.Fatalf("10 minutes of one failure, want a line at 0, 5 and 10 minutes, the last two counting the 19 scrapes each left out:\n%s", e.logs)
		}
		sim.ClearFaults()
		e.scrape(t, context.Background(), "")
		e.scrape(t, context.Background(), "")
		logs = splitLines(e.logs.String())
		if len(logs) != 4 || !containsAll(logs[3], "every endpoint answers again") {
			t.Errorf("after recovery, want one line saying so:\n%s", e.logs)
		}
		// The count starts again from zero: a new outage is logged at once.
		sim.SetFault("global-stability", simulator.Fault{Kind: simulator.FaultStatus, Status: 500})
		e.scrape(t, context.Background(), "")
		logs = splitLines(e.logs.String())
		if len(logs) != 5 || containsAll(logs[4], "same_failures_not_logged") {
			t.Errorf("a new outage after recovery, want a fresh line without a count:\n%s", e.logs)
		}
	})
}

func splitLines(s string) []string {
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(s), "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestExpiredCollectionIsNotCached: a collection whose deadline passed
// holds failures caused by that deadline, not by the API; even with a
// cache TTL, the next scrape starts its own.
func TestExpiredCollectionIsNotCached(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey, Latency: 600 * time.Millisecond})
		e := newBubbleEnv(t, sim, overviewOnly, func(c *collector.Config) { c.CacheTTL = time.Hour })
		if s := e.scrape(t, context.Background(), "0.7"); value(t, s, "global_stability_up") != 0 {
			t.Fatal("a 0.2s scrape of a 0.6s API should fail")
		}
		if s := e.scrape(t, context.Background(), "5"); value(t, s, "global_stability_up") != 1 {
			t.Errorf("the next scrape was served the expired collection")
		}
	})
}

// TestScrapeTimeoutHeaderIsHonoured: the header's value minus the offset
// bounds the scrape exactly; the endpoint that did not answer in time
// fails, says so in the log, and the others are there.
func TestScrapeTimeoutHeaderIsHonoured(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey})
		sim.SetFault("conflict", simulator.Fault{Kind: simulator.FaultHang})
		e := newBubbleEnv(t, sim) // DefaultTimeout 10s: only the header makes it 1s
		start := time.Now()
		s := e.scrape(t, context.Background(), "1.5")
		if elapsed := time.Since(start); elapsed != time.Second {
			t.Errorf("a scrape with a 1.5s timeout and a 0.5s offset took %v, want 1s", elapsed)
		}
		if value(t, s, "global_stability_scrape_success", "endpoint", "conflict") != 0 || value(t, s, "global_stability_score") == 0 {
			t.Error("want conflict failed and the score present")
		}
		if d := value(t, s, "global_stability_scrape_duration_seconds", "endpoint", "conflict"); d != 1 {
			t.Errorf("conflict duration %v, want the 1s budget", d)
		}
		if !strings.Contains(e.logs.String(), "deadline") {
			t.Errorf("log should say the deadline passed: %s", e.logs)
		}
	})
}

// TestConcurrentScrapesShareOneCollection: scrapes that arrive while a
// collection is in flight join it; the API sees one collection's worth
// of requests, and each scrape gets the whole answer.
func TestConcurrentScrapesShareOneCollection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey, Events: 30, PageSize: 10, Latency: 400 * time.Millisecond})
		e := newBubbleEnv(t, sim)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				time.Sleep(time.Duration(i) * 50 * time.Millisecond) // all before the first page's 400ms
				if s := e.scrape(t, context.Background(), "5"); value(t, s, "global_stability_up") != 1 {
					t.Errorf("scrape %d: up is not 1", i)
				}
			})
		}
		wg.Wait()
		// One collection: overview, four drilldowns, three conflict pages, one briefings page, summary.
		if got, want := sim.TotalRequests(), oneCollection(3); got != want {
			t.Errorf("20 scrapes over 1s sent %d upstream requests, want one collection's %d", got, want)
		}
	})
}

// TestBackoffGaugeIsPerScrape: a scrape served from a cached collection
// still shows the back-off left at its own moment, not at the moment the
// collection was rendered.
func TestBackoffGaugeIsPerScrape(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Retry-After", "120")
			http.Error(w, "maintenance", http.StatusServiceUnavailable)
		})
		e := newBubbleEnv(t, upstream, overviewOnly, func(c *collector.Config) { c.CacheTTL = time.Hour })
		if got := value(t, e.scrape(t, context.Background(), ""), "global_stability_api_backoff_seconds", "endpoint", "global-stability"); got != 120 {
			t.Fatalf("back-off = %v, want 120", got)
		}
		time.Sleep(30 * time.Second)
		if got := value(t, e.scrape(t, context.Background(), ""), "global_stability_api_backoff_seconds", "endpoint", "global-stability"); got != 90 {
			t.Errorf("30s later, from the cached collection: back-off = %v, want 90", got)
		}
	})
}

// TestDurationsAreEachEndpoints: each endpoint's scrape_duration_seconds
// is its own requests' time, not when the scrape got round to it, nor the
// slowest endpoint's; and a collection served again from the cache keeps
// them as they were.
func TestDurationsAreEachEndpoints(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey})
		upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/v1/global-stability":
				time.Sleep(3 * time.Second)
			case "/v1/summaries":
				time.Sleep(time.Second)
			}
			sim.ServeHTTP(w, r)
		})
		e := newBubbleEnv(t, upstream, func(c *collector.Config) {
			c.Endpoints = []*endpoint.Endpoint{endpoint.Overview, endpoint.Summary}
			c.CacheTTL = time.Hour
		})
		for range 2 { // the second from the cache, a minute later
			s := e.scrape(t, context.Background(), "")
			if o, sum := value(t, s, "global_stability_scrape_duration_seconds", "endpoint", "global-stability"), value(t, s, "global_stability_scrape_duration_seconds", "endpoint", "summaries"); o != 3 || sum != 1 {
				t.Errorf("durations: overview %vs, summaries %vs; want 3 and 1", o, sum)
			}
			time.Sleep(time.Minute)
		}
	})
}
