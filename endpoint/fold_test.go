// SPDX-License-Identifier: Apache-2.0

package endpoint_test

import (
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// These tests hold each fold and each boundary of the rules to its exact
// value, in this package (the collector's tests reach them too, through a
// whole scrape).

func ev(id string, lat, lon float64, category string, escalation float64, occurred string) string {
	return fmt.Sprintf(`{"id":%q,"lat":%v,"lon":%v,"actors":[],"category":%q,"escalation":%v,"occurred_at":%q}`, id, lat, lon, category, escalation, occurred)
}

func conflictPage(events ...string) string {
	return `{"events":[` + strings.Join(events, ",") + `],"next_cursor":null}`
}

func fetchWith(t *testing.T, e *endpoint.Endpoint, c endpoint.Config, body string) endpoint.Result {
	t.Helper()
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	})
	r, _, err := e.Fetch(context.Background(), newClient(t, srv.URL), c)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestConflictFolds: count, max, mean, newest, per category and per cell,
// exactly, with the largest value neither first nor last.
func TestConflictFolds(t *testing.T) {
	r, err := fetch(t, endpoint.Conflict, conflictPage(
		ev("a", 0.1, 0.1, "riots", 0.25, "2026-11-22T01:00:00Z"),
		ev("b", -0.1, -0.1, "riots", 0.75, "2026-11-22T03:00:00Z"),
		ev("c", 90, 180, "battles", -0.5, "2026-11-22T02:00:00Z"),
		ev("d", 4.9, 4.9, "protests", 0.5, "2026-11-21T00:00:00Z"),
	))
	if err != nil {
		t.Fatal(err)
	}
	got := samples(r)
	want := map[string]float64{
		"global_stability_conflict_events{}":                         4,
		"global_stability_conflict_escalation_max{}":                 0.75,
		"global_stability_conflict_escalation_mean{}":                0.25,
		"global_stability_conflict_latest_event_timestamp_seconds{}": float64(time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC).Unix()),
		"global_stability_conflict_events_by_category{riots}":        2,
		"global_stability_conflict_events_by_category{battles}":      1,
		"global_stability_conflict_events_by_category{protests}":     1,
		// 5° cells, labelled with their centres; (0.1, 0.1) and (4.9, 4.9)
		// share one, (-0.1, -0.1) is the cell below and left; the North
		// Pole belongs to the top row, 180° to -180°.
		"global_stability_conflict_events_by_cell{2.5,2.5}":             2,
		"global_stability_conflict_escalation_max_by_cell{2.5,2.5}":     0.5,
		"global_stability_conflict_events_by_cell{-2.5,-2.5}":           1,
		"global_stability_conflict_escalation_max_by_cell{-2.5,-2.5}":   0.75,
		"global_stability_conflict_events_by_cell{87.5,-177.5}":         1,
		"global_stability_conflict_escalation_max_by_cell{87.5,-177.5}": -0.5,
	}
	for k, v := range want {
		if g, ok := got[k]; !ok || math.Abs(g-v) > 1e-12 {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d series, want %d: %v", len(got), len(want), got)
	}
	// The first event the highest: max must not simply keep the last.
	r, _ = fetch(t, endpoint.Conflict, conflictPage(ev("a", 1, 1, "x", 0.9, "2026-11-22T01:00:00Z"), ev("b", 1, 1, "x", 0.1, "2026-11-22T00:00:00Z")))
	if got := samples(r); got["global_stability_conflict_escalation_max{}"] != 0.9 || got["global_stability_conflict_latest_event_timestamp_seconds{}"] != float64(time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC).Unix()) {
		t.Errorf("max and newest with the first event the highest: %v", got)
	}
	// No events: the extremes and the mean are absent, the counts 0.
	r, _ = fetch(t, endpoint.Conflict, conflictPage())
	if got := samples(r); len(got) != 1 || got["global_stability_conflict_events{}"] != 0 {
		t.Errorf("no events: %v, want only a count of 0", got)
	}
}

// TestCapsKeepTheBusiestAndCountTheRest: with a cap of 2, the two busiest
// categories and cells are kept, ties in name order, and every other one
// is counted as dropped, including the names past the tracking limit (ten
// times the cap).
func TestCapsKeepTheBusiestAndCountTheRest(t *testing.T) {
	var events []string
	add := func(n int, category string, lat float64) {
		for range n {
			events = append(events, ev(fmt.Sprint(len(events)), lat, 1, category, 0.5, "2026-11-22T00:00:00Z"))
		}
	}
	add(3, "a", 1)
	add(2, "c", 11)
	add(2, "b", 21)
	for i := range 25 { // 25 more names, one event each: 28 in all, 20 tracked
		add(1, fmt.Sprintf("z%02d", i), 31+float64(i%3)*10)
	}
	c := config
	c.MaxLabelValues = 2
	r := fetchWith(t, endpoint.Conflict, c, conflictPage(events...))
	got := samples(r)
	for _, k := range []string{"global_stability_conflict_events_by_category{a}", "global_stability_conflict_events_by_category{b}"} {
		if _, ok := got[k]; !ok {
			t.Errorf("%s not kept: %v", k, got)
		}
	}
	if _, ok := got["global_stability_conflict_events_by_category{c}"]; ok {
		t.Error("c kept: a tie of b and c goes to b, by name")
	}
	if d := r.Dropped["global_stability_conflict_events_by_category"]; d != 26 {
		t.Errorf("categories dropped %d, want 26 (28 names, 2 kept)", d)
	}
	cells := 0
	for k := range got {
		if strings.HasPrefix(k, "global_stability_conflict_events_by_cell{") {
			cells++
		}
	}
	if cells != 2 || r.Dropped["global_stability_conflict_events_by_cell"] != 4 || r.Dropped["global_stability_conflict_escalation_max_by_cell"] != 4 {
		t.Errorf("%d cells kept, dropped %v; want 2 kept of 6", cells, r.Dropped)
	}
	if got["global_stability_conflict_events{}"] != float64(len(events)) {
		t.Errorf("the count is capped too: %v", got["global_stability_conflict_events{}"])
	}
}

// TestActorsAndTags: an event counts once per distinct actor it names, a
// briefing once per tag; a bad name costs itself only, a missing, null or
// non-array list costs its item's names only, and both are counted under
// the list's field; names are exported as the API writes them.
func TestActorsAndTags(t *testing.T) {
	withActors := func(id, actors string) string {
		return strings.Replace(ev(id, 1, 1, "riots", 0.5, "2026-11-22T00:00:00Z"), `"actors":[]`, `"actors":`+actors, 1)
	}
	many := `["a"`
	for i := range 40 {
		many += fmt.Sprintf(`,"m%02d"`, i)
	}
	r, err := fetch(t, endpoint.Conflict, conflictPage(
		withActors("1", `["Hamas","Israel Defense Forces","Hamas"]`),
		withActors("2", `["Israel Defense Forces","Forças Armadas de Defesa de Moçambique","\u0041\u00e9"]`),
		withActors("3", `["Hamas",7,"",null,["x"],"`+strings.Repeat("n", 129)+`","`+testKey+`"]`),
		withActors("4", `"Hamas"`),
		withActors("5", `null`),
		strings.Replace(withActors("6", `[]`), `"actors":[],`, "", 1),
		withActors("7", `{"name":"Hamas"}`),
		withActors("8", many+`]`),
		strings.Replace(withActors("9", `["left out with its event"]`), `"lat":1`, `"lat":91`, 1),
	))
	if err != nil {
		t.Fatal(err)
	}
	got := samples(r)
	want := map[string]float64{
		"global_stability_conflict_events_by_actor{Hamas}":                                  2,
		"global_stability_conflict_events_by_actor{Israel Defense Forces}":                  2,
		"global_stability_conflict_events_by_actor{Forças Armadas de Defesa de Moçambique}": 1,
		"global_stability_conflict_events_by_actor{Aé}":                                     1,
		"global_stability_conflict_events_by_actor{a}":                                      1,
	}
	for i := range 31 { // the first 32 distinct names of an event, a the first
		want[fmt.Sprintf("global_stability_conflict_events_by_actor{m%02d}", i)] = 1
	}
	actors := 0
	for k, v := range got {
		if strings.HasPrefix(k, "global_stability_conflict_events_by_actor{") {
			actors++
			if want[k] != v {
				t.Errorf("%s = %v, want %v", k, v, want[k])
			}
		}
	}
	if actors != len(want) {
		t.Errorf("%d actors exported, want %d: %v", actors, len(want), got)
	}
	// Every event but the one with lat 91 counts in the other folds.
	if got["global_stability_conflict_events{}"] != 8 || got["global_stability_conflict_events_by_category{riots}"] != 8 {
		t.Errorf("events %v, riots %v; want 8: a bad list of actors costs its names only", got["global_stability_conflict_events{}"], got["global_stability_conflict_events_by_category{riots}"])
	}
	// Six bad names in event 3, four events without a list, nine names
	// past 32 in event 8; the event with lat 91 counts under events alone.
	if want := map[string]int{"actors": 6 + 4 + 9, "events": 1}; !maps.Equal(r.Invalid.Counts, want) {
		t.Errorf("invalid %v, want %v", r.Invalid.Counts, want)
	}

	r, err = fetch(t, endpoint.BriefingsList, `{"briefings":[
		{"tags":["stale"],"tags":["daily","cyber"],"published_at":"2026-11-21T06:00:00Z"},
		{"tags":["daily","macro","daily"],"published_at":"2026-11-20T06:00:00Z"},
		{"tags":"daily","published_at":"2026-11-19T06:00:00Z"},
		{"published_at":"2026-11-18T06:00:00Z"}],"next_cursor":null}`)
	// The first briefing gives tags twice: it is left out (a key read
	// twice); a tag repeated in one list counts once.
	want = map[string]float64{
		"global_stability_briefings{}": 3, "global_stability_briefing_latest_published_timestamp_seconds{}": float64(time.Date(2026, 11, 20, 6, 0, 0, 0, time.UTC).Unix()),
		"global_stability_briefings_by_tag{daily}": 1, "global_stability_briefings_by_tag{macro}": 1,
	}
	if got := samples(r); err != nil || !maps.Equal(got, want) || !maps.Equal(r.Invalid.Counts, map[string]int{"briefings": 1, "tags": 2}) {
		t.Errorf("%v, invalid %v, %v; want %v, 1 invalid briefing and 2 invalid tags", got, r.Invalid.Counts, err, want)
	}
}

// TestANameIsOneNameHoweverSpelled: a name counts as one whether its
// token is written plainly or with escapes, in either order, and a name
// holding a backslash is not the one its token would spell unescaped
// (`"a\\b"` is a\b; `"a\b"` is an a and a backspace): a repeated name
// is found by its token, and must still be found by its text.
func TestANameIsOneNameHoweverSpelled(t *testing.T) {
	var events []string
	for i, token := range []string{`"riots"`, `"r\u0069ots"`, `"\u0070rotests"`, `"protests"`, `"riots"`, `"a\\b"`, `"a\b"`, `"a\\b"`} {
		events = append(events, strings.Replace(ev(fmt.Sprint(i), 1, 1, "x", 0.5, "2026-11-22T00:00:00Z"), `"category":"x"`, `"category":`+token, 1))
	}
	r, err := fetch(t, endpoint.Conflict, conflictPage(events...))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for k, v := range samples(r) {
		if name, ok := strings.CutPrefix(k, "global_stability_conflict_events_by_category{"); ok {
			got[strings.TrimSuffix(name, "}")] = v
		}
	}
	// The names with a backslash or a backspace do not read plainly: each
	// series is left out, counted under the list.
	if want := map[string]float64{"riots": 3, "protests": 2}; !maps.Equal(got, want) || !maps.Equal(r.Invalid.Counts, map[string]int{"events": 2}) {
		t.Errorf("by category %v, invalid %v; want %v and 2 invalid series", got, r.Invalid.Counts, want)
	}
}

// TestIndicatorsFirstKeys: the first keys in the API's order, up to the
// cap; a repeated key counts as dropped and keeps its first value.
func TestIndicatorsFirstKeys(t *testing.T) {
	c := config
	c.MaxLabelValues = 2
	r := fetchWith(t, endpoint.Drilldown("cyber"), c, `{"pillar":"cyber","delta_24h":1,"as_of":"2026-11-22T00:00:00Z","indicators":[
		{"key":"k1","value":1},{"key":"k1","value":9},{"key":"k2","value":2},{"key":"k3","value":3}]}`)
	got := samples(r)
	if got["global_stability_pillar_indicator{cyber,k1}"] != 1 || got["global_stability_pillar_indicator{cyber,k2}"] != 2 {
		t.Errorf("indicators %v", got)
	}
	if _, ok := got["global_stability_pillar_indicator{cyber,k3}"]; ok {
		t.Error("k3 kept past the cap")
	}
	if d := r.Dropped["global_stability_pillar_indicator"]; d != 2 {
		t.Errorf("dropped %d, want 2 (the repeat and k3)", d)
	}
}

// TestBoundaries: each limit of the rules, on both sides.
func TestBoundaries(t *testing.T) {
	future := func(d time.Duration) string { return fixedNow.Add(d).Format(time.RFC3339) }
	for _, tc := range []struct {
		name  string
		e     *endpoint.Endpoint
		body  string
		field string // counted invalid, or "" for valid
	}{
		{"lat 90", endpoint.Conflict, conflictPage(ev("a", 90, 0, "x", 0, "2026-11-22T00:00:00Z")), ""},
		{"lat -90.000001", endpoint.Conflict, conflictPage(ev("a", -90.000001, 0, "x", 0, "2026-11-22T00:00:00Z")), "events"},
		{"lon -180", endpoint.Conflict, conflictPage(ev("a", 0, -180, "x", 0, "2026-11-22T00:00:00Z")), ""},
		{"lon 180.000001", endpoint.Conflict, conflictPage(ev("a", 0, 180.000001, "x", 0, "2026-11-22T00:00:00Z")), "events"},
		{"occurred an hour ahead", endpoint.Conflict, conflictPage(ev("a", 0, 0, "x", 0, future(time.Hour))), ""},
		{"occurred an hour and a second ahead", endpoint.Conflict, conflictPage(ev("a", 0, 0, "x", 0, future(time.Hour+time.Second))), "events"},
		{"a category of 128 bytes", endpoint.Conflict, conflictPage(ev("a", 0, 0, strings.Repeat("c", 128), 0, "2026-11-22T00:00:00Z")), ""},
		{"a category of 129 bytes", endpoint.Conflict, conflictPage(ev("a", 0, 0, strings.Repeat("c", 129), 0, "2026-11-22T00:00:00Z")), "events"},
		{"an escaped category of 128 bytes", endpoint.Conflict, conflictPage(`{"id":"a","lat":0,"lon":0,"actors":[],"category":"\u0063` + strings.Repeat("c", 127) + `","escalation":0,"occurred_at":"2026-11-22T00:00:00Z"}`), ""},
		{"an escaped category of 129 bytes", endpoint.Conflict, conflictPage(`{"id":"a","lat":0,"lon":0,"actors":[],"category":"\u0063` + strings.Repeat("c", 128) + `","escalation":0,"occurred_at":"2026-11-22T00:00:00Z"}`), "events"},
		{"a number of 1024 characters", endpoint.Conflict, conflictPage(`{"id":"a","lat":0,"lon":0,"actors":[],"category":"x","escalation":0.` + strings.Repeat("1", 1022) + `,"occurred_at":"2026-11-22T00:00:00Z"}`), ""},
		{"a number of 1025 characters", endpoint.Conflict, conflictPage(`{"id":"a","lat":0,"lon":0,"actors":[],"category":"x","escalation":0.` + strings.Repeat("1", 1023) + `,"occurred_at":"2026-11-22T00:00:00Z"}`), "events"},
		{"a trend word of 128 bytes", endpoint.Overview, `{"score":1,"trend":"` + strings.Repeat("t", 128) + `","pillars":{"conflict":1,"cyber":1,"supply_chain":1,"macro":1},"as_of":"2026-11-22T00:00:00Z"}`, ""},
		{"a trend word of 129 bytes", endpoint.Overview, `{"score":1,"trend":"` + strings.Repeat("t", 129) + `","pillars":{"conflict":1,"cyber":1,"supply_chain":1,"macro":1},"as_of":"2026-11-22T00:00:00Z"}`, "trend"},
	} {
		r, err := fetch(t, tc.e, tc.body)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		for field, n := range r.Invalid.Counts {
			if n > 0 && field != tc.field {
				t.Errorf("%s: %d invalid %s (%s), want none", tc.name, n, field, r.Invalid.First)
			}
		}
		if tc.field != "" && r.Invalid.Counts[tc.field] != 1 {
			t.Errorf("%s: invalid %v, want one %s", tc.name, r.Invalid.Counts, tc.field)
		}
	}
}

// TestCursorLength: a next_cursor of 4096 bytes is followed, one of 4097
// fails the walk.
func TestCursorLength(t *testing.T) {
	for _, n := range []int{4096, 4097} {
		cursor := strings.Repeat("k", n)
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			if r.URL.Query().Get("cursor") != "" {
				fmt.Fprint(w, `{"events":[],"next_cursor":null}`)
				return
			}
			fmt.Fprintf(w, `{"events":[],"next_cursor":%q}`, cursor)
		})
		_, _, err := endpoint.Conflict.Fetch(context.Background(), newClient(t, srv.URL), config)
		if (err == nil) != (n == 4096) {
			t.Errorf("a cursor of %d bytes: err %v", n, err)
		}
	}
}
