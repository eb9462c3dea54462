package collector

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

const namespace = "global_stability"

func newDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
}

// The exporter's own series, about its scrapes; those of the API's data are
// declared with the endpoints (package endpoint). Names and labels are a
// contract with users' alerts and dashboards (see docs/metrics.md).
var (
	upDesc = newDesc("up",
		"1 when every request of this scrape to the Global Stability API succeeded, else 0.")
	scrapeSuccessDesc = newDesc("scrape_success",
		"1 when all requests to this endpoint (all pages) succeeded in this scrape, else 0.", "endpoint")
	scrapeDurationDesc = newDesc("scrape_duration_seconds",
		"Wall time of this endpoint's requests (all pages) in this scrape.", "endpoint")
	backoffDesc = newDesc("api_backoff_seconds",
		"Time left before the exporter calls this endpoint again, after the API answered 429 or 503 with Retry-After; 0 when not backing off.", "endpoint")
	labelValuesDroppedDesc = newDesc("label_values_dropped",
		"Series left out of this scrape because the metric reached --collector.max-label-values distinct label values: the busiest categories and cells are kept, and the first indicators of each pillar in the API's order; or because the API repeated an indicator key.", "metric")
	invalidValuesDesc = newDesc("invalid_values",
		"Values of this endpoint's response left out of this scrape because they were missing, null, of the wrong type or implausible, by the spec's field (for lists: items left out). 0 when all were valid; absent when the endpoint failed.", "endpoint", "field")
)

// dataDescs are the descriptors of the series the API's data becomes, one
// per metric of the endpoint descriptions, made once.
var dataDescs = sync.OnceValue(func() map[*endpoint.Metric]*prometheus.Desc {
	descs := map[*endpoint.Metric]*prometheus.Desc{}
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			descs[m] = prometheus.NewDesc(m.Name, m.Help, m.Labels, nil)
		}
	}
	return descs
})

// cappedMetrics are the metrics whose label values come from upstream
// data, for the dropped-series gauge, in a stable order.
var cappedMetrics = sync.OnceValue(func() []*endpoint.Metric {
	var out []*endpoint.Metric
	seen := map[*endpoint.Metric]bool{}
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			if m.Capped && !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	return out
})
