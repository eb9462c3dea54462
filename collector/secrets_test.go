// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/testutil/leakcheck"
	"github.com/global-stability/global_stability_exporter/internal/testutil/pipenet"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
)

// echoKeys are a mixed-case key and one holding every character some
// encoding changes ('#' cuts a URL, '/' is escaped by JSON encoders, '+'
// and '&' by percent-encoding).
var echoKeys = []string{
	"Tk9Z3xQeLmN0pR5sUvWyA1bC2dE4fG6hJ8kL",
	"Gsk/Live+Key#7Qx9_Zz-AbCdEfGh/ijKL&mnOP",
}

// echo is an upstream that writes the key it was sent back into one place
// of its answer. It answers every endpoint, valid JSON unless the case
// says otherwise, so only the place under test differs from a healthy API.
type echo struct {
	name string
	// endpoint is the one that echoes; the others answer healthily.
	endpoint string
	respond  func(w http.ResponseWriter, key string)
	// check says what a user must see instead of the key: the echo was
	// read, not skipped, so the test would notice a path it never ran.
	check func(t *testing.T, s promtext.Samples)
}

// failed wants endpoint to have failed the scrape.
func failed(endpoint string) func(*testing.T, promtext.Samples) {
	return func(t *testing.T, s promtext.Samples) {
		t.Helper()
		if v, ok := s.Get("global_stability_scrape_success", "endpoint", endpoint); !ok || v != 0 {
			t.Errorf("scrape_success{endpoint=%q} = %v (present %v), want 0: the echo was not read", endpoint, v, ok)
		}
	}
}

// leftOut wants one value of field counted invalid and series absent.
func leftOut(endpoint, field, series string) func(*testing.T, promtext.Samples) {
	return func(t *testing.T, s promtext.Samples) {
		t.Helper()
		if v, _ := s.Get("global_stability_invalid_values", "endpoint", endpoint, "field", field); v != 1 {
			t.Errorf("invalid_values{endpoint=%q,field=%q} = %v, want 1", endpoint, field, v)
		}
		if n := len(s.Family(series)); n != 0 {
			t.Errorf("%s has %d series, want none", series, n)
		}
	}
}

func healthyOverview(trend string) string {
	return fmt.Sprintf(`{"score":50,"trend":%q,"pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`, trend)
}

func jsonString(s string) string {
	b := strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s)
	return `"` + b + `"`
}

var echoCases = []echo{
	{"401 body, the key in the middle", "global-stability", func(w http.ResponseWriter, key string) {
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"message":"the key %s is revoked since yesterday"}`, key)
	}, failed("global-stability")},
	{"401 body, a slice of the Authorization header", "global-stability", func(w http.ResponseWriter, key string) {
		w.WriteHeader(http.StatusUnauthorized)
		auth := "Bearer " + key
		fmt.Fprintf(w, `{"error":"bad header","got":"%s…"}`, auth[3:len(auth)-4])
	}, failed("global-stability")},
	{"403 body, JSON-escaped with \\/", "global-stability", func(w http.ResponseWriter, key string) {
		w.WriteHeader(http.StatusForbidden)
		fmt.Fprintf(w, `{"message":"key %s has no scope"}`, strings.ReplaceAll(key, "/", `\/`))
	}, failed("global-stability")},
	{"500 body, percent-encoded", "global-stability", func(w http.ResponseWriter, key string) {
		w.WriteHeader(http.StatusInternalServerError)
		fmt.Fprintf(w, "upstream GET /auth?key=%s failed", url.QueryEscape(key))
	}, failed("global-stability")},
	{"502 body, base64 of the Authorization header", "global-stability", func(w http.ResponseWriter, key string) {
		w.WriteHeader(http.StatusBadGateway)
		fmt.Fprintf(w, "trace=%s", base64.StdEncoding.EncodeToString([]byte("Authorization: Bearer "+key)))
	}, failed("global-stability")},
	{"Content-Type holding the key, upper case", "global-stability", func(w http.ResponseWriter, key string) {
		w.Header().Set("Content-Type", "text/html; session="+strings.ToUpper(key))
		fmt.Fprint(w, "<html>login</html>")
	}, failed("global-stability")},
	{"Content-Encoding holding the key, mixed case", "global-stability", func(w http.ResponseWriter, key string) {
		w.Header().Set("Content-Encoding", "X-"+key)
		fmt.Fprint(w, healthyOverview("stable"))
	}, failed("global-stability")},
	{"Retry-After holding the key", "global-stability", func(w http.ResponseWriter, key string) {
		w.Header().Set("Retry-After", key)
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, "slow down")
	}, failed("global-stability")},
	{"Location elsewhere holding the key in path, query and fragment", "global-stability", func(w http.ResponseWriter, key string) {
		w.Header().Set("Location", "http://elsewhere.invalid/"+key+"/x?k="+key+"#"+key)
		w.WriteHeader(http.StatusFound)
	}, failed("global-stability")},
	{"Location that does not parse", "global-stability", func(w http.ResponseWriter, key string) {
		w.Header().Set("Location", "http://["+key)
		w.WriteHeader(http.StatusFound)
	}, failed("global-stability")},
	{"200 body that is not JSON", "global-stability", func(w http.ResponseWriter, key string) {
		fmt.Fprintf(w, "Bearer %s is not allowed here", key)
	}, failed("global-stability")},
	{"200 body cut inside the key", "global-stability", func(w http.ResponseWriter, key string) {
		fmt.Fprintf(w, `{"score":50,"trend":"%s`, key[:len(key)-3])
	}, failed("global-stability")},
	{"trend holding the key", "global-stability", func(w http.ResponseWriter, key string) {
		fmt.Fprint(w, healthyOverview(key))
	}, leftOut("global-stability", "trend", "global_stability_trend")},
	{"trend holding a piece of the key in lower case", "global-stability", func(w http.ResponseWriter, key string) {
		fmt.Fprint(w, healthyOverview("up "+strings.ToLower(key[4:16])+" down"))
	}, leftOut("global-stability", "trend", "global_stability_trend")},
	{"indicator key holding a piece of the key", "global-stability/pillar/cyber", func(w http.ResponseWriter, key string) {
		fmt.Fprintf(w, `{"pillar":"cyber","delta_24h":1,"indicators":[{"key":%s,"value":1}],"as_of":"2026-11-22T00:00:00Z"}`, jsonString("cves_"+key[2:14]))
	}, leftOut("global-stability/pillar/cyber", "indicators", "global_stability_pillar_indicator")},
	{"category holding the key", "conflict", func(w http.ResponseWriter, key string) {
		fmt.Fprintf(w, `{"events":[{"id":"evt_1","lat":1,"lon":2,"actors":[],"category":%s,"escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"}],"next_cursor":null}`, jsonString(key))
	}, leftOut("conflict", "events", "global_stability_conflict_events_by_category")},
}

// TestTheKeyNeverLeavesThroughAnEcho runs every place an upstream can
// write the key back (bodies, every response header the client reads,
// label values) against a mixed-case key and one full of characters that
// encodings change, and wants no piece of it (8 bytes or more, in any
// case, raw or encoded) in the log, at debug, or in /metrics.
func TestTheKeyNeverLeavesThroughAnEcho(t *testing.T) {
	for _, key := range echoKeys {
		for _, tc := range echoCases {
			t.Run(fmt.Sprintf("%.4s…/%s", key, tc.name), func(t *testing.T) {
				inBubble(t, func(t *testing.T) {
					healthy := fakeAPI(healthyBodies(func(p string) string {
						return `{"pillar":"` + p + `","delta_24h":0.5,"indicators":[],"as_of":"2026-11-22T00:00:00Z"}`
					}, healthyOverview("stable")))
					upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
						if strings.TrimPrefix(r.URL.Path, "/v1/") != tc.endpoint {
							healthy.ServeHTTP(w, r)
							return
						}
						tc.respond(w, strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
					})
					logs, body := scrapeWithKey(t, upstream, key)
					tc.check(t, parseSamples(t, body))
					if piece := leakcheck.Find(logs, key); piece != "" {
						t.Errorf("the log shows %q of the key:\n%s", piece, logs)
					}
					if piece := leakcheck.Find(body, key); piece != "" {
						t.Errorf("/metrics shows %q of the key", piece)
					}
				})
			})
		}
	}
}

// scrapeWithKey scrapes once through an exporter whose client sends key,
// logging at debug, and returns the log and the exposition. Call it in a
// bubble (inBubble).
func scrapeWithKey(t *testing.T, upstream http.Handler, key string) (string, string) {
	t.Helper()
	net := pipenet.Serve(upstream)
	t.Cleanup(net.Close)
	cl, err := client.New(client.Config{BaseURL: "http://api.test", APIKey: client.StaticKey(key), HTTPClient: net.Client()})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncBuffer{}
	logger := level.NewFilter(log.NewLogfmtLogger(logs), level.AllowDebug())
	cfg := collector.Config{Client: cl, Logger: logger}
	allOn(&cfg)
	h := handler.New(handler.Options{Collections: collector.NewCollections(cfg), Gatherer: prometheus.NewRegistry(), Logger: logger, DefaultTimeout: 5 * time.Second})
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	return logs.String(), rec.Body.String()
}

func parseSamples(t *testing.T, text string) promtext.Samples {
	t.Helper()
	s, err := promtext.Parse(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return s
}
