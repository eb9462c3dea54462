// SPDX-License-Identifier: Apache-2.0

package collector

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
)

// The tests and benchmarks collect through a prometheus.Collector
// (testutil, a registry); the /metrics handler does not (it shares a
// collection's rendering between scrapes, see Collections.Gather).

// Exporter is the prometheus.Collector of one scrape, bound to ctx.
type Exporter struct {
	ctx     context.Context
	scraper *Collections
}

var _ prometheus.Collector = (*Exporter)(nil)

// NewExporter returns the collector for one scrape. ctx bounds how long
// Collect waits for the API; it should carry the scrape's deadline.
func (s *Collections) NewExporter(ctx context.Context) *Exporter {
	return &Exporter{ctx: ctx, scraper: s}
}

// Describe announces every metric the exporter can emit.
func (e *Exporter) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range allDescs() {
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
	seen, _ := await(e.ctx, c)
	s.results(ch, seen)
	s.emitBackoff(ch, seen)
	s.finishScrape(seen)
}

// allDescs is what Exporter.Describe announces.
func allDescs() []*prometheus.Desc {
	out := []*prometheus.Desc{upDesc, scrapeSuccessDesc, scrapeDurationDesc, backoffDesc, labelValuesDroppedDesc, invalidValuesDesc}
	for _, d := range dataDescs() {
		out = append(out, d)
	}
	return out
}
