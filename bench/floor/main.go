// SPDX-License-Identifier: Apache-2.0

// Command floor is the bench harness's yardstick for CPU per scrape: what
// any client_golang exporter pays for the exporter's output. On each GET
// /metrics it fetches every endpoint of the exporter's descriptions
// concurrently, as the exporter does, reads and discards the bodies, and
// then, with -series N, serves N series through a prometheus.Registry and
// promhttp.HandlerFor with the exporter's options: the Go and process
// collectors, as the exporter registers them, and constant gauges named
// and labelled as the exporter's series are, to N in all. Without
// -series it answers one line. What the exporter spends beyond this is
// its own: reading, rules, folds, rendering its collection, sharing.
//
//	GLOBAL_STABILITY_API_KEY=k floor -api-url http://127.0.0.1:10111 -listen-address 127.0.0.1:10110 -series 2000
//
// It follows no next_cursor: run it against an API that serves all events
// in one page.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

func main() {
	apiURL := flag.String("api-url", "http://127.0.0.1:10111", "base URL of the API (the simulator)")
	listen := flag.String("listen-address", "127.0.0.1:10110", "address to answer scrapes on")
	series := flag.Int("series", 0, "series to serve through promhttp, the Go and process collectors' included; 0 answers one line")
	flag.Parse()
	key := os.Getenv("GLOBAL_STABILITY_API_KEY")
	if key == "" {
		log.Fatal("floor: set GLOBAL_STABILITY_API_KEY")
	}
	// The exporter's client keeps as many idle connections per host.
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.MaxIdleConnsPerHost = 16
	httpClient := &http.Client{Transport: transport}

	fetch := func(ctx context.Context, endpoint string) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, *apiURL+"/v1/"+endpoint, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Authorization", "Bearer "+key)
		resp, err := httpClient.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", endpoint, resp.Status)
		}
		return nil
	}

	// The endpoint labels are the paths after /v1/; only their names and
	// their metrics' names and labels come from the endpoint descriptions,
	// none of the exporter's request or decoding code.
	var endpoints []string
	for _, e := range endpoint.All() {
		endpoints = append(endpoints, e.Label)
	}
	serve := func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "# the floor of a scrape\nglobal_stability_up 1\n")
	}
	if *series > 0 {
		serve = registry(*series).ServeHTTP
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		errs := make([]error, len(endpoints))
		var wg sync.WaitGroup
		for i, endpoint := range endpoints {
			wg.Go(func() { errs[i] = fetch(r.Context(), endpoint) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		serve(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "floor\n") })
	srv := &http.Server{Addr: *listen, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}

// registry serves n series: the Go and process collectors' as the exporter
// registers them, global_stability_up, and constant gauges of the
// descriptions' metrics, each labelled as the exporter labels it, the
// capped ones taking what is left in turn (as the exporter's busiest
// cells, categories and indicators do).
func registry(n int) http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	fams, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	for _, f := range fams {
		n -= len(f.GetMetric())
	}
	var metrics, capped []*endpoint.Metric
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			if !containsMetric(metrics, m) {
				metrics = append(metrics, m)
				if m.Capped {
					capped = append(capped, m)
				}
			}
		}
	}
	metrics = append([]*endpoint.Metric{{Name: "global_stability_up", Help: "1 when every endpoint of this scrape succeeded."}}, metrics...)
	var consts []prometheus.Metric
	add := func(m *endpoint.Metric, i int) {
		values := make([]string, len(m.Labels))
		for j, l := range m.Labels {
			values[j] = labelValue(l, i)
		}
		consts = append(consts, prometheus.MustNewConstMetric(prometheus.NewDesc(m.Name, m.Help, m.Labels, nil), prometheus.GaugeValue, 1, values...))
	}
	for _, m := range metrics {
		add(m, 0)
	}
	for i := 1; len(consts) < n; i++ {
		add(capped[i%len(capped)], i)
	}
	reg.MustRegister(constCollector(consts[:max(min(n, len(consts)), 1)]))
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: log.Default()})
}

func containsMetric(ms []*endpoint.Metric, m *endpoint.Metric) bool {
	for _, x := range ms {
		if x.Name == m.Name {
			return true
		}
	}
	return false
}

// labelValue is a value of label as long as the exporter's: a cell's
// centre, an endpoint's path, a name.
func labelValue(label string, i int) string {
	switch label {
	case "lat":
		return strconv.FormatFloat(-87.5+5*float64(i/72), 'f', -1, 64) // past the pole: no two alike
	case "lon":
		return strconv.FormatFloat(-177.5+5*float64(i%72), 'f', -1, 64)
	case "endpoint":
		return endpoint.All()[i%len(endpoint.All())].Label
	case "pillar":
		return endpoint.Pillars[i%len(endpoint.Pillars)]
	}
	return label + "_" + strconv.Itoa(i)
}

// constCollector collects fixed metrics; it describes none, so that the
// registry checks them as it gathers, as the exporter's rendering is.
type constCollector []prometheus.Metric

func (constCollector) Describe(chan<- *prometheus.Desc) {}
func (c constCollector) Collect(ch chan<- prometheus.Metric) {
	for _, m := range c {
		ch <- m
	}
}
