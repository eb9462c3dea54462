// SPDX-License-Identifier: Apache-2.0

package collector

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

const namespace = "global_stability"

func newDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
}

// The exporter's own series about its scrapes; names and labels are a contract.
var (
	upDesc = newDesc("up",
		"1 when every endpoint of this scrape succeeded (see global_stability_scrape_success), else 0.")
	scrapeSuccessDesc = newDesc("scrape_success",
		"1 when this endpoint's data in this scrape is usable: every page answered and read as a valid document, or an answer reused while the API allows; 0 on a failed request, an invalid document or a back-off after Retry-After.", "endpoint")
	scrapeDurationDesc = newDesc("scrape_duration_seconds",
		"Wall time of this endpoint's requests (all pages) in the collection this scrape used, which the scrapes joining it or reusing it (--api.cache-ttl) share; 0 for an answer reused without a request.", "endpoint")
	backoffDesc = newDesc("api_backoff_seconds",
		"Time left before the exporter calls this endpoint again, after the API answered 429 or 503 with Retry-After; 0 when not backing off.", "endpoint")
	labelValuesDroppedDesc = newDesc("label_values_dropped",
		"Series left out of this scrape by --collector.max-label-values (per metric and endpoint) or --collector.max-series (its share of the scrape's): "+endpoint.CapsKeep()+"; or because the API repeated a key.", "metric")
	invalidValuesDesc = newDesc("invalid_values",
		"Values of this endpoint's response left out of this scrape because they were missing, null, of the wrong type or implausible, by the spec's field (for lists: items left out). 0 when all were valid; absent when the endpoint failed.", "endpoint", "field")
)

// dataDescs are the descriptors of the endpoints' metrics.
var dataDescs = sync.OnceValue(func() map[*endpoint.Metric]*prometheus.Desc {
	descs := map[*endpoint.Metric]*prometheus.Desc{}
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			descs[m] = prometheus.NewDesc(m.Name, m.Help, m.Labels, nil)
		}
	}
	return descs
})

// Rendering is a collection's series, gathered once and never changed
// after: the scrapes that saw all of the collection share it.
type Rendering struct{ families []*dto.MetricFamily }

// Gather is what /metrics exports for one scrape. The scrapes that saw all
// of a collection share one rendering of it (~7,000 series with every label
// cap full: a copy a scrape multiplies it by the scrapes at once); shared
// is that rendering when the scrape exports nothing else that differs (no
// endpoint backing off), nil otherwise.
func (s *Collections) Gather(ctx context.Context) (fams []*dto.MetricFamily, shared *Rendering, err error) {
	c := s.join(ctx)
	defer s.leave(c)
	seen, complete := await(ctx, c)
	s.finishScrape(seen)
	if !complete { // cut short by its deadline: what it saw is its own
		fams, err = render(func(ch chan<- prometheus.Metric) { s.results(ch, seen); s.emitBackoff(ch, seen) })
		return fams, nil, err
	}
	c.renderOnce.Do(func() { c.rendering, c.renderErr = s.renderWhole(seen) })
	if c.renderErr != nil {
		return nil, nil, c.renderErr
	}
	quiet := false
	own, err := render(func(ch chan<- prometheus.Metric) { quiet = s.emitBackoff(ch, seen) })
	if quiet {
		shared = c.rendering
	}
	// Not sorted or merged: the handler's prometheus.Gatherers does that.
	return append(slices.Clip(c.rendering.families), own...), shared, err
}

// await waits for c's results until ctx ends: each result, or a deadline
// error for one not in; complete if none was missing.
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

// renderWhole renders a collection its scrapes saw whole; when every answer
// was reused without a request, the last rendering of them is shared (a
// warm store would otherwise render a copy for every scrape).
func (s *Collections) renderWhole(seen []result) (*Rendering, error) {
	// Each answer by its first sample: a stored answer's are never copied.
	from := make([]*endpoint.Sample, len(seen))
	for i, r := range seen {
		if r.err != nil || r.reuse != endpoint.ReuseFresh && r.reuse != endpoint.ReuseRefresh || len(r.data.Samples) == 0 {
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
	fams, err := render(func(ch chan<- prometheus.Metric) { s.results(ch, seen) })
	r := &Rendering{fams}
	if err == nil && from != nil {
		s.renderedFrom, s.rendered = from, r
	}
	return r, err
}

// render gathers what emit sends, never changed after: scrapes share it.
func render(emit unchecked) ([]*dto.MetricFamily, error) {
	reg := prometheus.NewRegistry()
	reg.MustRegister(emit)
	return reg.Gather()
}

// unchecked describes nothing: its metrics are checked as gathered.
type unchecked func(chan<- prometheus.Metric)

func (unchecked) Describe(chan<- *prometheus.Desc)      {}
func (f unchecked) Collect(ch chan<- prometheus.Metric) { f(ch) }

// gauge sends a series. endpoint's rules make label values valid; were one
// not, the registry turns the panic into the gathering's error.
func gauge(ch chan<- prometheus.Metric, desc *prometheus.Desc, v float64, labels ...string) {
	ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, labels...)
}

// results sends what a scrape exports of what it saw, the back-off aside.
func (s *Collections) results(ch chan<- prometheus.Metric, seen []result) {
	descs := dataDescs()
	up := 1.0
	dropped := map[string]int{} // capped metric name → series left out
	share := shares(seen, cmp.Or(s.Endpoint.MaxSeries, endpoint.DefaultMaxSeries))
	for i, r := range seen {
		success := 0.0
		if r.err == nil {
			success = 1
			for _, sample := range r.data.Samples {
				if c := (claim{i, sample.Metric}); sample.Metric.Capped {
					if share[c] == 0 {
						dropped[sample.Metric.Name]++
						continue
					}
					share[c]--
				}
				gauge(ch, descs[sample.Metric], sample.Value, sample.Labels...)
			}
			for _, f := range r.endpoint.InvalidFields() {
				gauge(ch, invalidValuesDesc, float64(r.data.Invalid.Counts[f]), r.endpoint.Label, f)
			}
			for name, n := range r.data.Dropped {
				dropped[name] += n
			}
		}
		up = min(up, success)
		gauge(ch, scrapeSuccessDesc, success, r.endpoint.Label)
		gauge(ch, scrapeDurationDesc, r.duration.Seconds(), r.endpoint.Label)
	}
	gauge(ch, upDesc, up)
	for m := range descs { // in any order: the registry sorts what it gathers
		if m.Capped {
			gauge(ch, labelValuesDroppedDesc, float64(dropped[m.Name]), m.Name)
		}
	}
}

// claim is the series of one capped metric in one endpoint's answer, the
// busiest (or the first keys) first.
type claim struct {
	result int
	metric *endpoint.Metric
}

// shares shares out left, the series of the API's data: every series whose
// labels are fixed first (a few dozen), then each claim an equal share of
// what is left, one that needs less leaving the rest to the others; of an
// uneven split, those needing most (then the descriptions' last) get one
// more. The budget holds however many capped metrics there are.
func shares(seen []result, left int) map[claim]int {
	need := map[claim]int{}
	var claims []claim
	for i, r := range seen {
		for _, s := range r.data.Samples { // none on error
			switch c := (claim{i, s.Metric}); {
			case !s.Metric.Capped:
				left--
			case need[c] == 0:
				claims = append(claims, c)
				fallthrough
			default:
				need[c]++
			}
		}
	}
	slices.SortStableFunc(claims, func(a, b claim) int { return cmp.Compare(need[a], need[b]) })
	for k, c := range claims { // each claim's need becomes its share
		need[c] = min(need[c], max(left, 0)/(len(claims)-k))
		left -= need[c]
	}
	return need
}

// emitBackoff sends the back-off gauge of each endpoint: time left now, so
// it belongs to the scrape, not to the collection it shares. quiet: all 0.
func (s *Collections) emitBackoff(ch chan<- prometheus.Metric, seen []result) (quiet bool) {
	quiet = true
	for _, r := range seen {
		wait := s.backoffRemaining(r.endpoint.Label)
		quiet = quiet && wait == 0
		gauge(ch, backoffDesc, wait.Seconds(), r.endpoint.Label)
	}
	return quiet
}

// finishScrape logs a scrape's failures and keeps its outcome for LastScrape.
func (s *Collections) finishScrape(seen []result) {
	failed, why := s.failures.report(slices.DeleteFunc(slices.Clone(seen), func(r result) bool { return r.err == nil }))
	s.last.Store(&ScrapeStatus{At: time.Now(), Failed: failed, Why: why})
}

// ScrapeStatus is what the last scrape saw, for the landing page.
type ScrapeStatus struct {
	At     time.Time
	Failed []string // the endpoints that failed (of Config.Endpoints), by label
	Why    string   // what the log line said of them: one clause per cause, redacted of the key
}

// LastScrape returns the latest scrape's outcome, nil before the first.
func (s *Collections) LastScrape() *ScrapeStatus { return s.last.Load() }
