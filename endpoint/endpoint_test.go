// SPDX-License-Identifier: Apache-2.0

package endpoint_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/simulator"
)

const testKey = "sk-test-7f3a9c1e5b2d4f60"

var fixedNow = time.Date(2026, 11, 22, 4, 37, 12, 0, time.UTC)

var config = endpoint.Config{Now: func() time.Time { return fixedNow }}

func serve(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

func newClient(t *testing.T, baseURL string) *client.Client {
	t.Helper()
	c, err := client.New(client.Config{BaseURL: baseURL, APIKey: client.StaticKey(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fetch collects e from an upstream answering every request with body.
func fetch(t *testing.T, e *endpoint.Endpoint, body string) (endpoint.Result, error) {
	t.Helper()
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, body)
	})
	r, _, err := e.Fetch(context.Background(), newClient(t, srv.URL), config)
	return r, err
}

// samples maps "name{v1,v2}" (label values in the metric's order) to values.
func samples(r endpoint.Result) map[string]float64 {
	out := map[string]float64{}
	for _, s := range r.Samples {
		out[s.Metric.Name+"{"+strings.Join(s.Labels, ",")+"}"] = s.Value
	}
	return out
}

func TestAllEndpointsAgainstSimulator(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: testKey, Seed: 7, Events: 23, Briefings: 5, PageSize: 4, Now: func() time.Time { return fixedNow }})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	c := newClient(t, srv.URL)
	for _, e := range endpoint.All() {
		r, _, err := e.Fetch(context.Background(), c, config)
		if err != nil {
			t.Fatalf("%s: %v", e.Label, err)
		}
		if r.Invalid.Total() != 0 || r.Duplicates != 0 {
			t.Errorf("%s: invalid %v, repeated %d; the simulator sends valid data", e.Label, r.Invalid.Counts, r.Duplicates)
		}
		// Every series the description names is there.
		got := map[string]bool{}
		for _, s := range r.Samples {
			got[s.Metric.Name] = true
		}
		for _, m := range e.Metrics() {
			if !got[m.Name] {
				t.Errorf("%s: no %s", e.Label, m.Name)
			}
		}
	}
	before := sim.Requests("conflict")
	r, _, _ := endpoint.Conflict.Fetch(context.Background(), c, config)
	if s := samples(r); s["global_stability_conflict_events{}"] != 23 || sim.Requests("conflict")-before != 6 {
		t.Errorf("conflict: %v events in %d requests, want 23 in 6 pages", s["global_stability_conflict_events{}"], sim.Requests("conflict")-before)
	}
	r, _, _ = endpoint.Summary.Fetch(context.Background(), c, config)
	if want := float64(time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC).Unix()); samples(r)["global_stability_as_of_timestamp_seconds{summaries}"] != want {
		t.Errorf("summary: %v, want as_of %v", samples(r), want)
	}
}

const okOverview = `{"score":40,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`

func event(id string) string {
	return `{"id":"evt_` + id + `","lat":1,"lon":2,"actors":[],"category":"battles","escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}`
}

// TestDocumentErrors: what fails a response as a whole. Only the document
// itself does: not JSON, not an object, a list whose items cannot be
// counted, a page without next_cursor, a drilldown of another pillar.
func TestDocumentErrors(t *testing.T) {
	cyber := endpoint.Drilldown("cyber")
	tests := []struct {
		name, body  string
		e           *endpoint.Endpoint
		field, text string
	}{
		{name: "non-JSON with 200", body: "<html><body>Bad gateway</body></html>", text: `body starts "<html><body>Bad gateway`},
		{name: "empty body", body: "", text: "empty body"},
		{name: "trailing data", body: okOverview + `{}`, text: "after the JSON document"},
		{name: "array instead of object", body: `[1,2]`, field: "(body)"},
		{name: "pillar mismatch", body: `{"pillar":"macro","delta_24h":0,"indicators":[],"as_of":"2026-11-22T00:00:00Z"}`, e: cyber, field: "pillar"},
		{name: "indicators twice", body: `{"pillar":"cyber","indicators":[],"indicators":[]}`, e: cyber, field: "indicators"},
		{name: "events null", body: `{"events":null,"next_cursor":null}`, e: endpoint.Conflict, field: "events"},
		{name: "events missing", body: `{"next_cursor":null}`, e: endpoint.Conflict, field: "events"},
		{name: "next_cursor missing", body: `{"briefings":[]}`, e: endpoint.BriefingsList, field: "next_cursor"},
		{name: "next_cursor of the wrong type", body: `{"briefings":[],"next_cursor":{}}`, e: endpoint.BriefingsList, field: "next_cursor"},
		{name: "next_cursor too long", body: `{"briefings":[],"next_cursor":"` + strings.Repeat("c", 4097) + `"}`, e: endpoint.BriefingsList, field: "next_cursor"},
		{name: "truncated JSON", body: `{"briefings":[{"id":"brf_1"`, e: endpoint.BriefingsList, text: "unexpected EOF"},
		{name: "a leading zero", body: strings.Replace(okOverview, "40", "040", 1), text: "not valid JSON"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := tt.e
			if e == nil {
				e = endpoint.Overview
			}
			_, err := fetch(t, e, tt.body)
			var de *client.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v (%T), want a *client.DecodeError", err, err)
			}
			if de.Field != tt.field || de.Endpoint == "" {
				t.Errorf("Field = %q, Endpoint %q; want field %q and the endpoint named (err: %v)", de.Field, de.Endpoint, tt.field, err)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %q, want it to contain %q", err, tt.text)
			}
		})
	}
}

// TestABodyThatIsNotAnObject says what it is instead, for every kind of
// JSON value.
func TestABodyThatIsNotAnObject(t *testing.T) {
	for body, kind := range map[string]string{"0": "number", "9": "number", "-1": "number", `"x"`: "string", "[]": "array", "true": "bool", "null": "null"} {
		_, err := fetch(t, endpoint.Overview, body)
		if err == nil || !strings.Contains(err.Error(), "got JSON "+kind+" where an object is due") {
			t.Errorf("body %s: err = %v, want one naming a %s", body, err, kind)
		}
	}
}

// TestInvalidValuesAreLeftOutOneByOne: a bad value is left out and counted
// under its field; every other value of the response is still there. A
// bad field that is never exported changes nothing.
func TestInvalidValuesAreLeftOutOneByOne(t *testing.T) {
	t.Run("overview", func(t *testing.T) {
		tests := []struct {
			body    string
			invalid map[string]int
		}{
			{okOverview, nil},
			{strings.Replace(okOverview, `"trend":"stable"`, `"trend":null`, 1), map[string]int{"trend": 1}},
			{strings.Replace(okOverview, `"trend":"stable"`, `"trend":"`+strings.Repeat("w", 129)+`"`, 1), map[string]int{"trend": 1}},
			{strings.Replace(okOverview, `"trend":"stable"`, `"trend":""`, 1), map[string]int{"trend": 1}},
			{strings.Replace(okOverview, `"score":40`, `"score":"40"`, 1), map[string]int{"score": 1}},
			{strings.Replace(okOverview, `"score":40`, `"score":100.5`, 1), map[string]int{"score": 1}},
			{strings.Replace(okOverview, `"cyber":2`, `"cyber":250`, 1), map[string]int{"pillars": 1}},
			{strings.Replace(okOverview, `"macro":4`, `"other":4`, 1), map[string]int{"pillars": 1}},
			{strings.Replace(okOverview, `{"conflict":1,"cyber":2,"supply_chain":3,"macro":4}`, `[1,2,3,4]`, 1), map[string]int{"pillars": 4}},
			{strings.Replace(okOverview, `"as_of":"2026-11-22T00:00:00Z"`, `"as_of":"yesterday"`, 1), map[string]int{"as_of": 1}},
			{strings.Replace(okOverview, `"as_of":"2026-11-22T00:00:00Z"`, `"as_of":"2099-01-01T00:00:00Z"`, 1), map[string]int{"as_of": 1}},
			{`{}`, map[string]int{"score": 1, "trend": 1, "pillars": 4, "as_of": 1}},
		}
		for _, tt := range tests {
			r, err := fetch(t, endpoint.Overview, tt.body)
			if err != nil {
				t.Fatalf("%s: %v", tt.body, err)
			}
			if !maps.Equal(r.Invalid.Counts, tt.invalid) {
				t.Errorf("%s: invalid %v, want %v", tt.body, r.Invalid.Counts, tt.invalid)
			}
			s := samples(r)
			_, score := s["global_stability_score{}"]
			_, trend := s["global_stability_trend{stable}"]
			_, asOf := s["global_stability_as_of_timestamp_seconds{global-stability}"]
			pillars := 0
			for _, p := range endpoint.Pillars {
				if _, ok := s["global_stability_pillar_score{"+p+"}"]; ok {
					pillars++
				}
			}
			if score == (tt.invalid["score"] > 0) || (trend && tt.invalid["trend"] > 0) || pillars != 4-tt.invalid["pillars"] || asOf == (tt.invalid["as_of"] > 0) {
				t.Errorf("%s: kept %v; each valid value must stay, each invalid one go", tt.body, s)
			}
		}
	})
	t.Run("drilldown", func(t *testing.T) {
		body := `{"pillar":"cyber","score":"not exported","delta_24h":-1.5,"indicators":[{"key":"a","value":1},{"key":"b","value":null},7,{"value":3},{"key":"c","value":2}],"as_of":"2026-11-22T00:00:00Z"}`
		r, err := fetch(t, endpoint.Drilldown("cyber"), body)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]float64{
			"global_stability_pillar_indicator{cyber,a}":                              1,
			"global_stability_pillar_indicator{cyber,c}":                              2,
			"global_stability_pillar_delta_24h{cyber}":                                -1.5,
			"global_stability_as_of_timestamp_seconds{global-stability/pillar/cyber}": float64(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC).Unix()),
		}
		if s := samples(r); !maps.Equal(s, want) {
			t.Errorf("series %v, want %v", s, want)
		}
		if !maps.Equal(r.Invalid.Counts, map[string]int{"indicators": 3}) || r.Invalid.First != "indicators[1].value: null" {
			t.Errorf("invalid %v, first %q; want three indicators left out, the first being indicators[1].value: null", r.Invalid.Counts, r.Invalid.First)
		}
	})
	t.Run("events", func(t *testing.T) {
		bad := func(from, to string) string { return strings.Replace(event("x"), from, to, 1) }
		events := []string{
			event("a"),
			bad(`"lat":1`, `"lat":91`),
			bad(`"lon":2`, `"lon":-180.5`),
			bad(`"escalation":0.5`, `"escalation":null`),
			bad(`"category":"battles"`, `"category":""`),
			bad(`"occurred_at":"2026-11-22T00:00:00Z"`, `"occurred_at":"2999-01-01T00:00:00Z"`),
			bad(`"actors":[]`, `"actors":"not exported"`),
			bad(`"id":"evt_x"`, `"id":17`),
			`null`, `"event"`,
		}
		r, err := fetch(t, endpoint.Conflict, `{"events":[`+strings.Join(events, ",")+`],"next_cursor":null}`)
		if err != nil {
			t.Fatal(err)
		}
		if n := samples(r)["global_stability_conflict_events{}"]; n != 3 || !maps.Equal(r.Invalid.Counts, map[string]int{"events": 7, "actors": 1}) {
			t.Errorf("kept %v events, invalid %v; want 3 kept (a good one, bad actors, bad id), 7 left out and the bad actors counted", n, r.Invalid.Counts)
		}
		if r.Invalid.First != "events[1].lat: 91 is not a latitude (page 1)" {
			t.Errorf("first invalid = %q", r.Invalid.First)
		}
	})
	t.Run("an event without lat is named for its lat, not its missing id", func(t *testing.T) {
		r, err := fetch(t, endpoint.Conflict, `{"events":[{"lon":1,"category":"battles","escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}],"next_cursor":null}`)
		if err != nil || !strings.Contains(r.Invalid.First, "lat: missing") || strings.Contains(r.Invalid.First, "id") {
			t.Errorf("reason %q, %v; want one naming the missing lat", r.Invalid.First, err)
		}
	})
	t.Run("briefings", func(t *testing.T) {
		r, err := fetch(t, endpoint.BriefingsList, `{"briefings":[{"published_at":"2026-11-21T06:00:00Z","headline":null,"tags":"x"},{"id":"brf_2"},[]],"next_cursor":null}`)
		if err != nil || samples(r)["global_stability_briefings{}"] != 1 || !maps.Equal(r.Invalid.Counts, map[string]int{"briefings": 2, "tags": 1}) {
			t.Errorf("%v, invalid %v, %v; want 1 kept (its bad headline not exported, its bad tags counted) and 2 left out", samples(r), r.Invalid.Counts, err)
		}
	})
	t.Run("summary", func(t *testing.T) {
		r, err := fetch(t, endpoint.Summary, `{"summary":null,"as_of":"2026-11-22T00:00:00Z"}`)
		if err != nil || len(r.Samples) != 1 || r.Invalid.Total() != 0 {
			t.Errorf("a null summary text is not exported and must change nothing: %v, %v", samples(r), err)
		}
	})
}

// TestScoreScaleIsInclusive: 0 and 100 are on the spec's scale.
func TestScoreScaleIsInclusive(t *testing.T) {
	r, err := fetch(t, endpoint.Overview, `{"score":100,"trend":"stable","pillars":{"conflict":0,"cyber":100,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`)
	if s := samples(r); err != nil || s["global_stability_score{}"] != 100 || s["global_stability_pillar_score{conflict}"] != 0 || len(s) != 7 || r.Invalid.Total() != 0 {
		t.Errorf("overview %v, %v; want score 100, a pillar at 0, none invalid", s, err)
	}
}

// TestRepeatedEventsAcrossPagesCountOnce: a list that shifts while it is
// walked puts an event on two pages; it is counted once.
func TestRepeatedEventsAcrossPagesCountOnce(t *testing.T) {
	pages := map[string]string{
		"":  `{"events":[` + event("a") + `,` + event("b") + `],"next_cursor":"2"}`,
		"2": `{"events":[` + event("b") + `,` + event("c") + `,` + strings.Replace(event("d"), `"id":"evt_d",`, "", 1) + `,` + strings.Replace(event("e"), `"id":"evt_e",`, "", 1) + `],"next_cursor":null}`,
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, pages[r.URL.Query().Get("cursor")]) })
	r, _, err := endpoint.Conflict.Fetch(context.Background(), newClient(t, srv.URL), config)
	if err != nil {
		t.Fatal(err)
	}
	// a, b, c once each; the two without an id cannot be told apart, so both count.
	if n := samples(r)["global_stability_conflict_events{}"]; n != 5 || r.Duplicates != 1 {
		t.Errorf("%v events, %d repeated; want 5 and 1", n, r.Duplicates)
	}
}

// TestACapBelowOneIsUnset: a Config's cap or cell size below 1 reads as
// unset (its default), as 0 does, not as a bound to size slices by; and
// each Result of a collection counts what its caps left out on its own.
func TestACapBelowOneIsUnset(t *testing.T) {
	var body strings.Builder
	body.WriteString(`{"briefings":[`)
	for i := range 5 {
		fmt.Fprintf(&body, `%s{"id":"brf_%d","headline":"h","summary":"s","tags":["t%d"],"published_at":"2026-11-22T04:00:00Z"}`, map[bool]string{true: ",", false: ""}[i > 0], i, i)
	}
	body.WriteString(`],"next_cursor":null}`)
	for _, c := range []endpoint.Config{{MaxSeries: -1, MaxLabelValues: -1, GridDegrees: -5}, {MaxLabelValues: 2}} {
		c.Now = config.Now
		col := endpoint.BriefingsList.Start(c)
		if _, err := col.Read(strings.NewReader(body.String()), 1); err != nil {
			t.Fatal(err)
		}
		first, second := col.Result(), col.Result()
		want := map[bool]int{true: 0, false: 3}[c.MaxLabelValues < 0]
		if a, b := first.Dropped[endpoint.BriefingsByTag.Name], second.Dropped[endpoint.BriefingsByTag.Name]; a != want || b != want {
			t.Errorf("%+v: the two results left out %d and %d tags, want %d each", c, a, b, want)
		}
	}
}

// TestCursorForms: a number is passed back as its literal text, "" ends
// the walk like null.
func TestCursorForms(t *testing.T) {
	pages := map[string]string{
		"":   `{"events":[` + event("a") + `],"next_cursor":17}`,
		"17": `{"events":[` + event("b") + `,` + event("c") + `],"next_cursor":""}`,
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, pages[r.URL.Query().Get("cursor")]) })
	r, _, err := endpoint.Conflict.Fetch(context.Background(), newClient(t, srv.URL), config)
	if n := samples(r)["global_stability_conflict_events{}"]; err != nil || n != 3 {
		t.Errorf("%v events, %v; want 3 over two pages", n, err)
	}
}

func TestExtraFieldsAndTimestampFormsAccepted(t *testing.T) {
	r, err := fetch(t, endpoint.Summary, `{"summary":"ok","as_of":"2026-11-22T05:00:00.123+02:00","extra":{"nested":[1,2,3]},"version":2}`)
	if err != nil {
		t.Fatal(err)
	}
	want := float64(time.Date(2026, 11, 22, 3, 0, 0, 0, time.UTC).Unix()) + 0.123
	if got := samples(r)["global_stability_as_of_timestamp_seconds{summaries}"]; got != want {
		t.Errorf("as_of = %v, want %v", got, want)
	}
}

// TestNamesAreExportedAsTheAPIWritesThem: every JSON escape decoded,
// invalid UTF-8 replaced by U+FFFD (what is exported is valid UTF-8); a
// name that then does not read plainly (a backslash, a control character)
// is left out and counted, as every text the exporter quotes.
func TestNamesAreExportedAsTheAPIWritesThem(t *testing.T) {
	tests := map[string]string{
		`"a\"b"`: `a"b`, `"a\/b"`: "a/b", `"Riots \u0026 protests"`: "Riots & protests",
		`"\u0041\u00e9"`: "Aé", `"\uD83D\uDE00"`: "😀", `"\uD83Dx"`: "\uFFFDx", `"\uDE00"`: "\uFFFD",
		"\"\xff\"": "\uFFFD", `"指标"`: "指标",
		`"a\\b"`: "", `"\b\f\n\r\t"`: "", "\"a\x7f\"": "", `"\u0026#103;"`: "",
	}
	for in, want := range tests {
		r, err := fetch(t, endpoint.Overview, strings.Replace(okOverview, `"trend":"stable"`, `"tr\u0065nd":`+in, 1))
		if _, ok := samples(r)["global_stability_trend{"+want+"}"]; err != nil || ok != (want != "") || r.Invalid.Counts["trend"] != 0 != (want == "") {
			t.Errorf("trend %s: %v, invalid %v, %v; want the label %q, or none and one invalid", in, samples(r), r.Invalid.Counts, err, want)
		}
	}
}

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-11-22T04:30:00Z", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22T04:30:00.5Z", time.Date(2026, 11, 22, 4, 30, 0, 5e8, time.UTC)},
		{"2026-11-22T04:30:00.123456789Z", time.Date(2026, 11, 22, 4, 30, 0, 123456789, time.UTC)},
		{"2026-11-22T06:30:00+02:00", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22T06:30:00.250+02:00", time.Date(2026, 11, 22, 4, 30, 0, 25e7, time.UTC)},
		{"2026-11-21T23:30:00-05:00", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22T06:30:00+0200", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22T04:30:00", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		// What RFC 3339 allows beyond Go's layouts.
		{"2026-11-22t04:30:00z", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22 04:30:00Z", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2016-12-31T23:59:60Z", time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"2016-12-31T23:59:60.5+00:00", time.Date(2017, 1, 1, 0, 0, 0, 5e8, time.UTC)},
		// Far from today, and kept exactly: plausibility is the caller's call.
		{"0001-01-01T00:00:00Z", time.Time{}},
		{"1600-01-01T00:00:00Z", time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"9999-12-31T23:59:59Z", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := endpoint.ParseTimestamp(tt.in)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-11-22", "22/11/2026 04:30", "2026-13-01T00:00:00Z", "1700000000", "2026-11-22T04:30:61Z", "2026-11-22x04:30:00Z", "2026-11-22T04:30:6", "2026-11-22T04:30:"} {
		if _, err := endpoint.ParseTimestamp(bad); err == nil {
			t.Errorf("ParseTimestamp(%q) succeeded, want an error", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("error %q quotes the input", err)
		}
	}
}

// TestTimestampsAheadOfTheClock: an hour ahead of the clock is clock skew
// or the end of a window; a second more would keep the staleness alerts
// quiet, and is left out.
func TestTimestampsAheadOfTheClock(t *testing.T) {
	for _, tc := range []struct {
		ahead time.Duration
		ok    bool
	}{{0, true}, {time.Hour, true}, {time.Hour + time.Second, false}, {2 * time.Hour, false}} {
		asOf := fixedNow.Add(tc.ahead).Format(time.RFC3339)
		r, err := fetch(t, endpoint.Summary, `{"summary":"s","as_of":"`+asOf+`"}`)
		if err != nil || (r.Invalid.Total() == 0) != tc.ok || (len(r.Samples) == 1) != tc.ok {
			t.Errorf("as_of %v ahead: %v invalid, %d series, %v; want accepted %v", tc.ahead, r.Invalid.Counts, len(r.Samples), err, tc.ok)
		}
	}
}

// TestTimestampsWithoutAZoneAreUTCInAnyLocalZone: the spec's timestamps
// are UTC, so one written without a zone is read as UTC whatever the
// host's zone (a container in UTC hides a reading in local time; a server
// in Tokyo or New York would shift every as_of by hours). Not parallel: it
// sets time.Local.
func TestTimestampsWithoutAZoneAreUTCInAnyLocalZone(t *testing.T) {
	saved := time.Local
	t.Cleanup(func() { time.Local = saved })
	for _, zone := range []*time.Location{time.FixedZone("UTC+9", 9*3600), time.FixedZone("UTC-5", -5*3600)} {
		time.Local = zone
		for _, in := range []string{"2026-11-22T04:30:00", "2026-11-22 04:30:00", "2026-11-22T04:30:00.5"} {
			want := time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)
			if strings.HasSuffix(in, ".5") {
				want = want.Add(500 * time.Millisecond)
			}
			got, err := endpoint.ParseTimestamp(in)
			if err != nil || !got.Equal(want) {
				t.Errorf("local zone %s: ParseTimestamp(%q) = %v, %v; want %v", zone, in, got, err, want)
			}
			// Read from memory, not through a server: time.Local is set
			// here, and no other goroutine may be reading it meanwhile.
			col := endpoint.Summary.Start(config)
			_, err = col.Read(strings.NewReader(`{"summary":"s","as_of":"`+in+`"}`), 0)
			r := col.Result()
			if got := samples(r)["global_stability_as_of_timestamp_seconds{summaries}"]; err != nil || got != float64(want.UnixNano())/1e9 {
				t.Errorf("local zone %s: as_of %q exported as %v, %v; want %v", zone, in, got, err, float64(want.UnixNano())/1e9)
			}
		}
	}
}
