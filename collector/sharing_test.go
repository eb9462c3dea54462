package collector_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/simulator"
)

func overviewOnly(c *collector.Config) {
	c.Pillars, c.Conflict, c.Briefings, c.Summary = false, false, false, false
}

// TestALaterDeadlineExtendsASharedCollection: a scrape with 10s to spare
// joins a collection started by one with 0.5s, against an API that takes
// 1.5s. The first fails on its own deadline; the second must not inherit it.
func TestALaterDeadlineExtendsASharedCollection(t *testing.T) {
	e := newEnv(t, simulator.Config{Latency: 1500 * time.Millisecond}, nil, overviewOnly)
	var short, long string
	var wg sync.WaitGroup
	wg.Go(func() { _, short = e.scrape(t, "1") }) // 0.5s after the offset
	time.Sleep(100 * time.Millisecond)
	wg.Go(func() { _, long = e.scrape(t, "10") })
	wg.Wait()
	if series(t, short)["global_stability_up"] != 0 {
		t.Errorf("the 0.5s scrape should have given up on a 1.5s API")
	}
	if series(t, long)["global_stability_up"] != 1 {
		t.Errorf("the 10s scrape got the 0.5s scrape's deadline:\n%s", long)
	}
	if n := e.sim.TotalRequests(); n != 1 {
		t.Errorf("%d upstream requests, want the one shared collection's 1", n)
	}
}

// TestUnusableTimeoutHeadersHarmNobody: a client looping with a 1ms, NaN
// or negative scrape timeout runs alongside real scrapes, which must all
// succeed.
func TestUnusableTimeoutHeadersHarmNobody(t *testing.T) {
	e := newEnv(t, simulator.Config{Latency: 200 * time.Millisecond}, nil, overviewOnly)
	stop := make(chan struct{})
	var loops sync.WaitGroup
	for _, header := range []string{"0.001", "NaN", "-1", "+Inf", "0"} {
		loops.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
					e.scrape(t, header)
				}
			}
		})
	}
	for i := range 5 {
		if _, body := e.scrape(t, "5"); series(t, body)["global_stability_up"] != 1 {
			t.Errorf("real scrape %d failed beside the noisy ones:\n%s", i, e.logs)
		}
	}
	close(stop)
	loops.Wait()
}

// TestSequentialScrapesNeverShareAFinishedCollection: without a cache TTL,
// a scrape that starts after another has all its results must send its
// own requests, however soon it comes. (Joining in the moment between the
// last result and the collection's done channel closing once made a scrape
// reuse a finished, possibly failed, collection.)
func TestSequentialScrapesNeverShareAFinishedCollection(t *testing.T) {
	var requests atomic.Int64
	api := fakeAPI(map[string]string{"global-stability": `{"score":50,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`})
	counting := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		api.ServeHTTP(w, r)
	})
	e := newEnv(t, simulator.Config{}, counting, overviewOnly)
	const scrapes = 300
	for range scrapes {
		e.scrape(t, "")
	}
	if n := requests.Load(); n != scrapes {
		t.Errorf("%d sequential scrapes sent %d requests: %d reused a finished collection", scrapes, n, scrapes-n)
	}
}

// TestLastScrapeLeavingCancelsRequests: when the only scrape waiting for a
// collection goes away (Prometheus hung up), the requests in flight are
// canceled rather than left to run until the deadline.
func TestLastScrapeLeavingCancelsRequests(t *testing.T) {
	ended, testDone := make(chan struct{}), make(chan struct{})
	var once sync.Once
	hang := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done(): // the exporter canceled the request
			once.Do(func() { close(ended) })
		case <-testDone:
		}
	})
	e := newEnv(t, simulator.Config{}, hang, overviewOnly)
	t.Cleanup(func() { close(testDone) }) // runs before the upstream's Close, which waits for handlers
	ctx, cancel := context.WithCancel(context.Background())
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil).WithContext(ctx)
	r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "120")
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.handler.ServeHTTP(httptest.NewRecorder(), r)
	}()
	time.Sleep(200 * time.Millisecond)
	cancel()
	<-done
	select {
	case <-ended:
	case <-time.After(10 * time.Second): // the deadline is two minutes away
		t.Fatal("the upstream request was still running 10s after its only scrape left")
	}
}

// TestExpiredCollectionIsNotCached: a collection whose deadline passed
// holds failures caused by that deadline, not by the API; even with a
// cache TTL, the next scrape must start its own.
func TestExpiredCollectionIsNotCached(t *testing.T) {
	e := newEnv(t, simulator.Config{Latency: 600 * time.Millisecond}, nil, overviewOnly, func(c *collector.Config) { c.CacheTTL = time.Hour })
	if _, body := e.scrape(t, "0.7"); series(t, body)["global_stability_up"] != 0 {
		t.Fatal("a 0.2s scrape of a 0.6s API should fail")
	}
	if _, body := e.scrape(t, "5"); series(t, body)["global_stability_up"] != 1 {
		t.Errorf("the next scrape was served the expired collection:\n%s", body)
	}
}
