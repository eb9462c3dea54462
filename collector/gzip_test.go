package collector

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// get serves one request with the given Accept-Encoding ("" for none) and
// returns the response and its body, uncompressed when it says gzip.
func get(t *testing.T, h http.Handler, acceptEncoding string) (*http.Response, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if acceptEncoding != "" {
		r.Header.Set("Accept-Encoding", acceptEncoding)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp := w.Result()
	var body io.Reader = resp.Body
	if resp.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			t.Fatalf("Content-Encoding gzip, but the body is not: %v", err)
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		t.Fatalf("reading the body: %v", err)
	}
	return resp, string(b)
}

func TestGzipNegotiation(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "some_gauge", Help: "A gauge."})
	g.Set(42)
	reg.MustRegister(g)
	h := newGzipHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{DisableCompression: true}))

	for _, tc := range []struct {
		acceptEncoding string
		gzip           bool
	}{
		{"", false},
		{"gzip", true},
		{"GZIP", true},
		{"deflate, gzip;q=1.0, *;q=0.5", true}, // Prometheus' own header
		{"br, gzip ; q=0.2", true},
		{"gzip;q=0", false},
		{"gzip;q=0.000", false},
		{"gzip;q=zero", false},
		{"identity", false},
		{"br", false},
		{"*", true},
		{"*;q=0", false},
		{"gzip;q=0, *", false}, // refused by name: "*" does not bring it back
		{"*;q=0, gzip;q=0.5", true},
	} {
		resp, body := get(t, h, tc.acceptEncoding)
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != tc.gzip {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", tc.acceptEncoding, got, tc.gzip)
		}
		if !strings.Contains(body, "\nsome_gauge 42\n") {
			t.Errorf("Accept-Encoding %q: body %q lacks the gauge", tc.acceptEncoding, body)
		}
		if !strings.Contains(strings.Join(resp.Header.Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: Vary %q does not name Accept-Encoding", tc.acceptEncoding, resp.Header.Values("Vary"))
		}
	}
}

// promhttp answers a failed gather with a plain-text error after deleting
// Content-Encoding; that answer must go out as it is, not compressed.
func TestGzipLeavesPlainErrorsAlone(t *testing.T) {
	h := newGzipHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Del("Content-Encoding")
		http.Error(w, "an error of the handler", http.StatusInternalServerError)
	}))
	resp, body := get(t, h, "gzip")
	if resp.StatusCode != http.StatusInternalServerError || resp.Header.Get("Content-Encoding") != "" || body != "an error of the handler\n" {
		t.Errorf("got %d, Content-Encoding %q, body %q; want the plain error", resp.StatusCode, resp.Header.Get("Content-Encoding"), body)
	}
}
