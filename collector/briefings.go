package collector

import (
	"context"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// fetchBriefings covers GET /v1/briefings, every page up to --api.max-pages.
func fetchBriefings(ctx context.Context, c *client.Client) (func(*emitter), error) {
	var (
		count  int
		latest time.Time
	)
	for page, err := range c.BriefingPages(ctx) {
		if err != nil {
			return nil, err
		}
		for _, b := range page {
			count++
			if b.PublishedAt.After(latest) {
				latest = b.PublishedAt
			}
		}
	}
	return func(e *emitter) {
		e.gauge(briefingsDesc, float64(count))
		if count > 0 {
			e.gauge(briefingLatestDesc, unixSeconds(latest))
		}
	}, nil
}
