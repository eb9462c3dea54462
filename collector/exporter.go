package collector

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Exporter is the prometheus.Collector of one scrape: register it on a
// fresh registry per request, bound to that request's deadline.
type Exporter struct {
	ctx     context.Context
	scraper *Scraper
}

var _ prometheus.Collector = (*Exporter)(nil)

// NewExporter returns the collector for one scrape. ctx bounds how long
// Collect waits for the API; it should carry the scrape's deadline.
func (s *Scraper) NewExporter(ctx context.Context) *Exporter {
	return &Exporter{ctx: ctx, scraper: s}
}

// Describe announces every metric the exporter can emit.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs {
		ch <- d
	}
}

// Collect waits for each endpoint of the shared collection until the
// scrape's deadline, then exports what arrived. An endpoint that failed or
// did not answer in time gets scrape_success 0 and none of its series; the
// scrape's failures make one log line (see failureLog).
func (e *Exporter) Collect(ch chan<- prometheus.Metric) {
	s := e.scraper
	c := s.join(e.ctx)
	defer s.leave(c)

	em := newEmitter(ch, s.logger)
	up := 1.0
	var failures []failure
	for _, r := range c.results {
		duration, err := e.wait(r, c.started)
		success := 1.0
		if err != nil {
			success, up = 0, 0
			failures = append(failures, failure{r.endpoint, err})
		} else {
			em.endpoint(r.endpoint, r.fields, r.data)
		}
		em.gauge(scrapeSuccessDesc, success, r.endpoint)
		em.gauge(scrapeDurationDesc, duration.Seconds(), r.endpoint)
		em.gauge(backoffDesc, s.backoffRemaining(r.endpoint).Seconds(), r.endpoint)
	}
	em.gauge(upDesc, up)
	em.finish()
	s.failures.report(failures)
}

// wait returns the endpoint's outcome, or a deadline error if the scrape's
// context ends first. A result already in wins over an expired context.
func (e *Exporter) wait(r *result, started time.Time) (time.Duration, error) {
	select {
	case <-r.done:
		return r.duration, r.err
	default:
	}
	select {
	case <-r.done:
		return r.duration, r.err
	case <-e.ctx.Done():
		return time.Since(started), fmt.Errorf("no answer within the scrape deadline: %w", context.Cause(e.ctx))
	}
}
