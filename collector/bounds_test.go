package collector

import (
	"fmt"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// TestIndicatorTrackingStaysWithinTheCap: a drilldown of 100,000 distinct
// keys with a cap of 10 keeps the first 10, remembers only those, and
// counts the rest dropped; a kept key repeated is dropped too.
func TestIndicatorTrackingStaysWithinTheCap(t *testing.T) {
	f := newFirstKeys(10)
	for i := range 100_000 {
		f.add(client.Indicator{Key: fmt.Sprint("k", i), Value: float64(i)})
	}
	f.add(client.Indicator{Key: "k3", Value: -1})
	if len(f.kept) != 10 || len(f.seen) != 10 || f.dropped != 100_000-10+1 {
		t.Errorf("kept %d, remembered %d, dropped %d; want 10, 10, %d", len(f.kept), len(f.seen), f.dropped, 100_000-10+1)
	}
	if f.kept[3].Value != 3 {
		t.Errorf("a repeated key replaced the first: %v", f.kept[3])
	}
}

// TestCategoriesPastTheTrackingLimit: with a cap of 2, names are tracked
// up to 20; the events of names first seen after that count in the total
// only, and each such name counts as one dropped series, exactly.
func TestCategoriesPastTheTrackingLimit(t *testing.T) {
	s := newConflictStats(5, 2)
	at := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	for i := range 30 { // 30 names: 20 tracked, 10 not
		for range i + 1 { // name i has i+1 events: the busiest come last
			s.add(client.Event{Category: fmt.Sprint("c", i), OccurredAt: at})
		}
	}
	if len(s.byCategory) != 20 {
		t.Errorf("%d names tracked, want the limit of 20", len(s.byCategory))
	}
	d := s.data(client.Walk{}, 2)
	// 20 tracked, 2 exported: 18 dropped; plus the 10 names never tracked.
	if got := d.dropped[conflictEventsByCategoryDesc.name]; got != 28 {
		t.Errorf("dropped categories = %d, want 18 + 10 = 28", got)
	}
	if s.count != 30*31/2 {
		t.Errorf("events counted = %d, want all %d", s.count, 30*31/2)
	}
}
