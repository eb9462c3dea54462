package collector

import (
	"context"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// fetchBriefings covers GET /v1/briefings, every page up to --api.max-pages.
func fetchBriefings(ctx context.Context, c *client.Client) (*endpointData, error) {
	var (
		count  int
		latest time.Time
	)
	walk, err := c.Briefings(ctx, func(b client.Briefing) {
		if count == 0 || b.PublishedAt.After(latest) {
			latest = b.PublishedAt
		}
		count++
	})
	if err != nil {
		return nil, err
	}
	return &endpointData{invalid: walk.Invalid, emit: func(e *emitter) {
		e.gauge(briefingsDesc, float64(count))
		if count > 0 {
			e.gauge(briefingLatestDesc, unixSeconds(latest))
		}
	}}, nil
}
