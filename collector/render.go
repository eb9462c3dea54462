package collector

import (
	"context"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Gather is what the /metrics handler exports for one scrape: the
// collection it shares, rendered once for every scrape that waited for
// all of it, and its own back-off gauges.
//
// Rendering is where concurrent scrapes cost memory: a collection with
// every label cap filled is ~7,000 series, and each scrape building its
// own metrics and families from it held a copy each (40 scrapes at once
// peaked near 300 MiB). Scrapes that saw every result of a collection saw
// the same thing, so they share one rendering; only a scrape whose
// deadline cut it short renders what it saw itself.
func (s *Collections) Gather(ctx context.Context) ([]*dto.MetricFamily, error) {
	c := s.join(ctx)
	defer s.leave(c)
	outcomes, complete := await(ctx, c)
	s.finishScrape(outcomes)
	var shared []*dto.MetricFamily
	var err error
	if complete {
		c.renderOnce.Do(func() { c.families, c.renderErr = s.renderWhole(outcomes) })
		shared, err = c.families, c.renderErr
	} else {
		shared, err = render(s, func(em *emitter) { emitOutcomes(em, outcomes) })
	}
	if err != nil {
		return nil, err
	}
	own, err := render(s, func(em *emitter) { s.emitBackoff(em, outcomes) })
	// Not sorted or merged: the handler's prometheus.Gatherers does that
	// and checks every metric, once for both.
	return append(slices.Clip(shared), own...), err
}

// renderWhole renders a collection that its scrapes saw whole. When every
// answer in it was reused from the store without a request (the stored
// values, a duration of 0), the last such rendering of the very same
// answers is handed over instead: with the store warm each scrape has a
// collection of its own, and 40 scrapes at once rendered 40 copies (182
// MiB over idle with every label cap full).
func (s *Collections) renderWhole(outcomes []outcome) ([]*dto.MetricFamily, error) {
	from := storedAnswers(outcomes)
	s.renderMu.Lock()
	defer s.renderMu.Unlock()
	if from != nil && slices.Equal(from, s.renderedFrom) {
		return s.rendered, nil
	}
	s.renderedFrom, s.rendered = nil, nil // held no longer than it can be shared
	fams, err := render(s, func(em *emitter) { emitOutcomes(em, outcomes) })
	if err == nil && from != nil {
		s.renderedFrom, s.rendered = from, fams
	}
	return fams, err
}

// storedAnswers names the answers of a collection that were all reused
// without a request, each by its first sample (a stored answer's samples
// are never copied); nil if one was not.
func storedAnswers(outcomes []outcome) []*endpoint.Sample {
	from := make([]*endpoint.Sample, len(outcomes))
	for i, o := range outcomes {
		if o.err != nil || (o.reuse != endpoint.ReuseFresh && o.reuse != endpoint.ReuseRefresh) || len(o.data.Samples) == 0 {
			return nil
		}
		from[i] = &o.data.Samples[0]
	}
	return from
}

// render gathers what emit sends into metric families. They are never
// changed afterwards, so scrapes may share them: encoding only reads.
func render(s *Collections, emit func(*emitter)) ([]*dto.MetricFamily, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(emitCollector{emit: emit, scraper: s}); err != nil {
		return nil, err
	}
	return reg.Gather()
}

// emitCollector runs emit on Collect. It describes nothing, so the
// registry takes it as unchecked: its metrics are checked as they are
// gathered, not against a description.
type emitCollector struct {
	emit    func(*emitter)
	scraper *Collections
}

func (emitCollector) Describe(chan<- *prometheus.Desc) {}

func (e emitCollector) Collect(ch chan<- prometheus.Metric) {
	e.emit(newEmitter(ch, e.scraper.logger))
}
