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
	"fmt"
	"sync"
	"time"

	"github.com/go-kit/log"

	"github.com/global-stability/global_stability_exporter/client"
)

// Config configures a Scraper.
type Config struct {
	Client *client.Client
	Logger log.Logger
	// Which endpoint groups to collect; the overview is always collected.
	Pillars, Conflict, Briefings, Summary bool
	// MaxLabelValues caps the distinct label sets of a metric whose labels
	// come from upstream data, per scrape. Default 500.
	MaxLabelValues int
	// CacheTTL lets a finished collection serve later scrapes for this
	// long. 0 shares only collections still in flight.
	CacheTTL time.Duration
	// GridDegrees is the cell size of the conflict event grid. Default 5.
	GridDegrees float64
}

// DefaultMaxLabelValues is the default of Config.MaxLabelValues.
const DefaultMaxLabelValues = 500

// fetchFunc fetches one endpoint and returns how to export what it got.
type fetchFunc func(context.Context, *client.Client) (func(*emitter), error)

type task struct {
	endpoint string
	fetch    fetchFunc
}

// Scraper runs collections and shares them between concurrent scrapes.
// It lives as long as the process; an Exporter lives for one scrape.
type Scraper struct {
	client         *client.Client
	logger         log.Logger
	tasks          []task
	maxLabelValues int
	cacheTTL       time.Duration

	mu      sync.Mutex
	current *collection

	// backoff holds, per endpoint, when the API said it may be called
	// again (Retry-After on a 429 or 503). It outlives collections.
	backoffMu sync.Mutex
	backoff   map[string]time.Time
}

// NewScraper returns a Scraper for cfg.
func NewScraper(cfg Config) *Scraper {
	s := &Scraper{
		client:         cfg.Client,
		logger:         cfg.Logger,
		maxLabelValues: cfg.MaxLabelValues,
		cacheTTL:       cfg.CacheTTL,
		tasks:          []task{{client.EndpointOverview, fetchOverview}},
		backoff:        map[string]time.Time{},
	}
	if s.logger == nil {
		s.logger = log.NewNopLogger()
	}
	if s.maxLabelValues <= 0 {
		s.maxLabelValues = DefaultMaxLabelValues
	}
	if cfg.Pillars {
		for _, p := range client.Pillars() {
			s.tasks = append(s.tasks, task{client.DrilldownEndpoint(p), fetchDrilldown(p)})
		}
	}
	if cfg.Conflict {
		if cfg.GridDegrees <= 0 {
			cfg.GridDegrees = DefaultGridDegrees
		}
		s.tasks = append(s.tasks, task{client.EndpointConflict, fetchConflict(cfg.GridDegrees)})
	}
	if cfg.Briefings {
		s.tasks = append(s.tasks, task{client.EndpointBriefings, fetchBriefings})
	}
	if cfg.Summary {
		s.tasks = append(s.tasks, task{client.EndpointSummaries, fetchSummary})
	}
	return s
}

// collection is one round of requests to every enabled endpoint.
type collection struct {
	started  time.Time
	results  []*result
	done     chan struct{} // closed when every result is in
	finished time.Time     // written before done is closed
	cancel   context.CancelFunc
	waiters  int  // scrapes using it; guarded by Scraper.mu
	canceled bool // every waiter left early; guarded by Scraper.mu
}

// result is one endpoint's outcome; its fields are written before done is
// closed and only read after.
type result struct {
	endpoint string
	done     chan struct{}
	emit     func(*emitter)
	err      error
	duration time.Duration
}

// join returns the collection this scrape should use, starting one if
// none can be shared. Every join must be followed by a leave.
func (s *Scraper) join(ctx context.Context) *collection {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.current; c != nil && !c.canceled {
		select {
		case <-c.done:
			if s.cacheTTL > 0 && time.Since(c.finished) < s.cacheTTL {
				c.waiters++
				return c
			}
		default:
			c.waiters++
			return c
		}
	}
	c := s.start(ctx)
	c.waiters = 1
	s.current = c
	return c
}

// leave releases a collection; when the last scrape leaves before it is
// finished, its requests are canceled (nobody is left to read them).
func (s *Scraper) leave(c *collection) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c.waiters--
	if c.waiters > 0 {
		return
	}
	if c.pending() {
		c.canceled = true
		c.cancel()
	}
}

// pending reports whether some endpoint has not answered yet. It looks at
// the results rather than c.done, which closes a moment after the last
// result: a collection that is complete must not be marked canceled, or a
// cache TTL would never serve it.
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

// start launches every task under the deadline of the scrape that starts
// the collection. The collection is not canceled with that scrape's
// request, since other scrapes may join it; leave cancels it instead.
func (s *Scraper) start(ctx context.Context) *collection {
	var cctx context.Context
	var cancel context.CancelFunc
	if deadline, ok := ctx.Deadline(); ok {
		cctx, cancel = context.WithDeadline(context.WithoutCancel(ctx), deadline)
	} else {
		cctx, cancel = context.WithCancel(context.WithoutCancel(ctx))
	}
	c := &collection{started: time.Now(), done: make(chan struct{}), cancel: cancel}
	var wg sync.WaitGroup
	for _, t := range s.tasks {
		r := &result{endpoint: t.endpoint, done: make(chan struct{})}
		c.results = append(c.results, r)
		wg.Go(func() {
			defer close(r.done)
			if wait := s.backoffRemaining(t.endpoint); wait > 0 {
				r.err = fmt.Errorf("not requested: the API asked to wait %s more (Retry-After)", wait.Round(time.Second))
				return
			}
			r.emit, r.err = t.fetch(cctx, s.client)
			r.duration = time.Since(c.started)
			if d, ok := client.RetryAfter(r.err); ok {
				s.backoffMu.Lock()
				s.backoff[t.endpoint] = time.Now().Add(d)
				s.backoffMu.Unlock()
			}
		})
	}
	go func() {
		wg.Wait()
		c.finished = time.Now()
		close(c.done)
		cancel()
	}()
	return c
}

// backoffRemaining is how long endpoint must not be called yet.
func (s *Scraper) backoffRemaining(endpoint string) time.Duration {
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
