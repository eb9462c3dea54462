package collector

import (
	"sort"
	"sync"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/go-kit/log/level"
)

// conditions remembers which lasting conditions have been logged (an
// endpoint sending invalid values, a metric over its label cap), so that
// each is logged when it starts and when it ends, not on every collection:
// a noisy API must not fill the log with the same warning every minute.
type conditions struct {
	mu     sync.Mutex
	active map[string]bool
}

// set records whether the condition key holds now and reports whether that
// changed.
func (c *conditions) set(key string, on bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.active == nil {
		c.active = map[string]bool{}
	}
	if c.active[key] == on {
		return false
	}
	c.active[key] = on
	return true
}

// noteData logs what a collection of endpoint left out, once per change.
func (s *Collections) noteData(endpoint string, d endpoint.Result) {
	if n := d.Invalid.Total(); s.conditions.set("invalid "+endpoint, n > 0) {
		if n > 0 {
			level.Warn(s.logger).Log("msg", "the API sent invalid values; they are left out and counted in global_stability_invalid_values (logged again only once this changes)",
				"endpoint", endpoint, "invalid", n, "first", d.Invalid.First)
		} else {
			level.Info(s.logger).Log("msg", "the API's values are all valid again", "endpoint", endpoint)
		}
	}
	names := make([]string, 0, len(d.Dropped))
	for name := range d.Dropped {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		n := d.Dropped[name]
		if !s.conditions.set("dropped "+endpoint+" "+name, n > 0) {
			continue
		}
		if n > 0 {
			level.Warn(s.logger).Log("msg", "series left out: more distinct label values than --collector.max-label-values (logged again only once this changes)",
				"endpoint", endpoint, "metric", name, "dropped", n, "limit", s.config.MaxLabelValues)
		} else {
			level.Info(s.logger).Log("msg", "no series left out any more", "endpoint", endpoint, "metric", name)
		}
	}
	if d.Duplicates > 0 {
		level.Debug(s.logger).Log("msg", "events repeated on later pages of the walk were counted once", "endpoint", endpoint, "repeated", d.Duplicates)
	}
}
