package collector

import (
	"context"

	"github.com/global-stability/global_stability_exporter/client"
)

// fetchOverview covers GET /v1/global-stability.
func fetchOverview(ctx context.Context, c *client.Client) (*endpointData, error) {
	o, err := c.Overview(ctx)
	if err != nil {
		return nil, err
	}
	return &endpointData{invalid: o.Invalid, emit: func(e *emitter) {
		if o.Score != nil {
			e.gauge(scoreDesc, *o.Score)
		}
		if o.Trend != nil {
			e.gauge(trendDesc, 1, *o.Trend)
		}
		for _, p := range client.Pillars() {
			if v, ok := o.Pillars[p]; ok {
				e.gauge(pillarScoreDesc, v, string(p))
			}
		}
		if o.AsOf != nil {
			e.gauge(asOfDesc, unixSeconds(*o.AsOf), client.EndpointOverview)
		}
	}}, nil
}

// fetchDrilldown covers GET /v1/global-stability/pillar/{pillar}. The
// pillar's score is exported from the overview only, so there is one
// global_stability_pillar_score series per pillar. Indicators are capped
// per pillar while they are decoded (the first maxValues distinct keys, in
// the API's order: there is no measure of which matter more), so a flood
// in one pillar neither costs memory nor crowds out the others.
func fetchDrilldown(p client.Pillar, maxValues int) fetchFunc {
	return func(ctx context.Context, c *client.Client) (*endpointData, error) {
		kept := newFirstKeys(maxValues)
		d, err := c.Drilldown(ctx, p, kept.add)
		if err != nil {
			return nil, err
		}
		return &endpointData{
			invalid: d.Invalid,
			dropped: map[string]int{pillarIndicatorDesc.name: kept.dropped},
			emit: func(e *emitter) {
				if d.Delta24h != nil {
					e.gauge(pillarDeltaDesc, *d.Delta24h, string(p))
				}
				for _, ind := range kept.kept {
					e.gauge(pillarIndicatorDesc.desc, ind.Value, string(p), ind.Key)
				}
				if d.AsOf != nil {
					e.gauge(asOfDesc, unixSeconds(*d.AsOf), client.DrilldownEndpoint(p))
				}
			},
		}, nil
	}
}

// firstKeys keeps the first max indicators with distinct keys, in the
// API's order, and counts the rest as dropped: those past the cap, and a
// key repeated (two series of one label set would make the scrape
// invalid). It remembers only the keys it keeps, so a drilldown of a
// million keys costs max of them.
type firstKeys struct {
	max     int
	kept    []client.Indicator
	seen    map[string]bool
	dropped int
}

func newFirstKeys(max int) *firstKeys { return &firstKeys{max: max, seen: map[string]bool{}} }

func (f *firstKeys) add(ind client.Indicator) {
	if f.seen[ind.Key] || len(f.kept) >= f.max {
		f.dropped++
		return
	}
	f.seen[ind.Key] = true
	f.kept = append(f.kept, ind)
}

// fetchSummary covers GET /v1/summaries. Its text is not a metric; its
// as_of tells whether the 15-minute refresh is happening.
func fetchSummary(ctx context.Context, c *client.Client) (*endpointData, error) {
	s, err := c.Summary(ctx)
	if err != nil {
		return nil, err
	}
	return &endpointData{invalid: s.Invalid, emit: func(e *emitter) {
		if s.AsOf != nil {
			e.gauge(asOfDesc, unixSeconds(*s.AsOf), client.EndpointSummaries)
		}
	}}, nil
}
