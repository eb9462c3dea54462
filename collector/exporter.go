package collector

import (
	"context"
	"fmt"
	"slices"
	"time"

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
	seen, complete := await(ctx, c)
	s.finishScrape(seen)
	var shared []*dto.MetricFamily
	var err error
	if complete {
		c.renderOnce.Do(func() { c.families, c.renderErr = s.renderWhole(seen) })
		shared, err = c.families, c.renderErr
	} else {
		shared, err = s.render(func(em *emitter) { em.results(seen) })
	}
	if err != nil {
		return nil, err
	}
	own, err := s.render(func(em *emitter) { s.emitBackoff(em, seen) })
	// Not sorted or merged: the handler's prometheus.Gatherers does that
	// and checks every metric, once for both.
	return append(slices.Clip(shared), own...), err
}

// await waits for every result of c until ctx ends, and returns what the
// scrape saw: each result, or a deadline error for one that did not
// arrive. complete says whether every result arrived in time, so that the
// scrape saw exactly what every other scrape that waits for all of c sees.
func await(ctx context.Context, c *collection) (seen []result, complete bool) {
	complete = true
	for _, r := range c.results {
		select {
		case <-r.done:
		case <-ctx.Done():
		}
		select {
		case <-r.done: // a result already in wins over an expired context
			seen = append(seen, *r)
		default:
			complete = false
			seen = append(seen, result{endpoint: r.endpoint, duration: time.Since(c.started),
				err: fmt.Errorf("no answer within the scrape deadline: %w", context.Cause(ctx))})
		}
	}
	return seen, complete
}

// renderWhole renders a collection that its scrapes saw whole. When every
// answer in it was reused from the store without a request (the stored
// values, a duration of 0), the last such rendering of the very same
// answers is handed over instead: with the store warm each scrape has a
// collection of its own, and 40 scrapes at once rendered 40 copies (182
// MiB over idle with every label cap full).
func (s *Collections) renderWhole(seen []result) ([]*dto.MetricFamily, error) {
	// The answers, each by its first sample (a stored answer's samples are
	// never copied); nil if one was not reused without a request.
	from := make([]*endpoint.Sample, len(seen))
	for i, r := range seen {
		if !r.free() || len(r.data.Samples) == 0 {
			from = nil
			break
		}
		from[i] = &r.data.Samples[0]
	}
	s.renderMu.Lock()
	defer s.renderMu.Unlock()
	if from != nil && slices.Equal(from, s.renderedFrom) {
		return s.rendered, nil
	}
	s.renderedFrom, s.rendered = nil, nil // held no longer than it can be shared
	fams, err := s.render(func(em *emitter) { em.results(seen) })
	if err == nil && from != nil {
		s.renderedFrom, s.rendered = from, fams
	}
	return fams, err
}

// render gathers what emit sends into metric families. They are never
// changed afterwards, so scrapes may share them: encoding only reads.
func (s *Collections) render(emit func(*emitter)) ([]*dto.MetricFamily, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(unchecked(func(ch chan<- prometheus.Metric) { emit(&emitter{ch: ch, logger: s.Logger}) }))
	return reg.Gather()
}

// unchecked describes nothing, so a registry takes it as unchecked: its
// metrics are checked as they are gathered, not against a description.
type unchecked func(chan<- prometheus.Metric)

func (unchecked) Describe(chan<- *prometheus.Desc)      {}
func (f unchecked) Collect(ch chan<- prometheus.Metric) { f(ch) }

// emitBackoff sends the back-off gauge of each endpoint: time left now, so
// it belongs to the scrape, not to the collection it shares.
func (s *Collections) emitBackoff(em *emitter, seen []result) {
	for _, r := range seen {
		em.gauge(backoffDesc, s.backoffRemaining(r.endpoint.Label).Seconds(), r.endpoint.Label)
	}
}

// finishScrape logs a scrape's failures (see failureLog) and keeps its
// outcome for LastScrape.
func (s *Collections) finishScrape(seen []result) {
	var fs []failure
	st := ScrapeStatus{At: time.Now(), Endpoints: len(seen)}
	for _, r := range seen {
		if r.err != nil {
			fs = append(fs, failure{r.endpoint.Label, r.err, r.endpoint.Paged})
			st.Failed = append(st.Failed, r.endpoint.Label)
		}
	}
	s.failures.report(fs)
	if len(fs) > 0 {
		st.Why = errorText(fs)
	}
	s.last.Store(&st)
}

// ScrapeStatus is what the last scrape saw, for the landing page.
type ScrapeStatus struct {
	At        time.Time
	Endpoints int      // endpoints collected
	Failed    []string // those that failed, by endpoint label
	Why       string   // what the log line said of them: one clause per cause, redacted of the key
}

// LastScrape returns the outcome of the latest scrape, or false before the
// first.
func (s *Collections) LastScrape() (ScrapeStatus, bool) {
	if st := s.last.Load(); st != nil {
		return *st, true
	}
	return ScrapeStatus{}, false
}
