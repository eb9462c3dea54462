// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"cmp"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// listsAPI serves paged lists of the items given, by endpoint label,
// pageSize items a page, cursors the index of a page's first item; the
// other endpoints answer healthy bodies.
func listsAPI(lists map[string][]string, pageSize int) http.Handler {
	healthy := fakeAPI(healthyBodies(okDrilldown, okOverview))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		label := strings.TrimPrefix(r.URL.Path, "/v1/")
		items, ok := lists[label]
		if !ok {
			healthy.ServeHTTP(w, r)
			return
		}
		start, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		end, next := min(start+pageSize, len(items)), "null"
		if end < len(items) {
			next = strconv.Quote(strconv.Itoa(end))
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, fmt.Sprintf(`{%q:[%s],"next_cursor":%s}`, map[string]string{"conflict": "events", "briefings": "briefings"}[label], strings.Join(items[start:end], ","), next))
	})
}

// realisticNames draws n items' names from a pool of size names, a few
// busy and a long tail (Zipf-like), one to four an item, a name now and
// then twice in one item; some names are not ASCII. It returns each item's
// names and how many items name each.
func realisticNames(seed uint64, n, size int) (items [][]string, counts map[string]int) {
	r := rand.New(rand.NewPCG(seed, 1))
	name := func(i int) string {
		switch {
		case i%7 == 0:
			return fmt.Sprintf("Milícia nº %d (Moçambique)", i)
		case i%11 == 0:
			return fmt.Sprintf("Группа %d", i)
		}
		return fmt.Sprintf("Armed group %d", i)
	}
	counts = map[string]int{}
	for range n {
		var names []string
		for range 1 + r.IntN(4) {
			names = append(names, name(int(float64(size)*math.Pow(r.Float64(), 3))))
		}
		if r.IntN(10) == 0 {
			names = append(names, names[0])
		}
		for _, nm := range slices.Compact(slices.Sorted(slices.Values(names))) {
			counts[nm]++
		}
		items = append(items, names)
	}
	return items, counts
}

// busiest is the reference: the limit names with the most items, ties by name.
func busiest(counts map[string]int, limit int) []string {
	names := slices.SortedFunc(maps.Keys(counts), func(a, b string) int { return cmp.Or(cmp.Compare(counts[b], counts[a]), strings.Compare(a, b)) })
	return names[:min(limit, len(names))]
}

func quoted(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// TestActorsAndTagsComeOutExactly: against an upstream of 4,000 events
// over 8 pages naming 1,500 actors, and 300 briefings over 3 pages carrying
// 120 tags, every actor and tag kept has exactly its number of events or
// briefings (an event counted once per distinct actor it names), the kept
// ones are the busiest (ties by name), and the others are counted as
// dropped: at the default cap, and at one of 50.
func TestActorsAndTagsComeOutExactly(t *testing.T) {
	events, actors := realisticNames(1, 4000, 1500)
	briefings, tags := realisticNames(2, 300, 120)
	lists := map[string][]string{}
	for i, names := range events {
		lists["conflict"] = append(lists["conflict"], fmt.Sprintf(`{"id":"evt_%d","lat":%d,"lon":%d,"actors":%s,"category":"battles","escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}`, i, i%170-85, i%350-175, quoted(names)))
	}
	for i, names := range briefings {
		lists["briefings"] = append(lists["briefings"], fmt.Sprintf(`{"id":"brf_%d","headline":"h","summary":"s","tags":%s,"published_at":"2026-11-21T06:00:00Z"}`, i, quoted(names)))
	}
	for _, limit := range []int{endpoint.DefaultMaxLabelValues, 50} {
		t.Run(strconv.Itoa(limit), func(t *testing.T) {
			e := newEnv(t, simulator.Config{}, listsAPI(lists, 500), func(c *collector.Config) { c.Endpoint.MaxLabelValues = limit })
			_, body := e.scrape(t, "")
			s, err := promtext.Parse(body)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range []struct {
				metric *endpoint.Metric
				counts map[string]int
			}{{endpoint.ConflictEventsByActor, actors}, {endpoint.BriefingsByTag, tags}} {
				want := promtext.Samples{}
				for _, n := range busiest(m.counts, limit) {
					want[promtext.Key(m.metric.Name, m.metric.Labels[0], n)] = float64(m.counts[n])
				}
				if got := s.Family(m.metric.Name); !maps.Equal(got, want) {
					t.Errorf("%s: %d series, want %d; differ: %v", m.metric.Name, len(got), len(want), diff(got, want))
				}
				if v, _ := s.Get("global_stability_label_values_dropped", "metric", m.metric.Name); v != float64(len(m.counts)-len(want)) {
					t.Errorf("%s: dropped %v, want %d", m.metric.Name, v, len(m.counts)-len(want))
				}
			}
			if v, _ := s.Get("global_stability_conflict_events"); v != 4000 {
				t.Errorf("%v events, want 4000", v)
			}
		})
	}
}

// diff lists up to five series that differ between got and want.
func diff(got, want promtext.Samples) []string {
	var out []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			out = append(out, fmt.Sprintf("%s = %v (present %v), want %v", k, g, ok, v))
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			out = append(out, k+" is not wanted")
		}
	}
	slices.Sort(out)
	return out[:min(5, len(out))]
}

// TestTheSeriesBudgetIsSharedOut: with --collector.max-series below what
// the caps allow, a scrape exports exactly that many series of the API's
// data: every series whose labels are fixed, then each capped metric of
// each endpoint an equal share of the rest (within one), one that needs
// less (five tags) keeping all it has and leaving the rest to the others;
// of each, its busiest (or first) series, and what is left out is counted.
func TestTheSeriesBudgetIsSharedOut(t *testing.T) {
	const budget = 400
	events, _ := realisticNames(3, 600, 1000)
	lists := map[string][]string{}
	for i, names := range events {
		lists["conflict"] = append(lists["conflict"], fmt.Sprintf(`{"id":"evt_%d","lat":%g,"lon":%g,"actors":%s,"category":%q,"escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}`,
			i, -87.5+5*float64(i/72%36), -177.5+5*float64(i%72), quoted(names), names[0]))
	}
	for i := range 300 {
		lists["briefings"] = append(lists["briefings"], fmt.Sprintf(`{"tags":["tag %d"],"published_at":"2026-11-21T06:00:00Z"}`, i%5))
	}
	var indicators []string
	for i := range 300 {
		indicators = append(indicators, fmt.Sprintf(`{"key":"k%03d","value":%d}`, i, i))
	}
	upstream := listsAPI(lists, 1000)
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := strings.CutPrefix(r.URL.Path, "/v1/global-stability/pillar/"); ok {
			fmt.Fprintf(w, `{"pillar":%q,"delta_24h":1,"indicators":[%s],"as_of":"2026-11-22T00:00:00Z"}`, p, strings.Join(indicators, ","))
			return
		}
		upstream.ServeHTTP(w, r)
	})
	scrape := func(maxSeries int) promtext.Samples {
		e := newEnv(t, simulator.Config{}, api, func(c *collector.Config) { c.Endpoint.MaxSeries = maxSeries })
		_, body := e.scrape(t, "")
		s, err := promtext.Parse(body)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	all, within := scrape(1_000_000), scrape(budget)

	// The claims: each capped metric of each endpoint (a pillar's indicators).
	kept, fixed, data := map[string]int{}, 0, 0
	for _, m := range capped() {
		for k := range within.Family(m.Name) {
			claim := m.Name
			if m == endpoint.PillarIndicator {
				claim += strings.Split(k, `pillar="`)[1]
			}
			kept[claim]++
			data++
		}
		before, _ := all.Get("global_stability_label_values_dropped", "metric", m.Name)
		wantDropped := before + float64(len(all.Family(m.Name))-len(within.Family(m.Name)))
		if v, _ := within.Get("global_stability_label_values_dropped", "metric", m.Name); v != wantDropped {
			t.Errorf("%s: %v dropped, want %v (every series left out counted)", m.Name, v, wantDropped)
		}
	}
	for k, v := range all {
		name, _, _ := strings.Cut(k, "{")
		if !isData(name) {
			continue
		}
		if _, ok := within[k]; ok && within[k] != v {
			t.Errorf("%s = %v within the budget, %v without", k, within[k], v)
		}
		if !slices.ContainsFunc(capped(), func(m *endpoint.Metric) bool { return m.Name == name }) {
			fixed++
			if _, ok := within[k]; !ok {
				t.Errorf("%s, whose labels are fixed, is left out", k)
			}
		}
	}
	if data+fixed != budget {
		t.Errorf("%d series of the API's data (%d fixed), want the budget, %d", data+fixed, fixed, budget)
	}
	if kept[endpoint.BriefingsByTag.Name] != 5 {
		t.Errorf("%d tags kept, want all 5: a metric that needs less than its share keeps all", kept[endpoint.BriefingsByTag.Name])
	}
	delete(kept, endpoint.BriefingsByTag.Name)
	if share := (budget - fixed - 5) / len(kept); len(kept) != 8 || slices.Min(slices.Collect(maps.Values(kept))) != share || slices.Max(slices.Collect(maps.Values(kept))) > share+1 {
		t.Errorf("kept %v: want eight claims of %d or %d", kept, share, share+1)
	}
	// Of a count by name, the busiest are kept.
	for _, m := range []*endpoint.Metric{endpoint.ConflictEventsByCategory, endpoint.ConflictEventsByActor} {
		least, most := math.Inf(1), math.Inf(-1)
		for k, v := range all.Family(m.Name) {
			if _, ok := within[k]; ok {
				least = min(least, v)
			} else {
				most = max(most, v)
			}
		}
		if least < most {
			t.Errorf("%s: a series of %v kept, one of %v left out", m.Name, least, most)
		}
	}
}

// capped are the capped metrics of the descriptions.
func capped() []*endpoint.Metric {
	var out []*endpoint.Metric
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			if m.Capped && !slices.Contains(out, m) {
				out = append(out, m)
			}
		}
	}
	return out
}

// isData reports whether name is a metric of the API's data.
func isData(name string) bool {
	for _, e := range endpoint.All() {
		if slices.ContainsFunc(e.Metrics(), func(m *endpoint.Metric) bool { return m.Name == name }) {
			return true
		}
	}
	return false
}
