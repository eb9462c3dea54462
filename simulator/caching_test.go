// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"
)

func conditionalGet(s *Simulator, target string, header ...string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	s.ServeHTTP(w, r)
	return w
}

// TestValidatorsAnd304: the ETag names the body, Last-Modified its as_of;
// either, sent back, gets 304 while the data are unchanged, and a 200 once
// they change.
func TestValidatorsAnd304(t *testing.T) {
	now := t0
	s := New(Config{Key: key, Validators: true, CacheControl: "max-age=30", Now: func() time.Time { return now }})
	w := conditionalGet(s, "/v1/global-stability")
	etag, lm := w.Header().Get("ETag"), w.Header().Get("Last-Modified")
	if w.Code != http.StatusOK || etag == "" || lm != "Sun, 22 Nov 2026 04:37:00 GMT" || w.Header().Get("Cache-Control") != "max-age=30" {
		t.Fatalf("status %d, ETag %q, Last-Modified %q, Cache-Control %q", w.Code, etag, lm, w.Header().Get("Cache-Control"))
	}
	for _, h := range [][]string{{"If-None-Match", etag}, {"If-None-Match", `"x", W/` + etag}, {"If-Modified-Since", lm}} {
		w = conditionalGet(s, "/v1/global-stability", h...)
		if w.Code != http.StatusNotModified || w.Body.Len() != 0 || w.Header().Get("ETag") != etag || w.Header().Get("Cache-Control") != "max-age=30" {
			t.Errorf("%v: status %d, %d body bytes, ETag %q, Cache-Control %q; want 304 repeating the ETag and Cache-Control", h, w.Code, w.Body.Len(), w.Header().Get("ETag"), w.Header().Get("Cache-Control"))
		}
	}
	// If-None-Match decides alone: a stale one gets the body, whatever the date says.
	if w = conditionalGet(s, "/v1/global-stability", "If-None-Match", `"old"`, "If-Modified-Since", lm); w.Code != http.StatusOK {
		t.Errorf("a stale If-None-Match: status %d, want 200", w.Code)
	}
	now = now.Add(time.Minute) // the overview moves every minute
	if w = conditionalGet(s, "/v1/global-stability", "If-None-Match", etag); w.Code != http.StatusOK || w.Header().Get("ETag") == etag {
		t.Errorf("changed data: status %d, ETag %q; want 200 and a new ETag", w.Code, w.Header().Get("ETag"))
	}
	// Off by default.
	if w = conditionalGet(New(Config{Key: key, Now: func() time.Time { return now }}), "/v1/global-stability"); w.Header().Get("ETag") != "" || w.Header().Get("Cache-Control") != "" {
		t.Errorf("default config sends ETag %q, Cache-Control %q", w.Header().Get("ETag"), w.Header().Get("Cache-Control"))
	}
}

// TestRateLimitHeaders: the quota is announced in both conventions, counts
// down, and is enforced with 429 and Retry-After until the hour turns.
func TestRateLimitHeaders(t *testing.T) {
	now := t0
	s := New(Config{Key: key, RateLimit: 3, Now: func() time.Time { return now }})
	for i := 1; i <= 4; i++ {
		w := conditionalGet(s, "/v1/summaries")
		remaining := max(3-i, 0)
		if got := w.Header().Get("X-RateLimit-Remaining"); got != strconv.Itoa(remaining) {
			t.Errorf("request %d: X-RateLimit-Remaining %q, want %d", i, got, remaining)
		}
		if w.Header().Get("RateLimit-Policy") != `"hourly";q=3;w=3600` || w.Header().Get("X-RateLimit-Reset") != strconv.FormatInt(t0.Truncate(time.Hour).Add(time.Hour).Unix(), 10) {
			t.Errorf("request %d: RateLimit-Policy %q, X-RateLimit-Reset %q", i, w.Header().Get("RateLimit-Policy"), w.Header().Get("X-RateLimit-Reset"))
		}
		if want := map[bool]int{true: http.StatusTooManyRequests, false: http.StatusOK}[i > 3]; w.Code != want {
			t.Errorf("request %d: status %d, want %d", i, w.Code, want)
		}
	}
	now = now.Truncate(time.Hour).Add(time.Hour)
	if w := conditionalGet(s, "/v1/summaries"); w.Code != http.StatusOK {
		t.Errorf("a new hour: status %d", w.Code)
	}
}
