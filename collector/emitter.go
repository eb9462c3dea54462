package collector

import (
	"time"

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
func (e *emitter) endpoint(endpoint string, fields []string, d *endpointData) {
	d.emit(e)
	for _, f := range fields {
		e.gauge(invalidValuesDesc, float64(d.invalid.Counts[f]), endpoint, f)
	}
	for name, n := range d.dropped {
		e.dropped[name] += n
	}
}

// finish sends the dropped-series gauge of every capped metric.
func (e *emitter) finish() {
	for _, c := range cappedDescs {
		e.gauge(labelValuesDroppedDesc, float64(e.dropped[c.name]), c.name)
	}
}

// unixSeconds keeps fractions of a second, for any year: UnixNano would
// overflow outside 1678-2262 and turn Go's zero time into a date in 1754.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
