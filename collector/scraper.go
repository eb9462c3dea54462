// SPDX-License-Identifier: Apache-2.0

// Package collector turns each scrape into a collection from the Global
// Stability API: every enabled endpoint fetched concurrently under the
// scrape's deadline, exported as const metrics. Scrapes that arrive while a
// collection is in flight join it; scrapes after it reuse what the API's
// caching headers or --api.cache-ttl allow.
package collector

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Config configures Collections.
type Config struct {
	Client    *client.Client
	Logger    log.Logger
	Endpoints []*endpoint.Endpoint   // of endpoint.All, those whose group is on
	Endpoint  endpoint.Config        // label caps, grid, clock, keys
	CacheTTL  time.Duration          // how long a finished collection serves later scrapes
	Reused    *prometheus.CounterVec // if set, counts the stored answers reused
}

// Collections runs collections and shares them between scrapes. Not
// golang.org/x/sync/singleflight: it cannot cancel a call every caller has
// left, nor keep a finished result for a TTL.
type Collections struct {
	Config
	conditions sync.Map // lasting condition logged → whether it holds
	failures   failureLog
	last       atomic.Pointer[ScrapeStatus]
	backoff    sync.Map // endpoint label → when the API's Retry-After lets it be called again

	mu      sync.Mutex
	current *collection

	// The last rendering of answers all reused without a request (see renderWhole).
	renderMu     sync.Mutex
	renderedFrom []*endpoint.Sample
	rendered     *Rendering
}

// NewCollections returns Collections for cfg.
func NewCollections(cfg Config) *Collections {
	return &Collections{Config: cfg, failures: failureLog{logger: cfg.Logger}}
}

// collection is one round of requests, running while a scrape waits for it.
// When the last scrape leaves with results pending, it is canceled and never
// shared again: its failures say nothing of the API.
type collection struct {
	ctx     context.Context // not the request's of the scrape that started it: others may join
	cancel  context.CancelFunc
	started time.Time
	results []*result

	// Guarded by Collections.mu.
	waiters  int       // scrapes using it
	finished time.Time // when the last result came in

	// The rendering shared by every scrape that saw all of it (see Gather).
	renderOnce sync.Once
	rendering  *Rendering
	renderErr  error
}

// result is one endpoint's outcome, written before done is closed.
type result struct {
	endpoint *endpoint.Endpoint
	done     chan struct{}
	data     endpoint.Result // empty on error
	reuse    endpoint.Reuse  // why data is a stored answer, if it is
	err      error
	duration time.Duration
}

// join returns the collection a scrape should use; every join needs a leave.
func (s *Collections) join(ctx context.Context) *collection {
	s.mu.Lock()
	defer s.mu.Unlock()
	// A scrape joins a collection still running or one the cache keeps,
	// judged by its results: c.finished is set a moment after the last one.
	if c := s.current; c != nil && c.ctx.Err() == nil &&
		(c.pending() || s.CacheTTL > 0 && (c.finished.IsZero() || time.Since(c.finished) < s.CacheTTL)) {
		c.waiters++
		how := "joined in flight"
		if !c.pending() {
			how = "served from the cache (--api.cache-ttl)"
		}
		level.Debug(s.Logger).Log("msg", "collection "+how, "started", c.started.Format(time.RFC3339Nano), "scrapes", c.waiters)
		return c
	}
	s.current = s.start(ctx)
	level.Debug(s.Logger).Log("msg", "collection started", "endpoints", len(s.current.results))
	return s.current
}

// leave releases c, canceling it if the last scrape leaves it unfinished.
func (s *Collections) leave(c *collection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c.waiters--; c.waiters == 0 && c.pending() {
		c.cancel()
	}
}

// pending reports whether some endpoint has not answered yet.
func (c *collection) pending() bool {
	for _, r := range c.results {
		select {
		case <-r.done:
		default:
			return true
		}
	}
	return false
}

// start launches a collection's requests for one waiting scrape; s.mu is held.
func (s *Collections) start(ctx context.Context) *collection {
	c := &collection{started: time.Now(), waiters: 1}
	c.ctx, c.cancel = context.WithCancel(context.WithoutCancel(ctx))
	var wg sync.WaitGroup
	for _, e := range s.Endpoints {
		r := &result{endpoint: e, done: make(chan struct{})}
		c.results = append(c.results, r)
		if wait := s.backoffRemaining(e.Label); wait > 0 {
			r.err = fmt.Errorf("not requested: the API asked to wait %s more (Retry-After)", wait.Round(time.Second))
		} else if data, reuse, ok := e.Reusable(s.Endpoint); ok {
			// In at once: a scrape with almost no time left still gets it.
			r.data, r.reuse = data, reuse
			s.recordResult(r)
		} else {
			wg.Go(func() {
				defer close(r.done)
				r.data, r.reuse, r.err = e.Fetch(c.ctx, s.Client, s.Endpoint)
				r.duration = time.Since(c.started)
				s.recordResult(r)
				if se, ok := errors.AsType[*client.StatusError](r.err); ok { // 0 unless a Retry-After
					s.backoff.Store(e.Label, time.Now().Add(se.RetryAfter))
				}
			})
			continue
		}
		close(r.done)
	}
	go func() {
		wg.Wait()
		s.mu.Lock()
		c.finished = time.Now()
		s.mu.Unlock()
		// What each endpoint gave is in its series and the API request lines.
		level.Debug(s.Logger).Log("msg", "collection finished", "started", c.started.Format(time.RFC3339Nano), "duration", c.finished.Sub(c.started), "endpoints", len(c.results))
	}()
	return c
}

// backoffRemaining is how long the endpoint of label must not be called yet.
func (s *Collections) backoffRemaining(label string) time.Duration {
	until, _ := s.backoff.Load(label)
	t, _ := until.(time.Time)
	return max(time.Until(t), 0)
}

// recordResult counts a reuse and logs lasting conditions of the data when they
// start and end: a noisy API must not log the same warning a minute.
func (s *Collections) recordResult(r *result) {
	label, d := r.endpoint.Label, r.data
	if r.reuse != endpoint.Fetched && s.Reused != nil {
		s.Reused.WithLabelValues(label, string(r.reuse)).Inc()
	}
	if r.err != nil {
		return
	}
	changed := func(condition string, holds bool) bool {
		held, _ := s.conditions.Swap(condition, holds)
		was, _ := held.(bool)
		return was != holds
	}
	switch n := d.Invalid.Total(); {
	case !changed("invalid "+label, n > 0):
	case n > 0:
		level.Warn(s.Logger).Log("msg", "the API sent invalid values; they are left out and counted in global_stability_invalid_values (logged again only once this changes)",
			"endpoint", label, "invalid", n, "first", d.Invalid.First)
	default:
		level.Info(s.Logger).Log("msg", "the API's values are all valid again", "endpoint", label)
	}
	for _, name := range slices.Sorted(maps.Keys(d.Dropped)) {
		switch n := d.Dropped[name]; {
		case !changed("dropped "+label+" "+name, n > 0):
		case n > 0:
			level.Warn(s.Logger).Log("msg", "series left out: more distinct label values than --collector.max-label-values, or a key the API repeated (logged again only once this changes)",
				"endpoint", label, "metric", name, "dropped", n, "limit", s.Endpoint.MaxLabelValues)
		default:
			level.Info(s.Logger).Log("msg", "no series left out any more", "endpoint", label, "metric", name)
		}
	}
	if d.Duplicates > 0 { // a cursor walk that shifted under new events
		level.Debug(s.Logger).Log("msg", "events repeated on later pages of the walk were counted once", "endpoint", label, "repeated", d.Duplicates)
	}
}
