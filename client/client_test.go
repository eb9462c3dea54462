package client_test

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/simulator"
)

const testKey = "sk-test-7f3a9c1e5b2d4f60"

var fixedNow = time.Date(2026, 11, 22, 4, 37, 12, 0, time.UTC)

func startSim(t *testing.T, cfg simulator.Config) (*simulator.Simulator, *httptest.Server) {
	t.Helper()
	cfg.Key = testKey
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return fixedNow }
	}
	sim := simulator.New(cfg)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	return sim, srv
}

func newClient(t *testing.T, baseURL string, mod ...func(*client.Config)) *client.Client {
	t.Helper()
	cfg := client.Config{BaseURL: baseURL, APIKey: client.StaticKey(testKey)}
	for _, m := range mod {
		m(&cfg)
	}
	c, err := client.New(cfg)
	if err != nil {
		t.Fatalf("client.New: %v", err)
	}
	return c
}

// serve returns a test server answering every request with handler.
func serve(t *testing.T, handler http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handler)
	t.Cleanup(srv.Close)
	return srv
}

// collectEvents walks /v1/conflict into a slice.
func collectEvents(c *client.Client) ([]client.Event, client.Walk, error) {
	var events []client.Event
	walk, err := c.ConflictEvents(context.Background(), func(ev client.Event) { events = append(events, ev) })
	return events, walk, err
}

func collectBriefings(c *client.Client) ([]client.Briefing, client.Walk, error) {
	var briefings []client.Briefing
	walk, err := c.Briefings(context.Background(), func(b client.Briefing) { briefings = append(briefings, b) })
	return briefings, walk, err
}

func TestAllEndpointsAgainstSimulator(t *testing.T) {
	_, srv := startSim(t, simulator.Config{Seed: 7, Events: 23, Briefings: 5, PageSize: 4})
	c := newClient(t, srv.URL)
	ctx := context.Background()

	o, err := c.Overview(ctx)
	if err != nil {
		t.Fatalf("Overview: %v", err)
	}
	if o.Score == nil || *o.Score < 0 || *o.Score > 100 || o.Trend == nil || *o.Trend == "" || len(o.Pillars) != 4 || o.AsOf == nil || o.Invalid.Total() != 0 {
		t.Errorf("Overview = %+v, want a score in 0–100, a trend, four pillars, as_of and nothing invalid", o)
	}
	for _, p := range client.Pillars() {
		var inds []client.Indicator
		d, err := c.Drilldown(ctx, p, func(ind client.Indicator) { inds = append(inds, ind) })
		if err != nil {
			t.Fatalf("Drilldown(%s): %v", p, err)
		}
		if d.Pillar != p || len(inds) == 0 || d.AsOf == nil || d.Delta24h == nil || d.Invalid.Total() != 0 {
			t.Errorf("Drilldown(%s) = %+v with %d indicators", p, d, len(inds))
		}
	}
	events, walk, err := collectEvents(c)
	if err != nil {
		t.Fatalf("ConflictEvents: %v", err)
	}
	if len(events) != 23 || walk.Pages != 6 || walk.Invalid.Total() != 0 || walk.Duplicates != 0 {
		t.Errorf("got %d events in %d pages (%v invalid, %d repeated), want 23 in 6, all valid", len(events), walk.Pages, walk.Invalid.Counts, walk.Duplicates)
	}
	for _, e := range events {
		if e.Category == "" || e.Escalation < 0 || e.Escalation > 1 || e.OccurredAt.IsZero() {
			t.Errorf("bad event %+v", e)
		}
	}
	briefings, _, err := collectBriefings(c)
	if err != nil {
		t.Fatalf("Briefings: %v", err)
	}
	if len(briefings) != 5 || briefings[0].PublishedAt.IsZero() {
		t.Errorf("Briefings = %+v, want 5 with publication times", briefings)
	}
	s, err := c.Summary(ctx)
	if err != nil {
		t.Fatalf("Summary: %v", err)
	}
	if want := time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC); s.AsOf == nil || !s.AsOf.Equal(want) {
		t.Errorf("Summary = %+v, want as_of %v", s, want)
	}
}

func TestRequestHeadersAndPaths(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: testKey, Events: 3, PageSize: 2, CursorParam: "page_token", PageSizeParam: "limit"})
	var mu sync.Mutex
	var seen []*http.Request
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Clone(context.Background()))
		mu.Unlock()
		r.URL.Path = strings.TrimPrefix(r.URL.Path, "/prefix")
		sim.ServeHTTP(w, r)
	})
	c := newClient(t, srv.URL+"/prefix/", func(cfg *client.Config) {
		cfg.CursorParam, cfg.PageSizeParam, cfg.PageSize = "page_token", "limit", 1
	})
	events, _, err := collectEvents(c)
	if err != nil {
		t.Fatalf("ConflictEvents: %v", err)
	}
	if len(events) != 3 || len(seen) != 3 {
		t.Fatalf("got %d events in %d requests, want 3 in 3 (page size 1 sent as limit=1)", len(events), len(seen))
	}
	for i, r := range seen {
		if r.URL.Path != "/prefix/v1/conflict" {
			t.Errorf("request %d path %q, want the base path kept", i, r.URL.Path)
		}
		if got := r.Header.Get("Authorization"); got != "Bearer "+testKey {
			t.Errorf("request %d Authorization = %q", i, got)
		}
		if ua := r.Header.Get("User-Agent"); !strings.HasPrefix(ua, "global_stability_exporter/") {
			t.Errorf("request %d User-Agent = %q", i, ua)
		}
		if r.URL.Query().Get("limit") != "1" {
			t.Errorf("request %d query %q lacks limit=1", i, r.URL.RawQuery)
		}
		if (i == 0) == r.URL.Query().Has("page_token") {
			t.Errorf("request %d query %q: the cursor belongs on every page but the first", i, r.URL.RawQuery)
		}
	}
}

func TestPageSizeOffByDefault(t *testing.T) {
	var queries []string
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		fmt.Fprint(w, `{"briefings":[],"next_cursor":null}`)
	})
	if _, _, err := collectBriefings(newClient(t, srv.URL)); err != nil {
		t.Fatal(err)
	}
	if len(queries) != 1 || queries[0] != "" {
		t.Errorf("queries = %q, want one request with no parameters", queries)
	}
}

func TestPagination(t *testing.T) {
	tests := []struct {
		name    string
		pages   map[string]string // cursor → body
		mod     func(*client.Config)
		want    int
		wantErr error
	}{
		{name: "numeric and empty-string cursors", want: 3, pages: map[string]string{
			"":   `{"events":[` + event("a") + `],"next_cursor":17}`,
			"17": `{"events":[` + event("b") + `,` + event("c") + `],"next_cursor":""}`,
		}},
		{name: "cursor loop", wantErr: client.ErrCursorLoop, pages: map[string]string{
			"":  `{"events":[],"next_cursor":"x"}`,
			"x": `{"events":[],"next_cursor":"x"}`,
		}},
		{name: "page bound", mod: func(c *client.Config) { c.MaxPages = 2 }, wantErr: client.ErrTooManyPages, pages: map[string]string{
			"":  `{"events":[],"next_cursor":"1"}`,
			"1": `{"events":[],"next_cursor":"2"}`,
			"2": `{"events":[],"next_cursor":null}`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				body, ok := tt.pages[r.URL.Query().Get("cursor")]
				if !ok {
					http.Error(w, "unexpected cursor", http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprint(w, body)
			})
			mods := []func(*client.Config){}
			if tt.mod != nil {
				mods = append(mods, tt.mod)
			}
			events, _, err := collectEvents(newClient(t, srv.URL, mods...))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if len(events) != tt.want {
				t.Errorf("got %d events, want %d", len(events), tt.want)
			}
		})
	}
}

func event(id string) string {
	return `{"id":"evt_` + id + `","lat":1,"lon":2,"actors":[],"category":"battles","escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}`
}

func TestStatusErrors(t *testing.T) {
	retryDate := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	tests := []struct {
		status     int
		retryAfter string
		class      error
		minRetry   time.Duration
		maxRetry   time.Duration
	}{
		{status: 401, class: client.ErrAuth},
		{status: 403, class: client.ErrAuth},
		{status: 404, class: client.ErrNotFound},
		{status: 429, retryAfter: "30", class: client.ErrRateLimited, minRetry: 30 * time.Second, maxRetry: 30 * time.Second},
		{status: 429, retryAfter: retryDate, class: client.ErrRateLimited, minRetry: 80 * time.Second, maxRetry: 91 * time.Second},
		{status: 429, retryAfter: "soon", class: client.ErrRateLimited},
		// Both forms are capped at a day, whatever the server asks for.
		{status: 429, retryAfter: "Fri, 31 Dec 9999 23:59:59 GMT", class: client.ErrRateLimited, minRetry: 24 * time.Hour, maxRetry: 24 * time.Hour},
		{status: 429, retryAfter: "99999999999999", class: client.ErrRateLimited, minRetry: 24 * time.Hour, maxRetry: 24 * time.Hour},
		{status: 500, class: client.ErrServer},
		{status: 503, retryAfter: "5", class: client.ErrServer, minRetry: 5 * time.Second, maxRetry: 5 * time.Second},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d %s", tt.status, tt.retryAfter), func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				if tt.retryAfter != "" {
					w.Header().Set("Retry-After", tt.retryAfter)
				}
				w.WriteHeader(tt.status)
				// A body that echoes the key and runs on: both must be tamed.
				fmt.Fprintf(w, "{\"error\":\"nope\",\"echo\":\"Bearer %s\"}\n%s", testKey, strings.Repeat("z", 10000))
			})
			_, err := newClient(t, srv.URL).Summary(context.Background())
			var se *client.StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.status || se.Endpoint != client.EndpointSummaries {
				t.Fatalf("err = %#v, want a StatusError %d for summaries", err, tt.status)
			}
			if !errors.Is(err, tt.class) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.class)
			}
			for _, other := range []error{client.ErrAuth, client.ErrNotFound, client.ErrRateLimited, client.ErrServer} {
				if !errors.Is(other, tt.class) && errors.Is(err, other) {
					t.Errorf("error %v also matches %v", err, other)
				}
			}
			if se.RetryAfter < tt.minRetry || se.RetryAfter > tt.maxRetry {
				t.Errorf("RetryAfter = %v, want within [%v, %v]", se.RetryAfter, tt.minRetry, tt.maxRetry)
			}
			msg := err.Error()
			if !strings.Contains(msg, `"error":"nope"`) || len(msg) > 400 {
				t.Errorf("message should carry a short excerpt of the body, got %d bytes: %q", len(msg), msg)
			}
			if strings.Contains(msg, testKey) || strings.Contains(msg, "\n") {
				t.Errorf("message leaks the key or spans lines: %q", msg)
			}
		})
	}
}

func overviewCall(c *client.Client) error { _, err := c.Overview(context.Background()); return err }
func drilldownCall(c *client.Client) error {
	_, err := c.Drilldown(context.Background(), client.PillarCyber, nil)
	return err
}
func eventsCall(c *client.Client) error    { _, _, err := collectEvents(c); return err }
func briefingsCall(c *client.Client) error { _, _, err := collectBriefings(c); return err }

const okOverview = `{"score":40,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`

// TestDocumentErrors: what fails a response as a whole. Only the document
// itself does: not JSON, not an object, a list whose items cannot be
// counted, a page without next_cursor, a drilldown of another pillar.
func TestDocumentErrors(t *testing.T) {
	tests := []struct {
		name, contentType, body string
		call                    func(*client.Client) error
		field, text             string
		class                   error
	}{
		{name: "non-JSON with 200", body: "<html><body>Bad gateway</body></html>", text: `body starts "<html><body>Bad gateway`},
		{name: "empty body", body: "", text: "empty body"},
		{name: "trailing data", body: okOverview + `{}`, text: "trailing data"},
		{name: "array instead of object", body: `[1,2]`, field: "(body)"},
		{name: "wrong content type", contentType: "text/html", body: okOverview, class: client.ErrBadContent},
		{name: "pillar mismatch", body: `{"pillar":"macro","delta_24h":0,"indicators":[],"as_of":"2026-11-22T00:00:00Z"}`, call: drilldownCall, field: "pillar"},
		{name: "indicators twice", body: `{"pillar":"cyber","indicators":[],"indicators":[]}`, call: drilldownCall, field: "indicators"},
		{name: "events null", body: `{"events":null,"next_cursor":null}`, call: eventsCall, field: "events"},
		{name: "events missing", body: `{"next_cursor":null}`, call: eventsCall, field: "events"},
		{name: "next_cursor missing", body: `{"briefings":[]}`, call: briefingsCall, field: "next_cursor"},
		{name: "next_cursor of the wrong type", body: `{"briefings":[],"next_cursor":{}}`, call: briefingsCall, field: "next_cursor"},
		{name: "truncated JSON", body: `{"briefings":[{"id":"brf_1"`, call: briefingsCall, text: "unexpected EOF"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", cmp.Or(tt.contentType, "application/json"))
				fmt.Fprint(w, tt.body)
			})
			call := tt.call
			if call == nil {
				call = overviewCall
			}
			err := call(newClient(t, srv.URL))
			var de *client.DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v (%T), want a *client.DecodeError", err, err)
			}
			if de.Field != tt.field {
				t.Errorf("Field = %q, want %q (err: %v)", de.Field, tt.field, err)
			}
			if !strings.Contains(err.Error(), tt.text) {
				t.Errorf("err = %q, want it to contain %q", err, tt.text)
			}
			if tt.class != nil && !errors.Is(err, tt.class) {
				t.Errorf("errors.Is(%v, %v) = false", err, tt.class)
			}
		})
	}
}

// TestInvalidValuesAreLeftOutOneByOne: a bad value is left out and counted
// under its field; every other value of the response is still there. A
// bad field that is never exported changes nothing.
func TestInvalidValuesAreLeftOutOneByOne(t *testing.T) {
	serveBody := func(t *testing.T, body string) *client.Client {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) })
		return newClient(t, srv.URL)
	}
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
			{strings.Replace(okOverview, `"cyber":2`, `"cyber":250`, 1), map[string]int{"pillars": 1}},
			{strings.Replace(okOverview, `"macro":4`, `"other":4`, 1), map[string]int{"pillars": 1}},
			{strings.Replace(okOverview, `"as_of":"2026-11-22T00:00:00Z"`, `"as_of":"yesterday"`, 1), map[string]int{"as_of": 1}},
			{strings.Replace(okOverview, `"as_of":"2026-11-22T00:00:00Z"`, `"as_of":"2099-01-01T00:00:00Z"`, 1), map[string]int{"as_of": 1}},
			{`{}`, map[string]int{"score": 1, "trend": 1, "pillars": 4, "as_of": 1}},
		}
		for _, tt := range tests {
			o, err := serveBody(t, tt.body).Overview(context.Background())
			if err != nil {
				t.Fatalf("%s: %v", tt.body, err)
			}
			if !maps.Equal(o.Invalid.Counts, tt.invalid) {
				t.Errorf("%s: invalid %v, want %v", tt.body, o.Invalid.Counts, tt.invalid)
			}
			if (o.Score != nil) == (tt.invalid["score"] > 0) || (o.Trend != nil) == (tt.invalid["trend"] > 0) ||
				len(o.Pillars) != 4-tt.invalid["pillars"] || (o.AsOf != nil) == (tt.invalid["as_of"] > 0) {
				t.Errorf("%s: kept %+v; each valid value must stay, each invalid one go", tt.body, o)
			}
		}
	})
	t.Run("drilldown", func(t *testing.T) {
		body := `{"pillar":"cyber","score":"not exported","delta_24h":-1.5,"indicators":[{"key":"a","value":1},{"key":"b","value":null},7,{"value":3},{"key":"c","value":2}],"as_of":"2026-11-22T00:00:00Z"}`
		var inds []client.Indicator
		d, err := serveBody(t, body).Drilldown(context.Background(), client.PillarCyber, func(ind client.Indicator) { inds = append(inds, ind) })
		if err != nil {
			t.Fatal(err)
		}
		if want := []client.Indicator{{Key: "a", Value: 1}, {Key: "c", Value: 2}}; !slices.Equal(inds, want) {
			t.Errorf("indicators %v, want %v", inds, want)
		}
		if d.Delta24h == nil || *d.Delta24h != -1.5 || d.AsOf == nil || !maps.Equal(d.Invalid.Counts, map[string]int{"indicators": 3}) {
			t.Errorf("drilldown %+v (invalid %v): delta_24h and as_of must stay, three indicators go", d, d.Invalid.Counts)
		}
		if d.Invalid.First != "indicators[1].value: null" {
			t.Errorf("first invalid = %q", d.Invalid.First)
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
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"events":[`+strings.Join(events, ",")+`],"next_cursor":null}`)
		})
		got, walk, err := collectEvents(newClient(t, srv.URL))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 3 || !maps.Equal(walk.Invalid.Counts, map[string]int{"events": 7}) {
			t.Errorf("kept %d events, invalid %v; want 3 kept (a good one, bad actors, bad id) and 7 left out", len(got), walk.Invalid.Counts)
		}
		if walk.Invalid.First != "events[1].lat: 91 is not a latitude (page 1)" {
			t.Errorf("first invalid = %q", walk.Invalid.First)
		}
	})
	t.Run("briefings", func(t *testing.T) {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprint(w, `{"briefings":[{"published_at":"2026-11-21T06:00:00Z","headline":null,"tags":"x"},{"id":"brf_2"},[]],"next_cursor":null}`)
		})
		got, walk, err := collectBriefings(newClient(t, srv.URL))
		if err != nil || len(got) != 1 || walk.Invalid.Counts["briefings"] != 2 {
			t.Errorf("got %d briefings, invalid %v, %v; want 1 kept (its bad headline and tags are not exported) and 2 left out", len(got), walk.Invalid.Counts, err)
		}
	})
	t.Run("summary", func(t *testing.T) {
		s, err := serveBody(t, `{"summary":null,"as_of":"2026-11-22T00:00:00Z"}`).Summary(context.Background())
		if err != nil || s.AsOf == nil || s.Invalid.Total() != 0 {
			t.Errorf("a null summary text is not exported and must change nothing: %+v, %v", s, err)
		}
	})
}

// TestRepeatedEventsAcrossPagesCountOnce: a list that shifts while it is
// walked puts an event on two pages; it is handed over once.
func TestRepeatedEventsAcrossPagesCountOnce(t *testing.T) {
	pages := map[string]string{
		"":  `{"events":[` + event("a") + `,` + event("b") + `],"next_cursor":"2"}`,
		"2": `{"events":[` + event("b") + `,` + event("c") + `,` + strings.Replace(event("d"), `"id":"evt_d",`, "", 1) + `,` + strings.Replace(event("e"), `"id":"evt_e",`, "", 1) + `],"next_cursor":null}`,
	}
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, pages[r.URL.Query().Get("cursor")]) })
	events, walk, err := collectEvents(newClient(t, srv.URL))
	if err != nil {
		t.Fatal(err)
	}
	// a, b, c once each; the two without an id cannot be told apart, so both count.
	if len(events) != 5 || walk.Duplicates != 1 {
		t.Errorf("%d events, %d repeated; want 5 and 1", len(events), walk.Duplicates)
	}
}

func TestExtraFieldsAndTimestampFormsAccepted(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/vnd.gsis+json; charset=utf-8")
		fmt.Fprint(w, `{"summary":"ok","as_of":"2026-11-22T05:00:00.123+02:00","extra":{"nested":[1,2,3]},"version":2}`)
	})
	s, err := newClient(t, srv.URL).Summary(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 22, 3, 0, 0, 123e6, time.UTC); s.AsOf == nil || !s.AsOf.Equal(want) {
		t.Errorf("AsOf = %v, want %v", s.AsOf, want)
	}
}

// TestBodyFormsTheRFCsAllow: a Content-Type with a malformed parameter is
// still JSON; a gzip body is decoded even when unasked for; an encoding
// the client cannot read is named.
func TestBodyFormsTheRFCsAllow(t *testing.T) {
	gzipped := func() []byte {
		var b bytes.Buffer
		zw := gzip.NewWriter(&b)
		_, _ = zw.Write([]byte(okOverview))
		_ = zw.Close()
		return b.Bytes()
	}()
	tests := []struct {
		name, contentType, encoding string
		status                      int
		body                        []byte
		errText                     string
	}{
		{name: "bad parameter", contentType: "application/json; charset", body: []byte(okOverview)},
		// mime.ParseMediaType gives no media type at all for this one.
		{name: "conflicting parameters", contentType: "application/json; charset=utf-8; charset=latin1", body: []byte(okOverview)},
		{name: "not JSON", contentType: "text/html; charset=utf-8; charset=latin1", body: []byte(okOverview), errText: "not a JSON response"},
		{name: "any 2xx", contentType: "application/json", status: 299, body: []byte(okOverview)},
		{name: "3xx is not 2xx", contentType: "application/json", status: 300, body: []byte(okOverview), errText: "HTTP 300"},
		{name: "uppercase", contentType: "Application/JSON", body: []byte(okOverview)},
		{name: "gzip", contentType: "application/json", encoding: "gzip", body: gzipped},
		{name: "gzip that is not", contentType: "application/json", encoding: "gzip", body: []byte(okOverview), errText: "not gzip"},
		{name: "brotli", contentType: "application/json", encoding: "br", body: []byte("??"), errText: `Content-Encoding "br"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", tt.contentType)
				if tt.encoding != "" {
					w.Header().Set("Content-Encoding", tt.encoding)
				}
				w.WriteHeader(cmp.Or(tt.status, http.StatusOK))
				_, _ = w.Write(tt.body)
			})
			o, err := newClient(t, srv.URL).Overview(context.Background())
			switch {
			case tt.errText == "" && (err != nil || o.Score == nil || *o.Score != 40):
				t.Errorf("overview %+v, %v; want it decoded", o, err)
			case tt.errText != "" && (err == nil || !strings.Contains(err.Error(), tt.errText)):
				t.Errorf("err = %v, want one saying %q", err, tt.errText)
			}
		})
	}
}

func TestTransportErrors(t *testing.T) {
	tests := []struct {
		name  string
		fault simulator.Fault
		text  string
	}{
		{name: "reset", fault: simulator.Fault{Kind: simulator.FaultReset}, text: ""},
		{name: "truncated body", fault: simulator.Fault{Kind: simulator.FaultTruncated}, text: "reading body"},
		{name: "hang", fault: simulator.Fault{Kind: simulator.FaultHang}, text: "deadline exceeded"},
		{name: "slow body past the deadline", fault: simulator.Fault{Kind: simulator.FaultSlowBody, Delay: 50 * time.Millisecond}, text: "reading body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sim, srv := startSim(t, simulator.Config{Events: 200, PageSize: 200})
			sim.SetFault(client.EndpointConflict, tt.fault)
			c := newClient(t, srv.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := c.ConflictEvents(ctx, func(client.Event) {})
			t.Logf("error text: %v", err)
			var te *client.TransportError
			if !errors.As(err, &te) {
				t.Fatalf("err = %v (%T), want a *client.TransportError", err, err)
			}
			if !strings.Contains(err.Error(), tt.text) || !strings.HasPrefix(err.Error(), "conflict page 1: ") {
				t.Errorf("err = %q, want it to start with the endpoint and contain %q", err, tt.text)
			}
			if strings.Contains(err.Error(), srv.URL) || strings.Contains(err.Error(), "http://") {
				t.Errorf("err = %q carries the request URL", err)
			}
		})
	}
	t.Run("connection refused", func(t *testing.T) {
		srv := httptest.NewServer(http.NotFoundHandler())
		srv.Close()
		_, err := newClient(t, srv.URL).Overview(context.Background())
		var te *client.TransportError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("err = %v, want a TransportError saying connection refused", err)
		}
	})
}

func TestOversizeBodyIsCutOffWithoutReadingIt(t *testing.T) {
	sim, srv := startSim(t, simulator.Config{})
	sim.SetFault(client.EndpointConflict, simulator.Fault{Kind: simulator.FaultOversize, Bytes: 256 << 20})
	c := newClient(t, srv.URL, func(cfg *client.Config) { cfg.MaxResponseBytes = 1 << 20 })

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, _, err := collectEvents(c)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, client.ErrBodyTooLarge) {
		t.Fatalf("err = %v, want ErrBodyTooLarge", err)
	}
	// Reading the 256 MiB body would allocate at least that much.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d MiB for a body cut off at 1 MiB", alloc>>20)
	}
}

func TestObserveHook(t *testing.T) {
	sim, srv := startSim(t, simulator.Config{Events: 5, PageSize: 2})
	sim.SetFault(client.DrilldownEndpoint(client.PillarMacro), simulator.Fault{Kind: simulator.FaultStatus, Status: 502})
	type obs struct {
		endpoint string
		page     int
		code     string
	}
	var mu sync.Mutex
	var got []obs
	c := newClient(t, srv.URL, func(cfg *client.Config) {
		cfg.Observe = func(r client.Request) {
			mu.Lock()
			defer mu.Unlock()
			if r.Duration <= 0 {
				t.Errorf("duration %v for %s", r.Duration, r.Endpoint)
			}
			if r.Bytes <= 0 {
				t.Errorf("%d bytes for %s: every answer here has a body", r.Bytes, r.Endpoint)
			}
			got = append(got, obs{r.Endpoint, r.Page, r.Code})
		}
	})
	ctx := context.Background()
	_, _, _ = collectEvents(c)
	_, _ = c.Drilldown(ctx, client.PillarMacro, nil)
	want := []obs{{"conflict", 1, "200"}, {"conflict", 2, "200"}, {"conflict", 3, "200"}, {"global-stability/pillar/macro", 0, "502"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("observed %v, want %v", got, want)
	}

	refused := httptest.NewServer(http.NotFoundHandler())
	refused.Close()
	got = nil
	c2 := newClient(t, refused.URL, func(cfg *client.Config) {
		cfg.Observe = func(r client.Request) { got = append(got, obs{r.Endpoint, r.Page, r.Code}) }
	})
	_, _ = c2.Summary(ctx)
	if fmt.Sprint(got) != fmt.Sprint([]obs{{"summaries", 0, "error"}}) {
		t.Errorf("observed %v for a refused connection, want [{summaries error}]", got)
	}
}

func TestUnknownPillarRefusedBeforeRequest(t *testing.T) {
	sim, srv := startSim(t, simulator.Config{})
	_, err := newClient(t, srv.URL).Drilldown(context.Background(), client.Pillar("weather"), nil)
	if err == nil || !strings.Contains(err.Error(), "weather") {
		t.Fatalf("err = %v, want an unknown-pillar error", err)
	}
	if n := sim.TotalRequests(); n != 0 {
		t.Errorf("%d requests sent for an invalid pillar", n)
	}
}

func TestAuthFailureAgainstSimulator(t *testing.T) {
	_, srv := startSim(t, simulator.Config{})
	c, err := client.New(client.Config{BaseURL: srv.URL, APIKey: client.StaticKey("wrong-key")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Overview(context.Background())
	if !errors.Is(err, client.ErrAuth) {
		t.Fatalf("err = %v, want ErrAuth", err)
	}
}

func TestKeyNeverPrinted(t *testing.T) {
	c, err := client.New(client.Config{BaseURL: "https://user:pass@api.example.com/", APIKey: client.StaticKey(testKey)})
	if err != nil {
		t.Fatal(err)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
		out := fmt.Sprintf(verb, c)
		if strings.Contains(out, testKey) || strings.Contains(out, "pass") {
			t.Errorf("Sprintf(%s, client) = %q leaks a secret", verb, out)
		}
		out = fmt.Sprintf(verb, *c)
		if strings.Contains(out, testKey) || strings.Contains(out, "pass") {
			t.Errorf("Sprintf(%s, *client) = %q leaks a secret", verb, out)
		}
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for _, base := range []string{"", "api.example.com", "ftp://api.example.com", "http://", "://x"} {
		if _, err := client.New(client.Config{BaseURL: base, APIKey: client.StaticKey("k")}); err == nil {
			t.Errorf("New(%q) succeeded, want an error", base)
		}
	}
	if _, err := client.New(client.Config{BaseURL: "http://x"}); err == nil {
		t.Error("New without a key source succeeded")
	}
}
