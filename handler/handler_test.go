// SPDX-License-Identifier: Apache-2.0

package handler

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-kit/log"
)

// TestScrapeTimeout: Prometheus' timeout header minus the offset, as
// blackbox_exporter does; a header that is not a number of seconds above 0
// and at most a day is ignored, and an offset that would leave nothing too.
func TestScrapeTimeout(t *testing.T) {
	h := func(v string) http.Header { return http.Header{"X-Prometheus-Scrape-Timeout-Seconds": {v}} }
	tests := []struct {
		header http.Header
		want   time.Duration
	}{
		{http.Header{}, 10 * time.Second},
		{h("15"), 14500 * time.Millisecond},
		{h("2.5"), 2 * time.Second},
		{h("0.3"), 300 * time.Millisecond}, // an offset that leaves nothing is ignored
		{h("junk"), 10 * time.Second},
		{h("-4"), 10 * time.Second},
		{h("NaN"), 10 * time.Second},
		{h("+Inf"), 10 * time.Second},
		{h("1e12"), 10 * time.Second},
		{h("0.001"), time.Millisecond},
		{h("0"), 10 * time.Second},                        // not above 0
		{h("0.5"), 500 * time.Millisecond},                // exactly the offset: nothing would be left
		{h("86400"), 24*time.Hour - 500*time.Millisecond}, // a day, the most taken
		{h("86400.5"), 10 * time.Second},
	}
	for _, tt := range tests {
		if got := ScrapeTimeout(tt.header, 10*time.Second, 500*time.Millisecond); got != tt.want {
			t.Errorf("ScrapeTimeout(%v) = %v, want %v", tt.header, got, tt.want)
		}
	}
}

// TestHeadAsksTheAPINothing: HEAD /metrics (a load balancer's health check,
// curl -I) answers 200 as exposition text without gathering: the handler
// has no collections to gather from, and a GET would panic on them.
func TestHeadAsksTheAPINothing(t *testing.T) {
	w := httptest.NewRecorder()
	New(Options{Logger: log.NewNopLogger()}).ServeHTTP(w, httptest.NewRequest(http.MethodHead, "/metrics", nil))
	if ct := w.Header().Get("Content-Type"); w.Code != http.StatusOK || !strings.HasPrefix(ct, "text/plain") || w.Body.Len() != 0 {
		t.Errorf("HEAD: status %d, Content-Type %q, %d bytes; want 200, text/plain and no body", w.Code, ct, w.Body.Len())
	}
}
