package collector

import (
	"cmp"
	"context"
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
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
		c.renderOnce.Do(func() { c.families, c.renderErr = render(s, func(em *emitter) { emitOutcomes(em, outcomes) }) })
		shared, err = c.families, c.renderErr
	} else {
		shared, err = render(s, func(em *emitter) { emitOutcomes(em, outcomes) })
	}
	if err != nil {
		return nil, err
	}
	own, err := render(s, func(em *emitter) { s.emitBackoff(em, outcomes) })
	return MergeFamilies(shared, own), err
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

// MergeFamilies merges lists of families sorted by name into one sorted
// list, without copying a family's metrics unless two lists hold the same
// name (then it joins them in a new family). prometheus.Gatherers does the
// same with a consistency check and a hash per metric, which is what a
// shared rendering saves: it was checked once, when it was gathered.
func MergeFamilies(lists ...[]*dto.MetricFamily) []*dto.MetricFamily {
	var out []*dto.MetricFamily
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.SortStableFunc(out, func(a, b *dto.MetricFamily) int { return cmp.Compare(a.GetName(), b.GetName()) })
	merged := out[:0]
	for _, mf := range out {
		if n := len(merged); n > 0 && merged[n-1].GetName() == mf.GetName() {
			last := merged[n-1]
			joined := &dto.MetricFamily{Name: last.Name, Help: last.Help, Type: last.Type, Unit: last.Unit}
			joined.Metric = append(slices.Clip(last.Metric), mf.Metric...)
			merged[n-1] = joined
			continue
		}
		merged = append(merged, mf)
	}
	return merged
}
