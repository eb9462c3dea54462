// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"bytes"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
	described "github.com/global-stability/global_stability_exporter/endpoint"
)

// TestAnEndpointOnlyDescribedIsServed: an endpoint that exists only as a
// description (here one no test elsewhere knows) is served with a body its
// own reader takes whole: every series it describes, nothing invalid.
func TestAnEndpointOnlyDescribedIsServed(t *testing.T) {
	index := &described.Metric{Name: "global_stability_market_index", Labels: []string{"market"}, Help: "h"}
	count := &described.Metric{Name: "global_stability_market_moves", Help: "h"}
	newest := &described.Metric{Name: "global_stability_market_latest_move_timestamp_seconds", Help: "h"}
	markets := &described.Endpoint{
		Label: "markets", Group: "markets", Limit: client.DocumentLimit, Paged: true,
		Fields: []described.Field{
			{Name: "index.equities", Rule: described.ScoreRule, Metric: index, Labels: map[string]string{"market": "equities"}},
			{Name: "as_of", Rule: described.Timestamp, Metric: described.AsOf},
		},
		List: &described.List{
			Name:  "moves",
			Item:  []described.Field{{Name: "sector", Rule: described.LabelValue}, {Name: "at", Rule: described.Timestamp}},
			Folds: []described.Fold{described.Count{Metric: count}, described.Newest{Metric: newest, Field: "at"}},
		},
	}
	now := time.Date(2026, 11, 22, 4, 37, 12, 0, time.UTC)
	col := markets.Start(described.Config{Now: func() time.Time { return now }})
	if _, err := col.Read(bytes.NewReader(genericBody(markets, now)), 1); err != nil {
		t.Fatal(err)
	}
	r := col.Result()
	got := map[string]bool{}
	for _, s := range r.Samples {
		got[s.Metric.Name] = true
	}
	for _, m := range markets.Metrics() {
		if !got[m.Name] {
			t.Errorf("no %s in %v", m.Name, r.Samples)
		}
	}
	if r.Invalid.Total() != 0 {
		t.Errorf("invalid: %v (%s)", r.Invalid.Counts, r.Invalid.First)
	}
}
