// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// pagedAPI serves healthy bodies everywhere but on endpoint, whose pages
// are keyed by the cursor that asks for them ("" for the first). It counts
// the requests each page gets.
type pagedAPI struct {
	endpoint string
	pages    map[string]string

	mu       sync.Mutex
	requests int
}

func (p *pagedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint := strings.TrimPrefix(r.URL.Path, "/v1/")
	if endpoint != p.endpoint {
		fakeAPI(healthyBodies(func(pillar string) string {
			return `{"pillar":"` + pillar + `","delta_24h":0.5,"indicators":[],"as_of":"2026-11-22T00:00:00Z"}`
		}, healthyOverview("stable"))).ServeHTTP(w, r)
		return
	}
	p.mu.Lock()
	p.requests++
	p.mu.Unlock()
	body, ok := p.pages[r.URL.Query().Get("cursor")]
	if !ok {
		http.Error(w, "unknown cursor", http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, body)
}

func event(id string, lat float64) string {
	return fmt.Sprintf(`{"id":%q,"lat":%g,"lon":10,"actors":["a"],"category":"battles","escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}`, id, lat)
}

func briefing(id, published string) string {
	return fmt.Sprintf(`{"id":%q,"headline":"h","summary":"s","tags":[],"published_at":%q}`, id, published)
}

func page(list string, items []string, next string) string {
	cursor := "null"
	if next != "" {
		cursor = fmt.Sprintf("%q", next)
	}
	return fmt.Sprintf(`{%q:[%s],"next_cursor":%s}`, list, strings.Join(items, ","), cursor)
}

// TestACursorCycleIsALoop: a server that sends A, B, C and then A again is
// looping, however many pages apart the repeat is: the endpoint fails
// saying so at the repeat, rather than after --api.max-pages pages with a
// hint to raise the limit.
func TestACursorCycleIsALoop(t *testing.T) {
	for _, list := range []struct{ endpoint, key, item string }{
		{"conflict", "events", event("evt_1", 1)},
		{"briefings", "briefings", briefing("brf_1", "2026-11-22T00:00:00Z")},
	} {
		t.Run(list.endpoint, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				api := &pagedAPI{endpoint: list.endpoint, pages: map[string]string{
					"":  page(list.key, []string{list.item}, "A"),
					"A": page(list.key, []string{list.item}, "B"),
					"B": page(list.key, []string{list.item}, "C"),
					"C": page(list.key, []string{list.item}, "A"),
				}}
				e := newEnv(t, simulator.Config{}, api)
				_, body := e.scrape(t, "")
				s := parseSamples(t, body)
				if v, ok := s.Get("global_stability_scrape_success", "endpoint", list.endpoint); !ok || v != 0 {
					t.Errorf("a cursor cycle A→B→C→A: scrape_success = %v (present %v), want 0", v, ok)
				}
				if api.requests != 4 || !strings.Contains(e.logs.String(), "cursor repeated") {
					t.Errorf("want the walk stopped at the repeat (4 requests, a log saying the cursor repeated); %d requests, log:\n%s", api.requests, e.logs)
				}
			})
		})
	}
}

// TestInvalidItemsAreCountedOverEveryPage: items left out on the first and
// the last page both count, and the valid ones of every page are counted.
func TestInvalidItemsAreCountedOverEveryPage(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		bad := event("evt_bad", 91) // not a latitude
		api := &pagedAPI{endpoint: "conflict", pages: map[string]string{
			"":   page("events", []string{event("evt_1", 1), bad, bad}, "p2"),
			"p2": page("events", []string{event("evt_2", 2), event("evt_3", 3)}, "p3"),
			"p3": page("events", []string{bad, event("evt_4", 4), bad, bad}, ""),
		}}
		_, body := newEnv(t, simulator.Config{}, api).scrape(t, "")
		s := parseSamples(t, body)
		if v, _ := s.Get("global_stability_invalid_values", "endpoint", "conflict", "field", "events"); v != 5 {
			t.Errorf("invalid events over three pages = %v, want 2 + 0 + 3 = 5", v)
		}
		if v, _ := s.Get("global_stability_conflict_events"); v != 4 {
			t.Errorf("conflict_events = %v, want the 4 valid events of all pages", v)
		}

		briefings := &pagedAPI{endpoint: "briefings", pages: map[string]string{
			"":   page("briefings", []string{briefing("brf_1", "not a time"), briefing("brf_2", "2026-11-21T00:00:00Z")}, "p2"),
			"p2": page("briefings", []string{briefing("brf_3", "2026-11-22T00:00:00Z"), briefing("brf_4", "")}, ""),
		}}
		_, body = newEnv(t, simulator.Config{}, briefings).scrape(t, "")
		s = parseSamples(t, body)
		if v, _ := s.Get("global_stability_invalid_values", "endpoint", "briefings", "field", "briefings"); v != 2 {
			t.Errorf("invalid briefings over two pages = %v, want 2", v)
		}
		if v, _ := s.Get("global_stability_briefing_latest_published_timestamp_seconds"); v != float64(time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC).Unix()) {
			t.Errorf("newest briefing = %v, want the one on the second page", v)
		}
	})
}

// chunkedTransport serves a handler in-process and hands its body to the
// client in reads of the given sizes, cycling (or split once at split, if
// set): every byte of a body becomes a read boundary somewhere.
type chunkedTransport struct {
	handler http.Handler
	sizes   []int
	split   int
}

func (c chunkedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	c.handler.ServeHTTP(rec, r)
	resp := rec.Result()
	var reads []int
	if c.split > 0 {
		reads = []int{c.split, 1 << 30}
	} else {
		reads = c.sizes
	}
	resp.Body = io.NopCloser(&chunkedReader{data: rec.Body.Bytes(), sizes: reads})
	resp.Request = r
	return resp, nil
}

type chunkedReader struct {
	data  []byte
	sizes []int
	i     int
}

func (r *chunkedReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), len(r.data), r.sizes[r.i%len(r.sizes)])
	r.i++
	copy(p, r.data[:n])
	r.data = r.data[n:]
	return n, nil
}

// dataSeries is every series of a scrape but the durations, which differ
// from scrape to scrape.
func dataSeries(s promtext.Samples) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s {
		if !strings.HasPrefix(k, "global_stability_scrape_duration_seconds") {
			out[k] = v
		}
	}
	return out
}

// TestEveryReadBoundary: the same bodies, handed over in reads of 1, 2, 3,
// 7, 64 and 4095 bytes, and split once at every offset of the first 400
// bytes (inside every key, between a key and its colon, inside a number, a
// string, an escape), export exactly what they export read whole.
func TestEveryReadBoundary(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		sim := simulator.New(simulator.Config{Key: testKey, Seed: 3, Events: 40, PageSize: 15, Briefings: 4, Now: func() time.Time { return fixedNow }})
		scrape := func(tr http.RoundTripper) map[string]float64 {
			t.Helper()
			cl, err := client.New(client.Config{BaseURL: "http://api.test", APIKey: client.StaticKey(testKey), HTTPClient: &http.Client{Transport: tr}})
			if err != nil {
				t.Fatal(err)
			}
			cfg := collector.Config{Client: cl, Logger: log.NewNopLogger(), Endpoint: endpoint.Config{Now: func() time.Time { return fixedNow }}}
			allOn(&cfg)
			h := handler.New(handler.Options{Collections: collector.NewCollections(cfg), Gatherer: prometheus.NewRegistry(), Logger: log.NewNopLogger(), DefaultTimeout: 5 * time.Second})
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
			return dataSeries(parseSamples(t, rec.Body.String()))
		}
		whole := scrape(chunkedTransport{handler: sim, sizes: []int{1 << 30}})
		if whole["global_stability_up"] != 1 || whole["global_stability_conflict_events"] != 40 {
			t.Fatalf("the reference scrape is not whole: %v", whole)
		}
		check := func(name string, tr chunkedTransport) {
			got := scrape(tr)
			for k, v := range whole {
				if g, ok := got[k]; !ok || g != v {
					t.Fatalf("%s: %s = %v (present %v), want %v as read whole", name, k, g, ok, v)
				}
			}
			if len(got) != len(whole) {
				t.Fatalf("%s: %d series, want %d", name, len(got), len(whole))
			}
		}
		for _, sizes := range [][]int{{1}, {2}, {3}, {7}, {64}, {4095}, {1, 4096, 3}} {
			check(fmt.Sprintf("reads of %v bytes", sizes), chunkedTransport{handler: sim, sizes: sizes})
		}
		for split := 1; split <= 400; split++ {
			check(fmt.Sprintf("split at %d", split), chunkedTransport{handler: sim, split: split})
		}
	})
}

// TestNumbersJSONForbids: a number JSON does not allow (a leading zero, a
// plus sign, a bare dot, hex, NaN…) makes the body not JSON, wherever it
// sits: in an exported value, in a cursor, in a field never exported. The
// endpoint fails, as for any body that is not JSON; the same places with a
// valid number of unusual form succeed.
func TestNumbersJSONForbids(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		places := []struct {
			endpoint string
			body     func(n string) string
		}{
			{"global-stability", func(n string) string {
				return `{"score":` + n + `,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`
			}},
			{"global-stability", func(n string) string {
				return `{"score":50,"trend":"stable","pillars":{"conflict":1,"cyber":` + n + `,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`
			}},
			{"global-stability", func(n string) string {
				return `{"score":50,"version":` + n + `,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`
			}},
			{"global-stability/pillar/cyber", func(n string) string {
				return `{"pillar":"cyber","delta_24h":` + n + `,"indicators":[],"as_of":"2026-11-22T00:00:00Z"}`
			}},
			{"global-stability/pillar/cyber", func(n string) string {
				return `{"pillar":"cyber","score":` + n + `,"delta_24h":1,"indicators":[{"key":"k","value":` + n + `}],"as_of":"2026-11-22T00:00:00Z"}`
			}},
			{"conflict", func(n string) string {
				return `{"events":[{"id":"evt_1","lat":` + n + `,"lon":1,"actors":[],"category":"c","escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}],"next_cursor":null}`
			}},
			{"conflict", func(n string) string {
				return `{"events":[{"id":"evt_1","lat":1,"lon":1,"actors":[` + n + `],"category":"c","escalation":` + n + `,"occurred_at":"2026-11-22T00:00:00Z"}],"next_cursor":null}`
			}},
			{"conflict", func(n string) string { return `{"events":[],"next_cursor":` + n + `}` }},
			{"briefings", func(n string) string {
				return `{"briefings":[{"id":"brf_1","rank":` + n + `,"published_at":"2026-11-22T00:00:00Z"}],"next_cursor":null}`
			}},
			{"summaries", func(n string) string { return `{"summary":"s","words":` + n + `,"as_of":"2026-11-22T00:00:00Z"}` }},
		}
		forbidden := []string{"07", "-01", "00", "01.5", "1.", ".5", "+1", "1e", "1e+", "-", "0x1F", "NaN", "Infinity", "-Infinity", "1_000", "1.5.2", "--1", "0-1"}
		valid := []string{"0", "-0", "1e1", "1E+1", "0.5e-0", "12.5"}
		for i, p := range places {
			for _, n := range append(forbidden, valid...) {
				ok := !containsString(forbidden, n)
				// A valid number as next_cursor is passed back as its text.
				api := &pagedAPI{endpoint: p.endpoint, pages: map[string]string{"": p.body(n), n: page("events", nil, "")}}
				_, body := newEnv(t, simulator.Config{}, api).scrape(t, "")
				got, present := parseSamples(t, body).Get("global_stability_scrape_success", "endpoint", p.endpoint)
				if want := map[bool]float64{true: 1, false: 0}[ok]; !present || got != want {
					t.Errorf("place %d (%s) with %s: scrape_success = %v (present %v), want %v", i, p.endpoint, n, got, present, want)
				}
			}
		}
	})
}

func containsString(list []string, s string) bool {
	for _, l := range list {
		if l == s {
			return true
		}
	}
	return false
}

// TestBodyLimitCountsDecodedBytes: the limit is on what is decoded, not
// on what crosses the wire: a gzip body of a few hundred bytes that
// inflates past the limit fails its endpoint, named with the flag that
// raises it; one that inflates to just under the limit is fine.
func TestBodyLimitCountsDecodedBytes(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		const limit = 4096
		for _, tc := range []struct {
			padding int
			ok      bool
		}{{padding: 100_000, ok: false}, {padding: limit - 300, ok: true}} {
			plain := `{"summary":"` + strings.Repeat("x", tc.padding) + `","as_of":"2026-11-22T00:00:00Z"}`
			var zipped bytes.Buffer
			zw := gzip.NewWriter(&zipped)
			_, _ = io.WriteString(zw, plain)
			_ = zw.Close()
			api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/v1/summaries" {
					(&pagedAPI{}).ServeHTTP(w, r)
					return
				}
				w.Header().Set("Content-Encoding", "gzip")
				_, _ = w.Write(zipped.Bytes())
			})
			e := newEnvWithClient(t, simulator.Config{}, api, func(c *client.Config) { c.MaxDocumentBytes = limit })
			_, body := e.scrape(t, "")
			got, _ := parseSamples(t, body).Get("global_stability_scrape_success", "endpoint", "summaries")
			if want := map[bool]float64{true: 1, false: 0}[tc.ok]; got != want {
				t.Errorf("%d gzip bytes inflating to %d with a %d-byte limit: scrape_success %v, want %v\n%s", zipped.Len(), len(plain), limit, got, want, e.logs)
			}
			if !tc.ok && !strings.Contains(e.logs.String(), "--api.max-document-bytes") {
				t.Errorf("the failure should name the flag that raises the limit:\n%s", e.logs)
			}
		}
	})
}

// TestAnErrorBodyIsReadOnlyForItsExcerpt: a 401 with a 16 MiB body is read
// for its excerpt and a little more (to reuse the connection when little
// is left), never whole.
func TestAnErrorBodyIsReadOnlyForItsExcerpt(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		huge := strings.Repeat("denied ", (16<<20)/7)
		api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/v1/summaries" {
				(&pagedAPI{}).ServeHTTP(w, r)
				return
			}
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, huge)
		})
		var mu sync.Mutex
		var read int64
		e := newEnvWithClient(t, simulator.Config{}, api, func(c *client.Config) {
			c.Observe = func(r client.Request) {
				if r.Endpoint == "summaries" {
					mu.Lock()
					read = r.Bytes
					mu.Unlock()
				}
			}
		})
		e.scrape(t, "")
		mu.Lock()
		defer mu.Unlock()
		if read == 0 || read > 128<<10 {
			t.Errorf("read %d bytes of a 16 MiB error body, want its excerpt and at most a 64 KiB drain", read)
		}
	})
}
