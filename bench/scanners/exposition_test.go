// SPDX-License-Identifier: Apache-2.0

package scanners

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	_ "github.com/prometheus/client_golang/prometheus/promhttp/zstd" // promhttp offers zstd

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// BenchmarkExposition is /metrics of a cached collection at each volume
// (events spread over the globe, so that the cells fill up to their cap),
// in each encoding promhttp offers: what a scrape costs to serve once the
// data is in, and its size (bytes/op). The Go and process collectors are
// on the long-lived registry, as in the exporter.
func BenchmarkExposition(b *testing.B) {
	sim := simulator.New(simulator.Config{Key: "exposition-bench-key"})
	for _, events := range []int{10, 1000, 10000, 100000} {
		conflict := page(events)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/"+endpoint.Conflict.Label {
				_, _ = w.Write(conflict)
				return
			}
			sim.ServeHTTP(w, r)
		}))
		cl, err := client.New(client.Config{BaseURL: srv.URL, APIKey: client.StaticKey("exposition-bench-key"), MaxResponseBytes: 64 << 20})
		if err != nil {
			b.Fatal(err)
		}
		longLived := prometheus.NewRegistry()
		longLived.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		h := handler.New(handler.Options{
			Collections: collector.NewCollections(collector.Config{Client: cl, Logger: log.NewNopLogger(), Endpoints: endpoint.All(), CacheTTL: time.Hour}),
			Gatherer:    longLived, Logger: log.NewNopLogger(), DefaultTimeout: time.Minute,
		})
		for _, encoding := range []string{"identity", "gzip", "zstd"} {
			b.Run(fmt.Sprintf("events=%d/%s", events, encoding), func(b *testing.B) {
				get := func() *httptest.ResponseRecorder {
					r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
					r.Header.Set("Accept-Encoding", encoding)
					w := httptest.NewRecorder()
					h.ServeHTTP(w, r)
					if w.Code != http.StatusOK || !strings.Contains(w.Header().Get("Content-Encoding")+"identity", encoding) {
						b.Fatalf("status %d, encoding %q", w.Code, w.Header().Get("Content-Encoding"))
					}
					return w
				}
				size := get().Body.Len() // and the collection is cached
				b.ReportAllocs()
				for b.Loop() {
					get()
				}
				b.ReportMetric(float64(size), "bytes/op")
			})
		}
		srv.Close()
	}
}
