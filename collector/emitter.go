package collector

import (
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
)

// emitter sends one scrape's metrics.
type emitter struct {
	ch      chan<- prometheus.Metric
	logger  log.Logger
	dropped map[string]int // capped metric name → series left out
}

func newEmitter(ch chan<- prometheus.Metric, logger log.Logger) *emitter {
	return &emitter{ch: ch, logger: logger, dropped: map[string]int{}}
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

// endpoint sends what one endpoint that answered contributes: its data
// series, its invalid values by field, and its share of the dropped series.
func (e *emitter) endpoint(ep *endpoint.Endpoint, r endpoint.Result) {
	for _, s := range r.Samples {
		e.gauge(dataDescs()[s.Metric], s.Value, s.Labels...)
	}
	for _, f := range ep.InvalidFields() {
		e.gauge(invalidValuesDesc, float64(r.Invalid.Counts[f]), ep.Label, f)
	}
	for name, n := range r.Dropped {
		e.dropped[name] += n
	}
}

// finish sends the dropped-series gauge of every capped metric.
func (e *emitter) finish() {
	for _, m := range cappedMetrics() {
		e.gauge(labelValuesDroppedDesc, float64(e.dropped[m.Name]), m.Name)
	}
}
