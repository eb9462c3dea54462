// SPDX-License-Identifier: Apache-2.0

package client_test

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
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

// getJSON gets endpoint and decodes its body as a JSON object, as a
// decoder would: a body that is not JSON is ErrNotJSON.
func getJSON(ctx context.Context, c *client.Client, endpoint string) (map[string]any, error) {
	var doc map[string]any
	_, err := c.Get(ctx, endpoint, client.DocumentLimit, client.Validators{}, func(r io.Reader) error {
		if err := json.NewDecoder(r).Decode(&doc); err != nil {
			return fmt.Errorf("%w: %w", client.ErrNotJSON, err)
		}
		return nil
	})
	return doc, err
}

func summary(c *client.Client) (map[string]any, error) {
	return getJSON(context.Background(), c, "summaries")
}

func overview(c *client.Client) (map[string]any, error) {
	return getJSON(context.Background(), c, "global-stability")
}

// walk walks /v1/conflict, reading each page's next_cursor (a string, a
// number or null) and counting the events.
func walk(c *client.Client) (events int, err error) {
	return walkCtx(context.Background(), c)
}

func walkCtx(ctx context.Context, c *client.Client) (events int, err error) {
	_, err = c.Walk(ctx, "conflict", client.PageLimit, pageReader(func(r io.Reader, _ int) (string, error) {
		var page struct {
			Events []json.RawMessage `json:"events"`
			Next   json.RawMessage   `json:"next_cursor"`
		}
		if err := json.NewDecoder(r).Decode(&page); err != nil {
			return "", fmt.Errorf("%w: %w", client.ErrNotJSON, err)
		}
		events += len(page.Events)
		var next string
		if json.Unmarshal(page.Next, &next) != nil && string(page.Next) != "null" {
			next = string(page.Next)
		}
		return next, nil
	}))
	return events, err
}

// pageReader is a client.Pager that sends no validators: every page is read.
type pageReader func(body io.Reader, page int) (next string, err error)

func (pageReader) Validators(int, string) client.Validators        { return client.Validators{} }
func (f pageReader) Read(body io.Reader, page int) (string, error) { return f(body, page) }
func (pageReader) Answered(_ int, _ string, _ client.Meta, next string) (string, error) {
	return next, nil
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
	events, err := walk(c)
	if err != nil {
		t.Fatalf("walk: %v", err)
	}
	if events != 3 || len(seen) != 3 {
		t.Fatalf("got %d events in %d requests, want 3 in 3 (page size 1 sent as limit=1)", events, len(seen))
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
		fmt.Fprint(w, `{"events":[],"next_cursor":null}`)
	})
	if _, err := walk(newClient(t, srv.URL)); err != nil {
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
			events, err := walk(newClient(t, srv.URL, mods...))
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("err = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr == nil && events != tt.want {
				t.Errorf("got %d events, want %d", events, tt.want)
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
			_, err := summary(newClient(t, srv.URL))
			var se *client.StatusError
			if !errors.As(err, &se) || se.StatusCode != tt.status || se.Endpoint != "summaries" {
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
		{name: "no Content-Type", contentType: "", body: []byte(okOverview)},
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
			o, err := overview(newClient(t, srv.URL))
			switch {
			case tt.errText == "" && (err != nil || o["score"] != 40.0):
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
			sim.SetFault("conflict", tt.fault)
			c := newClient(t, srv.URL)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err := walkCtx(ctx, c)
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
		_, err := overview(newClient(t, srv.URL))
		var te *client.TransportError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), "connection refused") {
			t.Fatalf("err = %v, want a TransportError saying connection refused", err)
		}
	})
}

func TestOversizeBodyIsCutOffWithoutReadingIt(t *testing.T) {
	sim, srv := startSim(t, simulator.Config{})
	sim.SetFault("conflict", simulator.Fault{Kind: simulator.FaultOversize, Bytes: 256 << 20})
	c := newClient(t, srv.URL, func(cfg *client.Config) { cfg.MaxResponseBytes = 1 << 20 })

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := walk(c)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, client.ErrBodyTooLarge) {
		t.Fatalf("err = %v, want ErrBodyTooLarge", err)
	}
	// Reading the 256 MiB body would allocate at least that much.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 32<<20 {
		t.Errorf("allocated %d MiB for a body cut off at 1 MiB", alloc>>20)
	}
}

// TestALargeBodyIsReadWithoutBeingHeld: a page within the limit reaches
// its reader as a stream; the client keeps of it only the start that a
// message may quote, never the whole page beside the reader's own work.
func TestALargeBodyIsReadWithoutBeingHeld(t *testing.T) {
	sim, srv := startSim(t, simulator.Config{})
	sim.SetFault("conflict", simulator.Fault{Kind: simulator.FaultOversize, Bytes: 16 << 20})
	c := newClient(t, srv.URL, func(cfg *client.Config) { cfg.MaxResponseBytes = 64 << 20 })

	var read int64
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := c.Walk(context.Background(), "conflict", client.PageLimit, pageReader(func(r io.Reader, _ int) (string, error) {
		n, err := io.Copy(io.Discard, r)
		read += n
		return "", err
	}))
	runtime.ReadMemStats(&after)
	if err != nil || read < 16<<20 {
		t.Fatalf("read %d bytes, err %v; want the 16 MiB page whole", read, err)
	}
	// Holding the page would allocate at least its size.
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Errorf("allocated %d MiB to read a 16 MiB page", alloc>>20)
	}
}

func TestObserveHook(t *testing.T) {
	sim, srv := startSim(t, simulator.Config{Events: 5, PageSize: 2})
	sim.SetFault("global-stability/pillar/macro", simulator.Fault{Kind: simulator.FaultStatus, Status: 502})
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
	_, _ = walk(c)
	_, _ = getJSON(ctx, c, "global-stability/pillar/macro")
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
	_, _ = summary(c2)
	if fmt.Sprint(got) != fmt.Sprint([]obs{{"summaries", 0, "error"}}) {
		t.Errorf("observed %v for a refused connection, want [{summaries error}]", got)
	}
}

func TestAuthFailureAgainstSimulator(t *testing.T) {
	_, srv := startSim(t, simulator.Config{})
	c, err := client.New(client.Config{BaseURL: srv.URL, APIKey: client.StaticKey("wrong-key")})
	if err != nil {
		t.Fatal(err)
	}
	_, err = overview(c)
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
	for _, base := range []string{"", "api.example.com", "ftp://api.example.com", "http://", "://x", testKey} {
		if _, err := client.New(client.Config{BaseURL: base, APIKey: client.StaticKey("k")}); err == nil || strings.Contains(err.Error(), testKey[4:20]) {
			t.Errorf("New(%q): %v, want an error that does not quote a key", base, err)
		}
	}
	if _, err := client.New(client.Config{BaseURL: "http://x"}); err == nil {
		t.Error("New without a key source succeeded")
	}
}

const okOverview = `{"score":40,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`

// TestARefusedRedirectReportsItsOwnQuota: a redirect refused is the
// endpoint's latest response, so the quota it announced is reported, and
// one it did not is reported as not sent, never as a quota of 0.
func TestARefusedRedirectReportsItsOwnQuota(t *testing.T) {
	for _, headers := range []map[string]string{{}, {"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "7"}} {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			for name, value := range headers {
				w.Header().Set(name, value)
			}
			http.Redirect(w, r, "http://elsewhere.invalid/v1/summaries", http.StatusFound)
		})
		var got []client.Request
		_, err := summary(newClient(t, srv.URL, func(cfg *client.Config) {
			cfg.Observe = func(r client.Request) { got = append(got, r) }
		}))
		if !errors.Is(err, client.ErrRedirectRefused) || len(got) != 1 {
			t.Fatalf("headers %v: err %v, observed %+v: want one refused redirect", headers, err, got)
		}
		limit, remaining := -1.0, -1.0
		if len(headers) > 0 {
			limit, remaining = 100, 7
		}
		if q := got[0].RateLimit; got[0].Code != "302" || q.Limit != limit || q.Remaining != remaining {
			t.Errorf("headers %v: code %s, quota %+v: want 302, limit %v and remaining %v", headers, got[0].Code, q, limit, remaining)
		}
	}
}
