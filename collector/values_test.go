// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/simulator"
)

const okOverview = `{"score":50,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`

func okDrilldown(p string) string {
	return `{"pillar":"` + p + `","score":1,"delta_24h":0.5,"indicators":[{"key":"a","value":1},{"key":"b","value":2}],"as_of":"2026-11-22T00:00:00Z"}`
}

func conflictEvent(id string, lat, lon float64, category string, escalation float64) string {
	return fmt.Sprintf(`{"id":%q,"lat":%g,"lon":%g,"actors":["x"],"category":%q,"escalation":%g,"occurred_at":"2026-11-22T00:00:00Z"}`, id, lat, lon, category, escalation)
}

// TestInvalidValuesAreLeftOutNotFatal: one bad value costs its own series
// only. Its endpoint still succeeds, every other value is exported, and
// global_stability_invalid_values says what was left out.
func TestInvalidValuesAreLeftOutNotFatal(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		bodies := healthyBodies(okDrilldown, strings.Replace(okOverview, `"trend":"stable"`, `"trend":null`, 1))
		bodies["global-stability/pillar/cyber"] = `{"pillar":"cyber","score":null,"delta_24h":0.5,"indicators":[{"key":"a","value":1},{"key":"b","value":null},{"key":"c","value":3}],"as_of":"2026-11-22T00:00:00Z"}`
		bodies["conflict"] = `{"events":[` + strings.Join([]string{
			conflictEvent("evt_1", 10, 10, "battles", 0.5),
			conflictEvent("evt_2", 91, 10, "battles", 0.5),                                                       // no such latitude
			conflictEvent("evt_3", 10, -180.01, "battles", 0.5),                                                  // no such longitude
			strings.Replace(conflictEvent("evt_4", 10, 10, "protests", 0.25), `"actors":["x"]`, `"actors":7`, 1), // actors: not exported
		}, ",") + `],"next_cursor":null}`
		bodies["summaries"] = `{"summary":null,"as_of":"2026-11-22T00:00:00Z"}`
		e := newEnv(t, simulator.Config{}, fakeAPI(bodies))
		for range 3 {
			_, body := e.scrape(t, "")
			s := series(t, body)
			if s["global_stability_up"] != 1 {
				t.Fatalf("invalid values must not fail an endpoint:\n%s", body)
			}
			want := map[string]float64{
				"global_stability_score": 50,
				`global_stability_invalid_values{endpoint="global-stability",field="trend"}`:                   1,
				`global_stability_invalid_values{endpoint="global-stability",field="score"}`:                   0,
				`global_stability_pillar_delta_24h{pillar="cyber"}`:                                            0.5,
				`global_stability_pillar_indicator{indicator="a",pillar="cyber"}`:                              1,
				`global_stability_pillar_indicator{indicator="c",pillar="cyber"}`:                              3,
				`global_stability_invalid_values{endpoint="global-stability/pillar/cyber",field="indicators"}`: 1,
				`global_stability_invalid_values{endpoint="global-stability/pillar/cyber",field="delta_24h"}`:  0,
				"global_stability_conflict_events":                                                             2,
				`global_stability_conflict_events_by_category{category="protests"}`:                            1,
				`global_stability_invalid_values{endpoint="conflict",field="events"}`:                          2,
				`global_stability_invalid_values{endpoint="summaries",field="as_of"}`:                          0,
			}
			for k, v := range want {
				if got, ok := s[k]; !ok || got != v {
					t.Errorf("%s = %v (present %v), want %v", k, got, ok, v)
				}
			}
			if hasPrefix(s, "global_stability_trend") || hasPrefix(s, `global_stability_pillar_indicator{indicator="b",pillar="cyber"}`) {
				t.Errorf("an invalid value was exported:\n%s", body)
			}
		}
		// Said once per change, not on every scrape: three scrapes, three
		// endpoints with invalid values, three lines.
		if n := strings.Count(e.logs.String(), "invalid values"); n != 3 {
			t.Errorf("%d log lines about invalid values over three scrapes, want one per endpoint:\n%s", n, e.logs)
		}
	})
}

// TestNoisyPillarOnlyHarmsItself: a drilldown with a flood of indicators
// keeps its first --collector.max-label-values; the other pillars keep
// all of theirs, and the drops are logged once.
func TestNoisyPillarOnlyHarmsItself(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		var flood []string
		for i := range 5000 {
			flood = append(flood, fmt.Sprintf(`{"key":"k%d","value":%d}`, i, i))
		}
		bodies := healthyBodies(okDrilldown, okOverview)
		bodies["global-stability/pillar/cyber"] = `{"pillar":"cyber","delta_24h":1,"indicators":[` + strings.Join(flood, ",") + `],"as_of":"2026-11-22T00:00:00Z"}`
		e := newEnv(t, simulator.Config{}, fakeAPI(bodies), func(c *collector.Config) { c.Endpoint.MaxLabelValues = 10 })
		for range 3 {
			_, body := e.scrape(t, "")
			s := series(t, body)
			if n := countPrefix(s, "global_stability_pillar_indicator{"); n != 10+3*2 {
				t.Errorf("%d indicator series, want cyber's first 10 and the other pillars' 2 each", n)
			}
			if _, ok := s[`global_stability_pillar_indicator{indicator="k9",pillar="cyber"}`]; !ok {
				t.Error("cyber's first ten keys must be kept")
			}
			if s[`global_stability_label_values_dropped{metric="global_stability_pillar_indicator"}`] != 4990 {
				t.Errorf("dropped %v, want 4990", s[`global_stability_label_values_dropped{metric="global_stability_pillar_indicator"}`])
			}
		}
		if n := strings.Count(e.logs.String(), "series left out"); n != 1 {
			t.Errorf("%d warnings over three scrapes, want one:\n%s", n, e.logs)
		}
	})
}

// TestTimestampsAreExactOrAbsent: any instant of years 0000-9999 is
// exported exactly, however far past (Go's zero time was once 1754), so
// the staleness alerts fire; one more than an hour ahead is left out, since
// it would keep them quiet.
func TestTimestampsAreExactOrAbsent(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		tests := []struct {
			asOf  string
			want  float64
			valid bool
		}{
			{"0001-01-01T00:00:00Z", -62135596800, true},
			{"1600-01-01T00:00:00Z", -11676096000, true},
			{"1969-12-31T23:59:59.5Z", -0.5, true},
			{"2026-11-22T00:00:00.25Z", 1795305600.25, true},
			{"2099-01-01T00:00:00Z", 0, false},
			{"9999-12-31T23:59:59Z", 0, false},
		}
		for _, tt := range tests {
			body := `{"summary":"s","as_of":"` + tt.asOf + `"}`
			e := newEnv(t, simulator.Config{}, fakeAPI(map[string]string{"global-stability": okOverview, "summaries": body}), func(c *collector.Config) {
				c.Endpoints = []*endpoint.Endpoint{endpoint.Overview, endpoint.Summary}
			})
			_, text := e.scrape(t, "")
			s := series(t, text)
			got, ok := s[`global_stability_as_of_timestamp_seconds{endpoint="summaries"}`]
			if ok != tt.valid || (ok && got != tt.want) {
				t.Errorf("as_of %s: exported %v (present %v), want %v (present %v)", tt.asOf, got, ok, tt.want, tt.valid)
			}
			if s[`global_stability_scrape_success{endpoint="summaries"}`] != 1 || (s[`global_stability_invalid_values{endpoint="summaries",field="as_of"}`] == 1) == tt.valid {
				t.Errorf("as_of %s: want success 1 and the invalid count to say whether it was left out:\n%s", tt.asOf, text)
			}
		}
	})
}

// TestEscalationAggregatesStayFinite: two escalations of 1e308 have a mean
// of 1e308, not +Inf.
func TestEscalationAggregatesStayFinite(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		bodies := healthyBodies(okDrilldown, okOverview)
		bodies["conflict"] = `{"events":[` + conflictEvent("evt_1", 1, 1, "a", 1e308) + `,` + conflictEvent("evt_2", 1, 1, "a", 1e308) + `,` + conflictEvent("evt_3", 1, 1, "a", -1.7e308) + `],"next_cursor":null}`
		e := newEnv(t, simulator.Config{}, fakeAPI(bodies))
		_, body := e.scrape(t, "")
		s := series(t, body)
		mean := s["global_stability_conflict_escalation_mean"]
		if math.IsInf(mean, 0) || math.IsNaN(mean) || math.Abs(mean-(2e308-1.7e308)/3) > 1e294 {
			t.Errorf("mean = %v, want about %v", mean, (2e308-1.7e308)/3)
		}
		if s["global_stability_conflict_escalation_max"] != 1e308 {
			t.Errorf("max = %v", s["global_stability_conflict_escalation_max"])
		}
	})
}

// TestRepeatedEventsCountOnce: a list that shifted between two pages shows
// an event on both; it counts once everywhere.
func TestRepeatedEventsCountOnce(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		pages := map[string]string{
			"":   `{"events":[` + conflictEvent("evt_1", 1, 1, "a", 0.5) + `,` + conflictEvent("evt_2", 1, 1, "a", 0.5) + `],"next_cursor":"p2"}`,
			"p2": `{"events":[` + conflictEvent("evt_2", 1, 1, "a", 0.5) + `,` + conflictEvent("evt_3", 1, 1, "b", 0.5) + `],"next_cursor":null}`,
		}
		api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if strings.HasSuffix(r.URL.Path, "/conflict") {
				fmt.Fprint(w, pages[r.URL.Query().Get("cursor")])
				return
			}
			fakeAPI(map[string]string{"global-stability": okOverview}).ServeHTTP(w, r)
		})
		e := newEnv(t, simulator.Config{}, api, func(c *collector.Config) { c.Endpoints = []*endpoint.Endpoint{endpoint.Overview, endpoint.Conflict} })
		_, body := e.scrape(t, "")
		s := series(t, body)
		if s["global_stability_conflict_events"] != 3 || s[`global_stability_conflict_events_by_category{category="a"}`] != 2 {
			t.Errorf("want 3 events, 2 of category a:\n%s", body)
		}
	})
}

// TestBusiestLabelSetsAreKept: over the cap, the categories and cells with
// the most events stay, wherever they came in the list.
func TestBusiestLabelSetsAreKept(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		var events []string
		add := func(n int, category string, lat float64) {
			for range n {
				events = append(events, conflictEvent(fmt.Sprintf("evt_%d", len(events)), lat, 1, category, 0.5))
			}
		}
		add(1, "first_seen", -80)
		add(5, "busiest", 10)
		add(3, "second", 40)
		add(1, "rare", 70)
		bodies := healthyBodies(okDrilldown, okOverview)
		bodies["conflict"] = `{"events":[` + strings.Join(events, ",") + `],"next_cursor":null}`
		e := newEnv(t, simulator.Config{}, fakeAPI(bodies), func(c *collector.Config) { c.Endpoint.MaxLabelValues = 2 })
		_, body := e.scrape(t, "")
		s := series(t, body)
		for _, k := range []string{
			`global_stability_conflict_events_by_category{category="busiest"}`,
			`global_stability_conflict_events_by_category{category="second"}`,
			`global_stability_conflict_events_by_cell{lat="12.5",lon="2.5"}`,
			`global_stability_conflict_events_by_cell{lat="42.5",lon="2.5"}`,
		} {
			if _, ok := s[k]; !ok {
				t.Errorf("%s is missing: the busiest must be kept\n%s", k, body)
			}
		}
		if n := countPrefix(s, "global_stability_conflict_events_by_category{"); n != 2 || s["global_stability_conflict_events"] != 10 {
			t.Errorf("%d categories kept, %v events; want 2 and all 10 counted", n, s["global_stability_conflict_events"])
		}
		if s[`global_stability_label_values_dropped{metric="global_stability_conflict_events_by_cell"}`] != 2 {
			t.Errorf("cells dropped = %v, want 2", s[`global_stability_label_values_dropped{metric="global_stability_conflict_events_by_cell"}`])
		}
	})
}

// TestLastingConditionsAreLoggedWhenTheyStartAndEnd: invalid values and a
// label cap each log one warning when they start, nothing while they last,
// and one info line when they end.
func TestLastingConditionsAreLoggedWhenTheyStartAndEnd(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		var flood []string
		for i := range 20 {
			flood = append(flood, fmt.Sprintf(`{"key":"k%d","value":%d}`, i, i))
		}
		bad := healthyBodies(okDrilldown, `{"score":"x","trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`)
		bad["global-stability/pillar/cyber"] = `{"pillar":"cyber","delta_24h":1,"indicators":[` + strings.Join(flood, ",") + `],"as_of":"2026-11-22T00:00:00Z"}`
		good := healthyBodies(okDrilldown, okOverview)
		var mu sync.Mutex
		bodies := bad
		api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			b := bodies
			mu.Unlock()
			fakeAPI(b).ServeHTTP(w, r)
		})
		e := newEnv(t, simulator.Config{}, api, func(c *collector.Config) { c.Endpoint.MaxLabelValues = 10 })
		lines := func() []string {
			return strings.Split(strings.TrimSpace(e.logs.String()), "\n")
		}
		e.scrape(t, "")
		e.scrape(t, "")
		if got := lines(); len(got) != 2 || !strings.Contains(got[0]+got[1], "invalid values") || !strings.Contains(got[0]+got[1], "series left out") || strings.Count(got[0]+got[1], "level=warn") != 2 {
			t.Fatalf("two scrapes with both conditions: want two warnings, got %q", got)
		}
		mu.Lock()
		bodies = good
		mu.Unlock()
		e.scrape(t, "")
		e.scrape(t, "")
		got := lines()
		if len(got) != 4 {
			t.Fatalf("after both ended: want two more lines, got %q", got)
		}
		for _, line := range got[2:] {
			ended := strings.Contains(line, "valid again") || strings.Contains(line, "no series left out")
			if !strings.Contains(line, "level=info") || !ended {
				t.Errorf("an end is news at info: %q", line)
			}
		}
	})
}

// TestNamesAreTrackedUpToTheirBound: a count by name (categories, and
// the actors of a list of them) counts its first max(10 × the cap, 10,000)
// distinct names exactly, so that the busiest of them is kept however late
// it first appears; a later one, however busy, is counted in the total
// only (tracking every name a hostile page invents would cost unbounded
// memory) and as dropped.
func TestNamesAreTrackedUpToTheirBound(t *testing.T) {
	for _, tc := range []struct {
		cap   int
		field string
	}{{1, "category"}, {1100, "category"}, {1, "actors"}, {1100, "actors"}} {
		t.Run(fmt.Sprintf("%s/cap %d", tc.field, tc.cap), func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				bound := max(10*tc.cap, 10_000)
				named := func(id, name string) string {
					if tc.field == "actors" {
						return strings.Replace(conflictEvent(id, 10, 10, "c", 0.5), `"actors":["x"]`, `"actors":[`+strconv.Quote(name)+`]`, 1)
					}
					return strings.Replace(conflictEvent(id, 10, 10, name, 0.5), `"actors":["x"]`, `"actors":[]`, 1)
				}
				var events []string
				for i := range bound - 1 {
					events = append(events, named(fmt.Sprintf("evt_%d", i), fmt.Sprintf("early_%d", i)))
				}
				for i := range 10 { // the last name tracked, then one past the bound
					events = append(events, named(fmt.Sprintf("late_%d", i), []string{"last_tracked", "late_but_busy"}[i/5]))
				}
				bodies := healthyBodies(okDrilldown, okOverview)
				bodies["conflict"] = `{"events":[` + strings.Join(events, ",") + `],"next_cursor":null}`
				e := newEnv(t, simulator.Config{}, fakeAPI(bodies), func(c *collector.Config) { c.Endpoint.MaxLabelValues = tc.cap })
				_, body := e.scrape(t, "")
				s := series(t, body)
				metric := map[string]string{"category": "global_stability_conflict_events_by_category", "actors": "global_stability_conflict_events_by_actor"}[tc.field]
				label := metric + `{` + map[string]string{"category": "category", "actors": "actor"}[tc.field]
				if s[label+`="last_tracked"}`] != 5 {
					t.Errorf("the %dth name, the busiest, has %v, want 5", bound, s[label+`="last_tracked"}`])
				}
				if _, ok := s[label+`="late_but_busy"}`]; ok {
					t.Errorf("a name first seen past the first %d was tracked", bound)
				}
				if n := countPrefix(s, metric+"{"); n != tc.cap || s["global_stability_conflict_events"] != float64(bound+9) {
					t.Errorf("%d names, %v events; want %d and all %d counted", n, s["global_stability_conflict_events"], tc.cap, bound+9)
				}
				// The tracked names beyond the cap, and the one never tracked.
				if got := s[`global_stability_label_values_dropped{metric="`+metric+`"}`]; got != float64(bound-tc.cap+1) {
					t.Errorf("dropped = %v, want %d", got, bound-tc.cap+1)
				}
			})
		})
	}
}
