// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// invalidEntry is a value an endpoint exports (as a path into the decoded
// document), the field of global_stability_invalid_values that counts it,
// and what the scrape must lack once it is broken.
type invalidEntry struct {
	path  []any
	field string
	gone  func(s map[string]float64, healthy map[string]float64) bool
}

// invalidValue names, per endpoint, an invalidEntry picked by hand.
var invalidValue = map[string]invalidEntry{
	"global-stability":                     {[]any{"score"}, "score", lacks("global_stability_score")},
	"global-stability/pillar/conflict":     {[]any{"delta_24h"}, "delta_24h", lacks(`global_stability_pillar_delta_24h{pillar="conflict"}`)},
	"global-stability/pillar/cyber":        {[]any{"indicators", 0, "value"}, "indicators", lacks(`global_stability_pillar_indicator{indicator="ransomware_incidents_7d",pillar="cyber"}`)},
	"global-stability/pillar/supply_chain": {[]any{"as_of"}, "as_of", lacks(`global_stability_as_of_timestamp_seconds{endpoint="global-stability/pillar/supply_chain"}`)},
	"global-stability/pillar/macro": {[]any{"indicators"}, "indicators", func(s, _ map[string]float64) bool {
		for k := range s {
			if strings.HasPrefix(k, "global_stability_pillar_indicator{") && strings.Contains(k, `pillar="macro"`) {
				return false
			}
		}
		return true
	}},
	"conflict":  {[]any{"events", 0, "lat"}, "events", oneFewer("global_stability_conflict_events")},
	"briefings": {[]any{"briefings", 0, "published_at"}, "briefings", oneFewer("global_stability_briefings")},
	"summaries": {[]any{"as_of"}, "as_of", lacks(`global_stability_as_of_timestamp_seconds{endpoint="summaries"}`)},
}

// invalidValueOf is invalidValue's entry for the endpoint labelled label
// or, for an endpoint it does not list (one added since), one from its
// description: the first field it exports, whose series must go; else a
// required field of its list's first item, which costs that item only, so
// that its series are those of the same body without the item.
func invalidValueOf(t *testing.T, label string) invalidEntry {
	t.Helper()
	if iv, ok := invalidValue[label]; ok {
		return iv
	}
	i := slices.IndexFunc(endpoint.All(), func(e *endpoint.Endpoint) bool { return e.Label == label })
	if i < 0 {
		t.Fatalf("no endpoint %s", label)
	}
	e := endpoint.All()[i]
	for _, f := range e.Fields {
		if f.Metric == nil {
			continue
		}
		var path []any
		for _, p := range strings.Split(f.Name, ".") {
			path = append(path, p)
		}
		return invalidEntry{path, strings.Split(f.Name, ".")[0], func(s, _ map[string]float64) bool {
			for k := range s {
				if strings.HasPrefix(k, f.Metric.Name) && (f.Metric != endpoint.AsOf || strings.Contains(k, `"`+label+`"`)) {
					return false
				}
			}
			return true
		}}
	}
	if e.List == nil {
		t.Fatalf("%s exports nothing: it has no value to break", label)
	}
	item := slices.IndexFunc(e.List.Item, func(f endpoint.Field) bool { return !f.Optional })
	if item < 0 {
		t.Fatalf("%s: every field of its list's items is optional: no value costs an item", label)
	}
	return invalidEntry{[]any{e.List.Name, 0, e.List.Item[item].Name}, e.List.Name, func(s, _ map[string]float64) bool {
		// The reference: the endpoint's one-page body, its first item left out.
		doc := healthyBody(t, label)
		if _, paged := doc["next_cursor"]; paged {
			doc["next_cursor"] = nil
		}
		doc[e.List.Name] = doc[e.List.Name].([]any)[1:]
		ref := newEnv(t, simulator.Config{}, nil)
		body, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		ref.sim.SetFault(label, simulator.Fault{Kind: simulator.FaultBody, Body: string(body)})
		_, refBody := ref.scrape(t, "")
		return maps.Equal(ownSeries(s, label), ownSeries(series(t, refBody), label))
	}}
}

// ownSeries are the series of s that the endpoint labelled label alone feeds.
func ownSeries(s map[string]float64, label string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s {
		if slices.ContainsFunc(owned(label), func(o ownedSeries) bool { return o.is(k) }) {
			out[k] = v
		}
	}
	return out
}

func lacks(series string) func(s, _ map[string]float64) bool {
	return func(s, _ map[string]float64) bool { _, ok := s[series]; return !ok }
}

// oneFewer wants series present in both and one lower than healthy.
func oneFewer(series string) func(s, healthy map[string]float64) bool {
	return func(s, healthy map[string]float64) bool {
		got, ok := s[series]
		want, wantOK := healthy[series]
		return ok && wantOK && got == want-1
	}
}

// sample is a series' value; a series that is absent fails the test
// rather than reading as 0, which is what a failed endpoint reports.
func sample(t *testing.T, s map[string]float64, key string) float64 {
	t.Helper()
	v, ok := s[key]
	if !ok {
		t.Fatalf("%s is absent", key)
	}
	return v
}

// healthyBody is what the simulator serves for endpoint.
func healthyBody(t *testing.T, endpoint string) map[string]any {
	t.Helper()
	sim := simulator.New(simulator.Config{Key: testKey, Now: func() time.Time { return fixedNow }})
	r := httptest.NewRequest(http.MethodGet, "/v1/"+endpoint, nil)
	r.Header.Set("Authorization", "Bearer "+testKey)
	w := httptest.NewRecorder()
	sim.ServeHTTP(w, r)
	var doc map[string]any
	if err := json.Unmarshal(w.Body.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// mutate applies change to the field at path and returns the JSON.
func mutate(t *testing.T, doc map[string]any, path []any, change func(parent map[string]any, key string)) string {
	t.Helper()
	var cur any = doc
	for _, step := range path[:len(path)-1] {
		switch s := step.(type) {
		case string:
			cur = cur.(map[string]any)[s]
		case int:
			cur = cur.([]any)[s]
		}
	}
	change(cur.(map[string]any), path[len(path)-1].(string))
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type faultCase struct {
	name  string
	fault func(t *testing.T, endpoint string) simulator.Fault
}

func fixed(f simulator.Fault) func(*testing.T, string) simulator.Fault {
	return func(*testing.T, string) simulator.Fault { return f }
}

// faultCases are the faults that fail an endpoint: the API's, the
// network's, and a body that is not the document the spec describes.
var faultCases = []faultCase{
	{"5xx", fixed(simulator.Fault{Kind: simulator.FaultStatus, Status: 502})},
	{"401", fixed(simulator.Fault{Kind: simulator.FaultStatus, Status: 401})},
	{"403", fixed(simulator.Fault{Kind: simulator.FaultStatus, Status: 403})},
	{"404", fixed(simulator.Fault{Kind: simulator.FaultStatus, Status: 404})},
	{"429 with Retry-After", fixed(simulator.Fault{Kind: simulator.FaultStatus, Status: 429, RetryAfter: "1"})},
	{"hang past the deadline", fixed(simulator.Fault{Kind: simulator.FaultHang})},
	// 16 bytes every 600ms: any body of two chunks or more outlasts the 1s.
	{"slow trickling body", fixed(simulator.Fault{Kind: simulator.FaultSlowBody, Delay: 600 * time.Millisecond})},
	{"non-JSON with 200", fixed(simulator.Fault{Kind: simulator.FaultNonJSON})},
	{"truncated body", fixed(simulator.Fault{Kind: simulator.FaultTruncated})},
	{"oversize body", fixed(simulator.Fault{Kind: simulator.FaultOversize, Bytes: 64 << 20})},
	{"connection reset", fixed(simulator.Fault{Kind: simulator.FaultReset})},
	{"wrong Content-Type", fixed(simulator.Fault{Kind: simulator.FaultContentType})},
	{"an array, not an object", fixed(simulator.Fault{Kind: simulator.FaultBody, Body: `[{"score":1}]`})},
}

// slice returns, under -short, each case once on an endpoint that changes
// from case to case (every fault and every endpoint still appear); else
// every case on every endpoint.
func slice[T any](t *testing.T, cases []T) (out []struct {
	endpoint string
	c        T
}) {
	endpoints := endpointLabels()
	for i, c := range cases {
		for j, endpoint := range endpoints {
			if !testing.Short() || j == i%len(endpoints) {
				out = append(out, struct {
					endpoint string
					c        T
				}{endpoint, c})
			}
		}
	}
	if testing.Short() {
		t.Logf("-short: %d of %d cases, each fault on one endpoint", len(out), len(cases)*len(endpoints))
	}
	return out
}

// TestEveryFaultOnEveryEndpoint: /metrics answers 200 within the deadline,
// up is 0, only the faulty endpoint fails and loses its series, the log has
// one line for it, nothing shows the key, no goroutine outlives the
// scrape, and once the fault clears the next scrape is whole.
func TestEveryFaultOnEveryEndpoint(t *testing.T) {
	for _, tc := range slice(t, faultCases) {
		endpoint, fc := tc.endpoint, tc.c
		{
			t.Run(endpoint+"/"+fc.name, func(t *testing.T) {
				inBubble(t, func(t *testing.T) { // which fails if a goroutine outlives it
					e := newEnvWithClient(t, simulator.Config{}, nil, func(c *client.Config) { c.MaxResponseBytes = 1 << 20 })
					e.sim.SetFault(endpoint, fc.fault(t, endpoint))

					var before, after runtime.MemStats
					runtime.ReadMemStats(&before)
					start := time.Now()
					code, body := e.scrape(t, "1.5") // 1s to wait for the API
					elapsed := time.Since(start)
					runtime.ReadMemStats(&after)

					s := series(t, body)
					if code != 200 || elapsed > time.Second {
						t.Fatalf("status %d after %v, want 200 within the deadline", code, elapsed)
					}
					if got := sample(t, s, "global_stability_up"); got != 0 {
						t.Errorf("up = %v, want 0", got)
					}
					for _, other := range endpointLabels() {
						ok := other != endpoint
						if got := sample(t, s, fmt.Sprintf("global_stability_scrape_success{endpoint=%q}", other)); got != map[bool]float64{true: 1, false: 0}[ok] {
							t.Errorf("scrape_success{endpoint=%q} = %v", other, got)
						}
						for _, o := range owned(other) {
							if o.in(s) != ok {
								t.Errorf("series %s present = %v", o, !ok)
							}
						}
					}
					logs := e.logs.String()
					if lines := strings.Split(strings.TrimSpace(logs), "\n"); len(lines) != 1 || !strings.Contains(lines[0], "failed_endpoints="+endpoint+" ") {
						t.Errorf("want one log line naming %s, got:\n%s", endpoint, logs)
					}
					if strings.Contains(logs+body, testKey) {
						t.Error("the API key appears in the log or the metrics")
					}
					// A body is never read whole: the oversize one is 64 MiB.
					if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
						t.Errorf("the scrape allocated %d MiB", alloc>>20)
					}
					t.Logf("log: %s", strings.TrimSpace(logs))

					e.sim.ClearFaults()
					if fc.name == "429 with Retry-After" {
						time.Sleep(1100 * time.Millisecond) // the back-off the API asked for
					}
					if _, body := e.scrape(t, "1.5"); series(t, body)["global_stability_up"] != 1 {
						t.Errorf("after the fault cleared, up is not 1:\n%s", body)
					}
					e.close()
				})
			})
		}
	}
}

// invalidCases break one exported value: missing, null, of the wrong type.
var invalidCases = []struct {
	name   string
	change func(parent map[string]any, key string)
}{
	{"missing", func(p map[string]any, k string) { delete(p, k) }},
	{"null", func(p map[string]any, k string) { p[k] = nil }},
	{"wrong type", func(p map[string]any, k string) {
		if _, isNum := p[k].(float64); isNum {
			p[k] = "12"
		} else {
			p[k] = 12
		}
	}},
}

// TestEveryInvalidValueOnEveryEndpoint: a bad value costs its own series
// and nothing else. The endpoint succeeds, global_stability_invalid_values
// counts it under its field, every other series is there, and one warning
// says what was left out.
func TestEveryInvalidValueOnEveryEndpoint(t *testing.T) {
	var healthySeries map[string]float64
	inBubble(t, func(t *testing.T) {
		_, body := newEnv(t, simulator.Config{}, nil).scrape(t, "")
		healthySeries = series(t, body)
	})
	for _, tc := range slice(t, invalidCases) {
		endpoint, ic := tc.endpoint, tc.c
		t.Run(endpoint+"/"+ic.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T) {
				iv := invalidValueOf(t, endpoint)
				e := newEnv(t, simulator.Config{}, nil)
				doc := healthyBody(t, endpoint)
				if _, paged := doc["next_cursor"]; paged {
					// One fixed body serves every page: make it the only one.
					doc["next_cursor"] = nil
				}
				e.sim.SetFault(endpoint, simulator.Fault{Kind: simulator.FaultBody, Body: mutate(t, doc, iv.path, ic.change)})
				reference := healthySeries
				if _, paged := doc["next_cursor"]; paged {
					// The reference for a one-page list: the same body unbroken.
					ref := newEnv(t, simulator.Config{}, nil)
					ref.sim.SetFault(endpoint, simulator.Fault{Kind: simulator.FaultBody, Body: mutate(t, healthyBody(t, endpoint), []any{"next_cursor"}, func(p map[string]any, k string) { p[k] = nil })})
					_, refBody := ref.scrape(t, "")
					reference = series(t, refBody)
				}
				_, body := e.scrape(t, "")
				s := series(t, body)
				if sample(t, s, "global_stability_up") != 1 || sample(t, s, fmt.Sprintf("global_stability_scrape_success{endpoint=%q}", endpoint)) != 1 {
					t.Fatalf("a bad value failed the scrape:\n%s", e.logs)
				}
				if got := sample(t, s, fmt.Sprintf("global_stability_invalid_values{endpoint=%q,field=%q}", endpoint, iv.field)); got != 1 {
					t.Errorf("invalid_values{field=%q} = %v, want 1", iv.field, got)
				}
				if !iv.gone(s, reference) {
					t.Errorf("the series of the bad value is still there, or more went with it:\n%s", body)
				}
				for _, other := range endpointLabels() {
					if other == endpoint {
						continue
					}
					for _, o := range owned(other) {
						if !o.in(s) {
							t.Errorf("series %s of %s went missing", o, other)
						}
					}
				}
				logs := strings.TrimSpace(e.logs.String())
				if lines := strings.Split(logs, "\n"); len(lines) != 1 || !strings.Contains(lines[0], "level=warn") || !strings.Contains(lines[0], " endpoint="+endpoint+" ") {
					t.Errorf("want one warning naming %s, got %d lines:\n%q", endpoint, len(lines), logs)
				}
			})
		})
	}
}

func TestExtraFieldsAreIgnored(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		for _, endpoint := range endpointLabels() {
			doc := healthyBody(t, endpoint)
			if _, paged := doc["next_cursor"]; paged {
				doc["next_cursor"] = nil // one fixed body serves every page: make it the last
			}
			extra := mutate(t, doc, invalidValueOf(t, endpoint).path, func(p map[string]any, k string) { p["x_unknown_"+k] = map[string]any{"n": []any{1, "two", nil}} })
			extra = strings.Replace(extra, "{", `{"api_version":"1.4","meta":{"warnings":[]},`, 1)
			e := newEnv(t, simulator.Config{}, nil)
			e.sim.SetFault(endpoint, simulator.Fault{Kind: simulator.FaultBody, Body: extra})
			if _, body := e.scrape(t, ""); series(t, body)["global_stability_up"] != 1 {
				t.Errorf("%s: extra fields made the scrape fail: %s", endpoint, e.logs)
			}
		}
	})
}

// TestKeyEchoedByUpstreamIsRedacted: an upstream that echoes the
// Authorization header back, in an error body or a non-JSON 200 body,
// still never gets the key into the log or the metrics, even at debug.
func TestKeyEchoedByUpstreamIsRedacted(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		echo := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth := r.Header.Get("Authorization")
			switch {
			case strings.HasSuffix(r.URL.Path, "/global-stability"):
				w.WriteHeader(http.StatusUnauthorized)
				fmt.Fprintf(w, `{"error":"invalid key","received":%q}`, auth)
			case strings.HasSuffix(r.URL.Path, "/summaries"):
				w.Header().Set("Content-Type", "text/html; x="+strings.TrimPrefix(auth, "Bearer "))
				fmt.Fprint(w, auth)
			default:
				fmt.Fprintf(w, "<html>%s</html>", auth)
			}
		})
		e := newEnv(t, simulator.Config{}, echo)
		_, body := e.scrape(t, "")
		if logs := e.logs.String(); strings.Contains(logs+body, testKey) || !strings.Contains(logs, "<redacted>") {
			t.Errorf("want the echoed key redacted everywhere; log:\n%s", logs)
		}
	})
}

func TestMaxRequestsLimitsConcurrentScrapes(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, simulator.Config{Latency: 500 * time.Millisecond}, nil)
		h := handler.New(handler.Options{Collections: e.scraper, Gatherer: prometheus.NewRegistry(), Logger: log.NewNopLogger(), DefaultTimeout: 5 * time.Second, InFlight: make(chan struct{}, 2)})
		codes := make(chan int, 6)
		for range 6 {
			go func() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
				codes <- w.Code
			}()
		}
		count := map[int]int{}
		for range 6 {
			count[<-codes]++
		}
		if count[200] != 2 || count[503] != 4 {
			t.Errorf("with --web.max-requests=2, 6 concurrent scrapes got %v, want two 200 and four 503", count)
		}
	})
}

// TestLoad200ConcurrentScrapes: every scrape answers whole, the upstream
// sees one collection's worth of requests, and memory stays bounded.
func TestLoad200ConcurrentScrapes(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		e := newEnv(t, simulator.Config{Latency: 300 * time.Millisecond}, nil)
		h := handler.New(handler.Options{Collections: e.scraper, Gatherer: prometheus.NewRegistry(), Logger: log.NewNopLogger(), DefaultTimeout: 10 * time.Second})
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)

		const scrapes = 200
		type outcome struct {
			code int
			up   bool
		}
		results := make(chan outcome, scrapes)
		for range scrapes {
			go func() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/metrics", nil))
				s, err := promtext.Parse(w.Body.String())
				up, ok := s.Get("global_stability_up")
				results <- outcome{w.Code, err == nil && ok && up == 1}
			}()
		}
		for range scrapes {
			if o := <-results; o.code != 200 || !o.up {
				t.Errorf("a scrape answered %d (up 1: %v)", o.code, o.up)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		// The scrapes arrive within the 300ms the first collection is in flight:
		// one collection, 1 + 4 + 3 + 1 + 1 requests.
		if got, want := e.sim.TotalRequests(), oneCollection(3); got != want {
			t.Errorf("%d concurrent scrapes sent %d upstream requests, want one collection's %d", scrapes, got, want)
		}
		if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 16<<20 {
			t.Errorf("heap in use grew by %d MiB over %d scrapes", grown>>20, scrapes)
		}
	})
}
