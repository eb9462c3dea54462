// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const key = "sim-key"

var t0 = time.Date(2026, 11, 22, 4, 37, 12, 0, time.UTC)

func get(t *testing.T, s *Simulator, target string, auth bool) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, target, nil)
	if auth {
		r.Header.Set("Authorization", "Bearer "+key)
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

func decode[T any](t *testing.T, w *httptest.ResponseRecorder) T {
	t.Helper()
	if w.Code != http.StatusOK {
		t.Fatalf("status %d, body %s", w.Code, w.Body)
	}
	var v T
	if err := json.Unmarshal(w.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
	return v
}

func at(now time.Time, cfg Config) *Simulator {
	cfg.Key = key
	cfg.Now = func() time.Time { return now }
	return New(cfg)
}

func TestDeterministicForSeedAndTime(t *testing.T) {
	for _, path := range []string{"/v1/global-stability", "/v1/global-stability/pillar/macro", "/v1/conflict", "/v1/briefings", "/v1/summaries"} {
		a := get(t, at(t0, Config{Seed: 3}), path, true).Body.String()
		b := get(t, at(t0, Config{Seed: 3}), path, true).Body.String()
		c := get(t, at(t0, Config{Seed: 4}), path, true).Body.String()
		if a != b {
			t.Errorf("%s differs between two simulators with one seed and time", path)
		}
		if a == c {
			t.Errorf("%s is the same for seeds 3 and 4", path)
		}
	}
}

func TestScoresMoveSlowlyAndStayBounded(t *testing.T) {
	moved := 0
	prev := decode[overviewJSON](t, get(t, at(t0, Config{}), "/v1/global-stability", true))
	for m := 1; m <= 3*24*60; m += 7 {
		o := decode[overviewJSON](t, get(t, at(t0.Add(time.Duration(m)*time.Minute), Config{}), "/v1/global-stability", true))
		for name, s := range o.Pillars {
			if s < 0 || s > 100 {
				t.Fatalf("pillar %s = %v at minute %d, outside 0–100", name, s, m)
			}
			if d := math.Abs(s - prev.Pillars[name]); d > 15 {
				t.Errorf("pillar %s jumped by %.1f in 7 minutes", name, d)
			}
			if s != prev.Pillars[name] {
				moved++
			}
		}
		prev = o
	}
	if moved < 100 {
		t.Errorf("pillar scores changed only %d times over three days", moved)
	}
}

func TestCompositeTrendAndDeltaAreConsistent(t *testing.T) {
	s := at(t0, Config{})
	o := decode[overviewJSON](t, get(t, s, "/v1/global-stability", true))
	weighted := 0.0
	for _, p := range pillarModels {
		weighted += p.weight * o.Pillars[p.name]
	}
	if math.Abs(weighted-o.Score) > 0.6 {
		t.Errorf("composite %v, weighted pillars %.2f", o.Score, weighted)
	}
	if o.Score != math.Round(o.Score) {
		t.Errorf("composite %v is not a whole number", o.Score)
	}
	if o.AsOf != "2026-11-22T04:37:00Z" {
		t.Errorf("as_of = %s, want the minute's start", o.AsOf)
	}
	hourAgo := decode[overviewJSON](t, get(t, at(t0.Add(-time.Hour), Config{}), "/v1/global-stability", true))
	switch d := s.world.composite(minute(t0)) - s.world.composite(minute(t0)-60); {
	case d >= trendThreshold && o.Trend != "deteriorating",
		d <= -trendThreshold && o.Trend != "improving",
		math.Abs(d) < trendThreshold && o.Trend != "stable":
		t.Errorf("trend %q for an hourly change of %.2f (an hour ago %v, now %v)", o.Trend, d, hourAgo.Score, o.Score)
	}
	for _, p := range pillarModels {
		d := decode[drilldownJSON](t, get(t, s, "/v1/global-stability/pillar/"+p.name, true))
		dayAgo := decode[overviewJSON](t, get(t, at(t0.Add(-24*time.Hour), Config{}), "/v1/global-stability", true))
		if math.Abs(d.Delta24h-(d.Score-dayAgo.Pillars[p.name])) > 0.11 {
			t.Errorf("%s delta_24h %v, but score went from %v to %v", p.name, d.Delta24h, dayAgo.Pillars[p.name], d.Score)
		}
		if d.Pillar != p.name || d.Score != o.Pillars[p.name] || len(d.Indicators) != len(p.indicators) {
			t.Errorf("drilldown %+v disagrees with overview %v", d, o.Pillars)
		}
	}
}

func TestSummaryRegeneratedPerQuarterHour(t *testing.T) {
	first := decode[summaryJSON](t, get(t, at(time.Date(2026, 11, 22, 4, 31, 0, 0, time.UTC), Config{}), "/v1/summaries", true))
	same := decode[summaryJSON](t, get(t, at(time.Date(2026, 11, 22, 4, 44, 59, 0, time.UTC), Config{}), "/v1/summaries", true))
	next := decode[summaryJSON](t, get(t, at(time.Date(2026, 11, 22, 4, 45, 0, 0, time.UTC), Config{}), "/v1/summaries", true))
	if first != same || first.AsOf != "2026-11-22T04:30:00Z" {
		t.Errorf("within one window: %+v then %+v, want one summary as of 04:30", first, same)
	}
	if next.AsOf != "2026-11-22T04:45:00Z" || next.Summary == first.Summary {
		t.Errorf("next window: %+v, want a new summary as of 04:45", next)
	}
}

func TestEventsArePlausible(t *testing.T) {
	s := at(t0, Config{Events: 500, PageSize: MaxPageSize})
	page := decode[struct {
		Events     []eventJSON `json:"events"`
		NextCursor *string     `json:"next_cursor"`
	}](t, get(t, s, "/v1/conflict", true))
	if len(page.Events) != 500 || page.NextCursor != nil {
		t.Fatalf("got %d events and cursor %v, want 500 and null", len(page.Events), page.NextCursor)
	}
	categories := map[string]int{}
	for _, e := range page.Events {
		ts, err := time.Parse(time.RFC3339Nano, e.OccurredAt)
		if err != nil || ts.After(t0) || t0.Sub(ts) > eventLookback+eventWindow {
			t.Errorf("event %s occurred_at %s is not recent", e.ID, e.OccurredAt)
		}
		if !strings.HasPrefix(e.ID, "evt_") || e.Escalation < 0 || e.Escalation > 1 || len(e.Actors) == 0 {
			t.Errorf("implausible event %+v", e)
		}
		near := false
		for _, h := range hotspots {
			near = near || (math.Abs(e.Lat-h.lat) <= 0.5 && math.Abs(e.Lon-h.lon) <= 0.5)
		}
		if !near {
			t.Errorf("event %s at (%v, %v) is near no hotspot", e.ID, e.Lat, e.Lon)
		}
		categories[e.Category]++
	}
	if len(categories) < 5 {
		t.Errorf("only categories %v among 500 events", categories)
	}
}

func TestPaginationWithOpaqueCursors(t *testing.T) {
	s := at(t0, Config{Events: 7, PageSize: 3, CursorParam: "after", PageSizeParam: "per_page"})
	type page struct {
		Events     []eventJSON `json:"events"`
		NextCursor *string     `json:"next_cursor"`
	}
	seen := map[string]bool{}
	target, pages := "/v1/conflict", 0
	for {
		p := decode[page](t, get(t, s, target, true))
		pages++
		for _, e := range p.Events {
			if seen[e.ID] {
				t.Errorf("event %s served twice", e.ID)
			}
			seen[e.ID] = true
		}
		if p.NextCursor == nil {
			break
		}
		target = "/v1/conflict?after=" + *p.NextCursor
	}
	if len(seen) != 7 || pages != 3 {
		t.Errorf("walked %d events in %d pages, want 7 in 3", len(seen), pages)
	}
	if p := decode[page](t, get(t, s, "/v1/conflict?per_page=5", true)); len(p.Events) != 5 {
		t.Errorf("per_page=5 gave %d events", len(p.Events))
	}
	for _, bad := range []string{"/v1/conflict?after=bogus", "/v1/conflict?per_page=0", "/v1/briefings?per_page=x"} {
		if w := get(t, s, bad, true); w.Code != http.StatusBadRequest || !json.Valid(w.Body.Bytes()) {
			t.Errorf("%s: status %d body %s, want 400 with a JSON body", bad, w.Code, w.Body)
		}
	}
}

func TestErrorResponses(t *testing.T) {
	s := at(t0, Config{})
	tests := []struct {
		method, path string
		auth         bool
		status       int
		code         string
	}{
		{"GET", "/v1/global-stability", false, 401, "unauthorized"},
		{"GET", "/v1/global-stability/pillar/weather", true, 404, "not_found"},
		{"GET", "/v2/global-stability", true, 404, "not_found"},
		{"POST", "/v1/summaries", true, 405, "method_not_allowed"},
	}
	for _, tt := range tests {
		r := httptest.NewRequest(tt.method, tt.path, nil)
		if tt.auth {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		var body struct{ Error, Message string }
		if w.Code != tt.status || json.Unmarshal(w.Body.Bytes(), &body) != nil || body.Error != tt.code || body.Message == "" {
			t.Errorf("%s %s: %d %s, want %d with error %q", tt.method, tt.path, w.Code, w.Body, tt.status, tt.code)
		}
	}
	r := httptest.NewRequest("GET", "/v1/summaries", nil)
	r.Header.Set("Authorization", "Bearer wrong")
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	if w.Code != 401 {
		t.Errorf("wrong key: status %d, want 401", w.Code)
	}
}

func TestFaultsApplyPerEndpointAndClear(t *testing.T) {
	s := at(t0, Config{})
	s.SetFault("summaries", Fault{Kind: FaultStatus, Status: 429, RetryAfter: "7"})
	s.SetFault("conflict", Fault{Kind: FaultContentType})
	if w := get(t, s, "/v1/summaries", true); w.Code != 429 || w.Header().Get("Retry-After") != "7" {
		t.Errorf("429 fault: status %d Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	if w := get(t, s, "/v1/conflict", true); !strings.HasPrefix(w.Header().Get("Content-Type"), "text/html") {
		t.Errorf("content-type fault: %q", w.Header().Get("Content-Type"))
	}
	if w := get(t, s, "/v1/global-stability", true); w.Code != 200 {
		t.Errorf("unfaulted endpoint: status %d", w.Code)
	}
	s.ClearFaults()
	if w := get(t, s, "/v1/summaries", true); w.Code != 200 {
		t.Errorf("after ClearFaults: status %d", w.Code)
	}
	if got := s.Requests("summaries"); got != 2 {
		t.Errorf("Requests(summaries) = %d, want 2", got)
	}
}
