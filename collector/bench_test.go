// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"context"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// replay serves each response of the simulator as it was the first time,
// so that a benchmark measures the exporter, not the simulator building JSON.
type replay struct {
	sim *simulator.Simulator
	mu  sync.Mutex
	got map[string]*httptest.ResponseRecorder
}

func (rp *replay) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rp.mu.Lock()
	rec, ok := rp.got[r.URL.String()]
	if !ok {
		rec = httptest.NewRecorder()
		rp.sim.ServeHTTP(rec, r)
		rp.got[r.URL.String()] = rec
	}
	rp.mu.Unlock()
	maps.Copy(w.Header(), rec.Header())
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// benchScraper is an exporter on a replayed simulator with pages of 1,000
// events.
func benchScraper(b *testing.B, events int, cacheTTL time.Duration) *collector.Collections {
	b.Helper()
	sim := simulator.New(simulator.Config{Key: testKey, Events: events, PageSize: 1000, Now: func() time.Time { return fixedNow }})
	srv := httptest.NewServer(&replay{sim: sim, got: map[string]*httptest.ResponseRecorder{}})
	b.Cleanup(srv.Close)
	cl, err := client.New(client.Config{BaseURL: srv.URL, APIKey: client.StaticKey(testKey), MaxPages: 1000})
	if err != nil {
		b.Fatal(err)
	}
	s := collector.NewCollections(collector.Config{Client: cl, Logger: log.NewNopLogger(), Endpoints: endpoint.All(), CacheTTL: cacheTTL})
	return s
}

// BenchmarkCollection is one whole scrape: every endpoint fetched, decoded
// and exported, at growing numbers of events. Allocations per event should
// fall towards zero as events grow: pages are aggregated as they arrive.
func BenchmarkCollection(b *testing.B) {
	for _, events := range []int{10, 1000, 100000} {
		b.Run(fmt.Sprintf("events=%d", events), func(b *testing.B) {
			s := benchScraper(b, events, 0)
			collect(b, s) // record the upstream's answers
			b.ReportAllocs()
			for b.Loop() {
				collect(b, s)
			}
			b.ReportMetric(float64(events), "events/op")
		})
	}
}

func collect(b *testing.B, s *collector.Collections) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.NewExporter(context.Background()))
	mfs, err := reg.Gather()
	if err != nil || len(mfs) == 0 {
		b.Fatal(err)
	}
}

// BenchmarkRenderMetrics is the exporter's own work on /metrics once the
// data is in: a cached collection gathered and encoded as Prometheus asks
// for it (gzip-compressed text).
func BenchmarkRenderMetrics(b *testing.B) {
	s := benchScraper(b, 1000, time.Hour)
	h := handler.New(handler.Options{Collections: s, Gatherer: prometheus.NewRegistry(), Logger: log.NewNopLogger(), DefaultTimeout: 10 * time.Second})
	get := func() *httptest.ResponseRecorder {
		r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
		r.Header.Set("Accept-Encoding", "gzip")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	get() // fill the cache
	b.ReportAllocs()
	for b.Loop() {
		if w := get(); w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
