package collector

import (
	"sync"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
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
// per metric of the endpoint descriptions, made once; and, in a stable
// order, the metrics whose label values come from upstream data, for the
// dropped-series gauge.
var dataDescs = sync.OnceValues(func() (descs map[*endpoint.Metric]*prometheus.Desc, capped []*endpoint.Metric) {
	descs = map[*endpoint.Metric]*prometheus.Desc{}
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			if _, seen := descs[m]; !seen {
				descs[m] = prometheus.NewDesc(m.Name, m.Help, m.Labels, nil)
				if m.Capped {
					capped = append(capped, m)
				}
			}
		}
	}
	return descs, capped
})

// emitter sends one scrape's metrics.
type emitter struct {
	ch     chan<- prometheus.Metric
	logger log.Logger
}

// gauge sends a series. Label values from upstream data are valid UTF-8 and
// at most client.Config.MaxNameBytes long: the client decodes them so.
func (e *emitter) gauge(desc *prometheus.Desc, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	if err != nil {
		level.Warn(e.logger).Log("msg", "series left out", "err", err) // a safety net; never seen
		return
	}
	e.ch <- m
}

// results sends everything a scrape exports from what it saw, the
// back-off gauge aside: the data, invalid values and dropped series of
// each endpoint that succeeded, each one's success and duration, and up.
func (e *emitter) results(seen []result) {
	descs, capped := dataDescs()
	up := 1.0
	dropped := map[string]int{} // capped metric name → series left out
	for _, r := range seen {
		success := 0.0
		if r.err == nil {
			success = 1
			for _, s := range r.data.Samples {
				e.gauge(descs[s.Metric], s.Value, s.Labels...)
			}
			for _, f := range r.endpoint.InvalidFields() {
				e.gauge(invalidValuesDesc, float64(r.data.Invalid.Counts[f]), r.endpoint.Label, f)
			}
			for name, n := range r.data.Dropped {
				dropped[name] += n
			}
		}
		up = min(up, success)
		e.gauge(scrapeSuccessDesc, success, r.endpoint.Label)
		e.gauge(scrapeDurationDesc, r.duration.Seconds(), r.endpoint.Label)
	}
	e.gauge(upDesc, up)
	for _, m := range capped {
		e.gauge(labelValuesDroppedDesc, float64(dropped[m.Name]), m.Name)
	}
}
