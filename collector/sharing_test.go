// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/simulator"
)

func overviewOnly(c *collector.Config) {
	c.Endpoints = []*endpoint.Endpoint{endpoint.Overview}
}

// TestUnusableTimeoutHeadersHarmNobody: a client looping with a 1ms, NaN
// or negative scrape timeout runs alongside real scrapes, which must all
// succeed.
func TestUnusableTimeoutHeadersHarmNobody(t *testing.T) {
	inBubble(t, func(t *testing.T) {
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
	})
}

// TestSequentialScrapesNeverShareAFinishedCollection: without a cache TTL,
// a scrape that starts after another has all its results must send its
// own requests, however soon it comes. (Joining in the moment between the
// last result and the collection's done channel closing once made a scrape
// reuse a finished, possibly failed, collection.)
func TestSequentialScrapesNeverShareAFinishedCollection(t *testing.T) {
	inBubble(t, func(t *testing.T) {
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
	})
}
