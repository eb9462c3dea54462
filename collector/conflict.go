package collector

import (
	"cmp"
	"context"
	"slices"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// conflictStats aggregates conflict events page by page, so memory stays at
// one page however many events the API returns.
type conflictStats struct {
	count      int
	byCategory map[string]int
	escMax     float64
	escSum     float64
	latest     time.Time
	grid       *grid
}

func (s *conflictStats) add(ev client.Event) {
	if s.count == 0 || ev.Escalation > s.escMax {
		s.escMax = ev.Escalation
	}
	s.count++
	s.escSum += ev.Escalation
	s.byCategory[ev.Category]++
	if ev.OccurredAt.After(s.latest) {
		s.latest = ev.OccurredAt
	}
	s.grid.add(ev.Lat, ev.Lon, ev.Escalation)
}

// fetchConflict covers GET /v1/conflict, every page up to --api.max-pages,
// with events counted into cells of gridDegrees.
func fetchConflict(gridDegrees float64) fetchFunc {
	return func(ctx context.Context, c *client.Client) (func(*emitter), error) {
		s := &conflictStats{byCategory: map[string]int{}, grid: newGrid(gridDegrees)}
		for page, err := range c.ConflictEventPages(ctx) {
			if err != nil {
				return nil, err
			}
			for _, ev := range page {
				s.add(ev)
			}
		}
		return s.emit, nil
	}
}

func (s *conflictStats) emit(e *emitter) {
	e.gauge(conflictEventsDesc, float64(s.count))
	// Largest categories first, so a cap keeps the ones that matter.
	cats := make([]string, 0, len(s.byCategory))
	for c := range s.byCategory {
		cats = append(cats, c)
	}
	slices.SortFunc(cats, func(a, b string) int {
		return cmp.Or(cmp.Compare(s.byCategory[b], s.byCategory[a]), cmp.Compare(a, b))
	})
	for _, c := range cats {
		e.capped(conflictEventsByCategoryDesc, float64(s.byCategory[c]), c)
	}
	// Busiest cells first, so a cap keeps the ones that matter; both
	// metrics see the cells in one order, so they keep the same cells.
	cells := make([]cell, 0, len(s.grid.cells))
	for c := range s.grid.cells {
		cells = append(cells, c)
	}
	slices.SortFunc(cells, func(a, b cell) int {
		return cmp.Or(cmp.Compare(s.grid.cells[b].count, s.grid.cells[a].count), cmp.Compare(a.lat, b.lat), cmp.Compare(a.lon, b.lon))
	})
	for _, c := range cells {
		lat, lon := s.grid.centre(c)
		e.capped(conflictEventsByCellDesc, float64(s.grid.cells[c].count), lat, lon)
		e.capped(conflictEscalationMaxByCellDesc, s.grid.cells[c].escMax, lat, lon)
	}
	if s.count == 0 {
		return // no events: max, mean and latest are undefined, so absent
	}
	e.gauge(conflictEscalationMaxDesc, s.escMax)
	e.gauge(conflictEscalationMeanDesc, s.escSum/float64(s.count))
	e.gauge(conflictLatestDesc, unixSeconds(s.latest))
}
