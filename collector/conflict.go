package collector

import (
	"cmp"
	"context"
	"hash/maphash"
	"slices"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// conflictStats aggregates conflict events one at a time as they are
// decoded, so memory is bounded by the number of grid cells and tracked
// categories, not by the number of events.
type conflictStats struct {
	count      int
	byCategory map[string]int
	maxTracked int
	// Categories first seen once maxTracked names were tracked: their
	// events count in the total only. Their distinct names are counted by
	// hash (8 bytes each, up to maxUntracked: past it, the count is a
	// floor) so that the dropped-series gauge says how many names were
	// left out.
	untracked map[uint64]struct{}
	seed      maphash.Seed
	escMax    float64
	escMean   float64
	latest    time.Time
	grid      *grid
}

func (s *conflictStats) add(ev client.Event) {
	s.count++
	if s.count == 1 || ev.Escalation > s.escMax {
		s.escMax = ev.Escalation
	}
	// A running mean rather than sum/count: two escalations of 1e308
	// would overflow the sum to +Inf. Each step is a weighted average of
	// two finite values, so it stays finite.
	n := float64(s.count)
	s.escMean += ev.Escalation/n - s.escMean/n
	if s.count == 1 || ev.OccurredAt.After(s.latest) {
		s.latest = ev.OccurredAt
	}
	if _, ok := s.byCategory[ev.Category]; ok || len(s.byCategory) < s.maxTracked {
		s.byCategory[ev.Category]++
	} else if len(s.untracked) < maxUntracked {
		s.untracked[maphash.String(s.seed, ev.Category)] = struct{}{}
	}
	s.grid.add(ev.Lat, ev.Lon, ev.Escalation)
}

// maxUntracked bounds the hashes of categories past the tracking limit:
// 2 MiB at most, far past any plausible number of categories.
const maxUntracked = 250_000

func newConflictStats(gridDegrees float64, maxValues int) *conflictStats {
	return &conflictStats{
		byCategory: map[string]int{},
		maxTracked: 10 * maxValues,
		untracked:  map[uint64]struct{}{},
		seed:       maphash.MakeSeed(),
		grid:       newGrid(gridDegrees),
	}
}

// fetchConflict covers GET /v1/conflict, every page up to --api.max-pages,
// with events counted into cells of gridDegrees. Categories and cells are
// capped at maxValues series each, keeping those with the most events.
// Categories are counted by name up to ten times that many distinct names
// (a bound on memory), in the order they first appear; events of a name
// first seen past that count in the total only, so such a name is never
// exported, however busy, and counts as one dropped series.
func fetchConflict(gridDegrees float64, maxValues int) fetchFunc {
	return func(ctx context.Context, c *client.Client) (*endpointData, error) {
		s := newConflictStats(gridDegrees, maxValues)
		walk, err := c.ConflictEvents(ctx, s.add)
		if err != nil {
			return nil, err
		}
		return s.data(walk, maxValues), nil
	}
}

// data picks the series to export: the busiest categories and cells up to
// maxValues each, and counts the rest as dropped.
func (s *conflictStats) data(walk client.Walk, maxValues int) *endpointData {
	cats := make([]string, 0, len(s.byCategory))
	for c := range s.byCategory {
		cats = append(cats, c)
	}
	slices.SortFunc(cats, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.byCategory[b], s.byCategory[a]), cmp.Compare(a, b))
	})
	cells := make([]cell, 0, len(s.grid.cells))
	for c := range s.grid.cells {
		cells = append(cells, c)
	}
	slices.SortFunc(cells, func(a, b cell) int {
		return cmp.Or(cmp.Compare(s.grid.cells[b].count, s.grid.cells[a].count), cmp.Compare(a.lat, b.lat), cmp.Compare(a.lon, b.lon))
	})
	droppedCats := max(len(cats)-maxValues, 0) + len(s.untracked)
	droppedCells := max(len(cells)-maxValues, 0)
	cats, cells = cats[:min(len(cats), maxValues)], cells[:min(len(cells), maxValues)]
	return &endpointData{
		invalid:    walk.Invalid,
		duplicates: walk.Duplicates,
		dropped: map[string]int{
			conflictEventsByCategoryDesc.name:    droppedCats,
			conflictEventsByCellDesc.name:        droppedCells,
			conflictEscalationMaxByCellDesc.name: droppedCells,
		},
		emit: func(e *emitter) {
			e.gauge(conflictEventsDesc, float64(s.count))
			for _, c := range cats {
				e.gauge(conflictEventsByCategoryDesc.desc, float64(s.byCategory[c]), c)
			}
			// Both cell metrics keep the same, busiest, cells.
			for _, c := range cells {
				lat, lon := s.grid.centre(c)
				e.gauge(conflictEventsByCellDesc.desc, float64(s.grid.cells[c].count), lat, lon)
				e.gauge(conflictEscalationMaxByCellDesc.desc, s.grid.cells[c].escMax, lat, lon)
			}
			if s.count == 0 {
				return // no events: max, mean and latest are undefined, so absent
			}
			e.gauge(conflictEscalationMaxDesc, s.escMax)
			e.gauge(conflictEscalationMeanDesc, s.escMean)
			e.gauge(conflictLatestDesc, unixSeconds(s.latest))
		},
	}
}
