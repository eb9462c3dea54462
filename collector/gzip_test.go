package collector

import (
	"compress/gzip"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/global-stability/global_stability_exporter/internal/promtext"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// get serves one request with the given Accept-Encoding ("" for none) and
// returns the status, the headers and the body, uncompressed when the
// headers say gzip.
func get(t *testing.T, h http.Handler, acceptEncoding string) (int, http.Header, string) {
	t.Helper()
	r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	if acceptEncoding != "" {
		r.Header.Set("Accept-Encoding", acceptEncoding)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	resp := w.Result()
	defer resp.Body.Close()
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
	return resp.StatusCode, resp.Header, string(b)
}

func TestGzipNegotiation(t *testing.T) {
	reg := prometheus.NewRegistry()
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "some_value", Help: "A value."})
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
		_, header, body := get(t, h, tc.acceptEncoding)
		if got := header.Get("Content-Encoding") == "gzip"; got != tc.gzip {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", tc.acceptEncoding, got, tc.gzip)
		}
		if s, err := promtext.Parse(body); err != nil || s["some_value"] != 42 {
			t.Errorf("Accept-Encoding %q: body %q lacks the gauge", tc.acceptEncoding, body)
		}
		if !strings.Contains(strings.Join(header.Values("Vary"), ","), "Accept-Encoding") {
			t.Errorf("Accept-Encoding %q: Vary %q does not name Accept-Encoding", tc.acceptEncoding, header.Values("Vary"))
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
	status, header, body := get(t, h, "gzip")
	if status != http.StatusInternalServerError || header.Get("Content-Encoding") != "" || body != "an error of the handler\n" {
		t.Errorf("got %d, Content-Encoding %q, body %q; want the plain error", status, header.Get("Content-Encoding"), body)
	}
}
