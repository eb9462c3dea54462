package collector

import (
	"context"
	"fmt"
	"time"
)

// outcome is what one scrape saw of one endpoint: its result, or a
// deadline error if the scrape's context ended first.
type outcome struct {
	*result
	duration time.Duration
	err      error
}

// await waits for every result of c until ctx ends. complete says whether
// every result arrived in time, so that the scrape saw exactly what every
// other scrape that waits for all of c sees.
func await(ctx context.Context, c *collection) (outcomes []outcome, complete bool) {
	complete = true
	for _, r := range c.results {
		o := outcome{result: r}
		select {
		case <-r.done:
		case <-ctx.Done():
		}
		select {
		case <-r.done: // a result already in wins over an expired context
			o.duration, o.err = r.duration, r.err
		default:
			complete = false
			o.duration = time.Since(c.started)
			o.err = fmt.Errorf("no answer within the scrape deadline: %w", context.Cause(ctx))
		}
		outcomes = append(outcomes, o)
	}
	return outcomes, complete
}

// emitOutcomes sends everything a scrape exports from its outcomes, the
// back-off gauge aside: each endpoint's data, invalid values and dropped
// series if it succeeded, its success and duration, and up.
func emitOutcomes(em *emitter, outcomes []outcome) {
	up := 1.0
	for _, o := range outcomes {
		success := 1.0
		if o.err != nil {
			success, up = 0, 0
		} else {
			em.endpoint(o.endpoint, o.data)
		}
		em.gauge(scrapeSuccessDesc, success, o.endpoint.Label)
		em.gauge(scrapeDurationDesc, o.duration.Seconds(), o.endpoint.Label)
	}
	em.gauge(upDesc, up)
	em.finish()
}

// emitBackoff sends the back-off gauge of each endpoint: time left now, so
// it belongs to the scrape, not to the collection it shares.
func (s *Collections) emitBackoff(em *emitter, outcomes []outcome) {
	for _, o := range outcomes {
		em.gauge(backoffDesc, s.backoffRemaining(o.endpoint.Label).Seconds(), o.endpoint.Label)
	}
}

func failures(outcomes []outcome) []failure {
	var fs []failure
	for _, o := range outcomes {
		if o.err != nil {
			fs = append(fs, failure{o.endpoint.Label, o.err, o.endpoint.Paged})
		}
	}
	return fs
}

// finishScrape logs a scrape's failures (see failureLog) and keeps its
// outcome for LastScrape.
func (s *Collections) finishScrape(outcomes []outcome) {
	fs := failures(outcomes)
	s.failures.report(fs)
	st := ScrapeStatus{At: time.Now(), Endpoints: len(outcomes)}
	for _, f := range fs {
		st.Failed = append(st.Failed, f.endpoint)
	}
	if len(fs) > 0 {
		st.Why = errorText(fs)
	}
	s.lastMu.Lock()
	s.last = &st
	s.lastMu.Unlock()
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
	s.lastMu.Lock()
	defer s.lastMu.Unlock()
	if s.last == nil {
		return ScrapeStatus{}, false
	}
	return *s.last, true
}
