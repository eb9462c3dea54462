// Package collector turns one scrape into one collection from the Global
// Stability API: every enabled endpoint fetched concurrently under the
// scrape's deadline, each endpoint's data exported as const metrics, and
// each endpoint's outcome as global_stability_scrape_success.
//
// Scrapes that arrive while a collection is in flight join it instead of
// starting their own, so a pair of HA Prometheus servers costs the API one
// set of requests; with a cache TTL, a finished collection also serves
// scrapes for that long.
package collector

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Config configures Collections.
type Config struct {
	Client *client.Client
	Logger log.Logger
	// Endpoints are those to collect (of endpoint.All, those whose group is on).
	Endpoints []*endpoint.Endpoint
	// Endpoint configures judging and folding: label caps, the grid, the
	// clock, the key ring.
	Endpoint endpoint.Config
	// CacheTTL lets a finished collection serve later scrapes for this
	// long. 0 shares only collections still in flight.
	CacheTTL time.Duration
	// Reused, if set, counts the endpoints whose stored answer a
	// collection reused (Endpoint.Store), by endpoint and reason.
	Reused *prometheus.CounterVec
}

// Collections runs collections from the API and shares them between the
// scrapes that arrive while one is in flight (and, with a cache TTL, for a
// while after). It lives as long as the process; an Exporter lives for one
// scrape.
//
// golang.org/x/sync/singleflight shares a call in flight, but cannot carry
// what a scrape needs here: it cannot cancel the call when every caller has
// gone (its function runs on), extend the call's deadline for a caller that
// joins with a later one, or keep a finished result for a TTL.
type Collections struct {
	client     *client.Client
	logger     log.Logger
	endpoints  []*endpoint.Endpoint
	config     endpoint.Config
	cacheTTL   time.Duration
	reused     *prometheus.CounterVec
	conditions conditions // what has been logged as going on
	failures   *failureLog

	mu      sync.Mutex
	current *collection

	// backoff holds, per endpoint, when the API said it may be called
	// again (Retry-After on a 429 or 503). It outlives collections.
	backoffMu sync.Mutex
	backoff   map[string]time.Time

	lastMu sync.Mutex
	last   *ScrapeStatus // of the latest scrape; nil before the first

	// The last rendering of answers all reused without a request, and
	// the answers (see renderWhole).
	renderMu     sync.Mutex
	renderedFrom []*endpoint.Sample
	rendered     []*dto.MetricFamily
}

// NewCollections returns Collections for cfg.
func NewCollections(cfg Config) *Collections {
	s := &Collections{
		client:    cfg.Client,
		logger:    cfg.Logger,
		endpoints: cfg.Endpoints,
		config:    cfg.Endpoint,
		cacheTTL:  cfg.CacheTTL,
		reused:    cfg.Reused,
		backoff:   map[string]time.Time{},
	}
	if s.logger == nil {
		s.logger = log.NewNopLogger()
	}
	s.failures = &failureLog{logger: s.logger}
	return s
}

// collection is one round of requests to every enabled endpoint. It runs
// until the latest deadline of the scrapes using it: a scrape that joins
// with a later deadline extends it, so no scrape gets a worse answer
// because another one started the collection (or joined it) first.
type collection struct {
	started time.Time
	results []*result
	done    chan struct{} // closed when every result is in
	cancel  context.CancelCauseFunc

	// Guarded by Collections.mu.
	waiters  int       // scrapes using it
	deadline time.Time // the latest deadline of those scrapes; zero for none
	timer    *time.Timer
	finished time.Time // when the last result came in
	expired  bool      // its deadline passed with results pending
	canceled bool      // every scrape left with results pending

	// The rendering shared by every scrape that saw all of it (see gather).
	renderOnce sync.Once
	families   []*dto.MetricFamily
	renderErr  error
}

// result is one endpoint's outcome; its fields are written before done is
// closed and only read after.
type result struct {
	endpoint *endpoint.Endpoint
	done     chan struct{}
	data     endpoint.Result // empty on error
	reuse    endpoint.Reuse  // why data is a stored answer, if it is
	err      error
	duration time.Duration
}

var (
	errCollectionExpired = errors.New("the deadline of every scrape waiting for it passed")
	errCollectionLeft    = errors.New("every scrape waiting for it went away")
)

// join returns the collection this scrape should use, starting one if
// none can be shared. Every join must be followed by a leave.
func (s *Collections) join(ctx context.Context) *collection {
	deadline, _ := ctx.Deadline()
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.current; c != nil && s.joinable(c) {
		c.waiters++
		c.extend(deadline)
		how := "joined in flight"
		if !c.pending() {
			how = "served from the cache (--api.cache-ttl)"
		}
		level.Debug(s.logger).Log("msg", "collection "+how, "started", c.started.Format(time.RFC3339Nano), "scrapes", c.waiters, "deadline", deadlineString(c.deadline))
		return c
	}
	c := s.start(ctx, deadline)
	c.waiters = 1
	s.current = c
	level.Debug(s.logger).Log("msg", "collection started", "endpoints", len(c.results), "deadline", deadlineString(deadline))
	return c
}

func deadlineString(d time.Time) string {
	if d.IsZero() {
		return "none"
	}
	return d.Format(time.RFC3339Nano)
}

// joinable reports whether a new scrape may use c: while it is in flight
// (its deadline then extends to the scrape's), or, once every result is
// in, for the cache TTL; never once it expired or was canceled, since its
// failures then say nothing about the API. It looks at the results rather
// than c.done, which closes a moment after the last result: in that gap a
// collection is finished, not in flight.
func (s *Collections) joinable(c *collection) bool {
	switch {
	case c.expired || c.canceled:
		return false
	case c.pending():
		return true
	}
	return s.cacheTTL > 0 && (c.finished.IsZero() || time.Since(c.finished) < s.cacheTTL)
}

// extend moves c's deadline to deadline if that is later (zero: none).
func (c *collection) extend(deadline time.Time) {
	switch {
	case c.deadline.IsZero():
		return // no deadline already
	case deadline.IsZero():
		c.deadline = time.Time{}
		c.timer.Stop()
	case deadline.After(c.deadline):
		c.deadline = deadline
		c.timer.Reset(time.Until(deadline))
	}
}

// leave releases a collection; when the last scrape leaves before it is
// finished, its requests are canceled (nobody is left to read them).
func (s *Collections) leave(c *collection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.waiters--
	if c.waiters > 0 {
		return
	}
	if c.pending() {
		c.canceled = true
		c.cancel(errCollectionLeft)
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

// start launches every task of a collection under deadline (zero: none),
// which later scrapes may extend. The collection is not canceled with the
// request of the scrape that starts it, since other scrapes may join it;
// leave and the deadline's timer cancel it instead. Called with s.mu held.
func (s *Collections) start(ctx context.Context, deadline time.Time) *collection {
	cctx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	c := &collection{started: time.Now(), done: make(chan struct{}), cancel: cancel, deadline: deadline}
	if !deadline.IsZero() {
		c.timer = time.AfterFunc(time.Until(deadline), func() { s.expire(c) })
	} else {
		c.timer = time.NewTimer(0) // never read; Stop and Reset need a timer
		c.timer.Stop()
	}
	var wg sync.WaitGroup
	for _, e := range s.endpoints {
		r := &result{endpoint: e, done: make(chan struct{})}
		c.results = append(c.results, r)
		if s.backoffRemaining(e.Label) == 0 {
			// What the API lets us reuse without asking is in at once: a
			// scrape with almost no time left still gets it.
			if data, reuse, ok := e.Reusable(s.config); ok {
				r.data, r.reuse = data, reuse
				s.countReuse(e.Label, reuse)
				s.noteData(e.Label, r.data)
				close(r.done)
				continue
			}
		}
		wg.Go(func() {
			defer close(r.done)
			if wait := s.backoffRemaining(e.Label); wait > 0 {
				r.err = fmt.Errorf("not requested: the API asked to wait %s more (Retry-After)", wait.Round(time.Second))
				return
			}
			r.data, r.reuse, r.err = e.Fetch(cctx, s.client, s.config)
			r.duration = time.Since(c.started)
			s.countReuse(e.Label, r.reuse)
			if r.err == nil {
				s.noteData(e.Label, r.data)
			}
			if d, ok := client.RetryAfter(r.err); ok {
				s.backoffMu.Lock()
				s.backoff[e.Label] = time.Now().Add(d)
				s.backoffMu.Unlock()
			}
		})
	}
	go func() {
		wg.Wait()
		s.mu.Lock()
		c.finished = time.Now()
		c.timer.Stop()
		s.mu.Unlock()
		close(c.done)
		cancel(nil)
		failed, reused := 0, 0
		for _, r := range c.results {
			switch {
			case r.err != nil:
				failed++
			case r.reuse != endpoint.Fetched:
				reused++
			}
		}
		level.Debug(s.logger).Log("msg", "collection finished", "started", c.started.Format(time.RFC3339Nano), "duration", c.finished.Sub(c.started),
			"endpoints", len(c.results), "failed", failed, "reused", reused, "reused_without_request", reusedWithoutRequest(c.results))
	}()
	return c
}

// expire runs when c's deadline timer fires: unless a scrape extended the
// deadline meanwhile, c's requests are canceled and c is never shared again.
func (s *Collections) expire(c *collection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case c.deadline.IsZero() || !c.pending():
		return
	case time.Now().Before(c.deadline):
		c.timer.Reset(time.Until(c.deadline)) // extended while this call waited for the lock
		return
	}
	c.expired = true
	c.cancel(errCollectionExpired)
}

// reusedWithoutRequest counts the results that cost no request: stored
// answers still fresh or inside their refresh interval.
func reusedWithoutRequest(results []*result) int {
	n := 0
	for _, r := range results {
		if r.err == nil && (r.reuse == endpoint.ReuseFresh || r.reuse == endpoint.ReuseRefresh) {
			n++
		}
	}
	return n
}

// countReuse counts an endpoint's reuse of its stored answer, if it did.
func (s *Collections) countReuse(label string, reuse endpoint.Reuse) {
	if reuse != endpoint.Fetched && s.reused != nil {
		s.reused.WithLabelValues(label, string(reuse)).Inc()
	}
}

// backoffRemaining is how long endpoint must not be called yet.
func (s *Collections) backoffRemaining(endpoint string) time.Duration {
	s.backoffMu.Lock()
	defer s.backoffMu.Unlock()
	until, ok := s.backoff[endpoint]
	if !ok {
		return 0
	}
	if d := time.Until(until); d > 0 {
		return d
	}
	delete(s.backoff, endpoint)
	return 0
}
