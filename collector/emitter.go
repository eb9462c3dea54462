package collector

import (
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
)

// emitter sends one scrape's metrics and enforces --collector.max-label-values:
// a capped metric carries at most maxValues distinct label sets per scrape,
// in the order they are offered; the rest are counted, not sent.
type emitter struct {
	ch        chan<- prometheus.Metric
	logger    log.Logger
	maxValues int
	seen      map[string]map[string]bool // metric name → label sets sent
	dropped   map[string]int             // metric name → series left out
}

func newEmitter(ch chan<- prometheus.Metric, logger log.Logger, maxValues int) *emitter {
	return &emitter{ch: ch, logger: logger, maxValues: maxValues, seen: map[string]map[string]bool{}, dropped: map[string]int{}}
}

// gauge sends a series whose labels are ours (endpoint, pillar) or none.
func (e *emitter) gauge(desc *prometheus.Desc, v float64, labels ...string) {
	m, err := prometheus.NewConstMetric(desc, prometheus.GaugeValue, v, labels...)
	if err != nil {
		// Only a label value that is not valid UTF-8 gets here; the JSON
		// decoder already replaces those, so this is a safety net.
		level.Warn(e.logger).Log("msg", "series left out", "err", err)
		return
	}
	e.ch <- m
}

// capped sends a series whose label values come from upstream data. A
// repeated label set (two indicators with one key, say) is dropped too:
// exporting both would make the scrape invalid.
func (e *emitter) capped(c cappedDesc, v float64, labels ...string) {
	key := strings.Join(labels, "\xff")
	seen := e.seen[c.name]
	if seen == nil {
		seen = map[string]bool{}
		e.seen[c.name] = seen
	}
	if seen[key] || len(seen) >= e.maxValues {
		e.dropped[c.name]++
		return
	}
	seen[key] = true
	e.gauge(c.desc, v, labels...)
}

// finish sends the dropped-values gauge of every capped metric and logs
// what was left out.
func (e *emitter) finish() {
	for _, c := range cappedDescs {
		n := e.dropped[c.name]
		if n > 0 {
			level.Warn(e.logger).Log("msg", "series left out: too many distinct label values, or repeated ones", "metric", c.name, "dropped", n, "limit", e.maxValues)
		}
		e.gauge(labelValuesDroppedDesc, float64(n), c.name)
	}
}

// unixSeconds keeps fractions of a second.
func unixSeconds(t time.Time) float64 { return float64(t.UnixNano()) / 1e9 }
