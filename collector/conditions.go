package collector

import (
	"maps"
	"slices"
	"sync"

	"github.com/go-kit/log/level"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// conditions remembers which lasting conditions have been logged (an
// endpoint sending invalid values, a metric over its label cap), so that
// each is logged when it starts and when it ends, not on every collection:
// a noisy API must not fill the log with the same warning every minute.
type conditions struct{ sync.Map } // condition → whether it holds

// set records whether the condition key holds now and reports whether that
// changed.
func (c *conditions) set(key string, on bool) bool {
	was, _ := c.Swap(key, on)
	held, _ := was.(bool)
	return held != on
}

// took counts an endpoint's reuse of its stored answer, if it did, and
// logs what its data left out, once per change.
func (s *Collections) took(r *result) {
	label, d := r.endpoint.Label, r.data
	if r.reuse != endpoint.Fetched && s.Reused != nil {
		s.Reused.WithLabelValues(label, string(r.reuse)).Inc()
	}
	if r.err != nil {
		return
	}
	switch n := d.Invalid.Total(); {
	case !s.conditions.set("invalid "+label, n > 0):
	case n > 0:
		level.Warn(s.Logger).Log("msg", "the API sent invalid values; they are left out and counted in global_stability_invalid_values (logged again only once this changes)",
			"endpoint", label, "invalid", n, "first", d.Invalid.First)
	default:
		level.Info(s.Logger).Log("msg", "the API's values are all valid again", "endpoint", label)
	}
	for _, name := range slices.Sorted(maps.Keys(d.Dropped)) {
		switch n := d.Dropped[name]; {
		case !s.conditions.set("dropped "+label+" "+name, n > 0):
		case n > 0:
			level.Warn(s.Logger).Log("msg", "series left out: more distinct label values than --collector.max-label-values (logged again only once this changes)",
				"endpoint", label, "metric", name, "dropped", n, "limit", s.Endpoint.MaxLabelValues)
		default:
			level.Info(s.Logger).Log("msg", "no series left out any more", "endpoint", label, "metric", name)
		}
	}
	if d.Duplicates > 0 {
		level.Debug(s.Logger).Log("msg", "events repeated on later pages of the walk were counted once", "endpoint", label, "repeated", d.Duplicates)
	}
}
