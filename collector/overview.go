package collector

import (
	"context"

	"github.com/global-stability/global_stability_exporter/client"
)

// fetchOverview covers GET /v1/global-stability.
func fetchOverview(ctx context.Context, c *client.Client) (func(*emitter), error) {
	o, err := c.Overview(ctx)
	if err != nil {
		return nil, err
	}
	return func(e *emitter) {
		e.gauge(scoreDesc, o.Score)
		e.capped(trendDesc, 1, o.Trend)
		for _, p := range client.Pillars() {
			e.gauge(pillarScoreDesc, o.Pillars[p], string(p))
		}
		e.gauge(asOfDesc, unixSeconds(o.AsOf), client.EndpointOverview)
	}, nil
}

// fetchDrilldown covers GET /v1/global-stability/pillar/{pillar}. The
// pillar's score is exported from the overview only, so there is one
// global_stability_pillar_score series per pillar.
func fetchDrilldown(p client.Pillar) fetchFunc {
	return func(ctx context.Context, c *client.Client) (func(*emitter), error) {
		d, err := c.Drilldown(ctx, p)
		if err != nil {
			return nil, err
		}
		return func(e *emitter) {
			e.gauge(pillarDeltaDesc, d.Delta24h, string(p))
			for _, ind := range d.Indicators {
				e.capped(pillarIndicatorDesc, ind.Value, string(p), ind.Key)
			}
			e.gauge(asOfDesc, unixSeconds(d.AsOf), client.DrilldownEndpoint(p))
		}, nil
	}
}

// fetchSummary covers GET /v1/summaries. Its text is not a metric; its
// as_of tells whether the 15-minute refresh is happening.
func fetchSummary(ctx context.Context, c *client.Client) (func(*emitter), error) {
	s, err := c.Summary(ctx)
	if err != nil {
		return nil, err
	}
	return func(e *emitter) {
		e.gauge(asOfDesc, unixSeconds(s.AsOf), client.EndpointSummaries)
	}, nil
}
