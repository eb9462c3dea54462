// SPDX-License-Identifier: Apache-2.0

package handler_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-kit/log"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/testutil/pipenet"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

const key = "handler-test-key-0123"

// probeHandler is a probe's handler (no long-lived metrics) of an API whose
// every answer may be reused for ten minutes, over pipenet: it runs in a
// synctest bubble too.
func probeHandler(t *testing.T, events int, renderings chan struct{}) http.Handler {
	t.Helper()
	net := pipenet.Serve(simulator.New(simulator.Config{Key: key, Events: events, PageSize: 1000, CacheControl: "max-age=600"}))
	t.Cleanup(net.Close)
	cl, err := client.New(client.Config{BaseURL: "http://api.test", APIKey: client.StaticKey(key), HTTPClient: net.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return handler.New(handler.Options{
		Collections: collector.NewCollections(collector.Config{Client: cl, Logger: log.NewNopLogger(), Endpoints: endpoint.All(),
			Endpoint: endpoint.Config{Store: endpoint.NewStore(true)}}),
		Logger: log.NewNopLogger(), DefaultTimeout: 10 * time.Second, TimeoutOffset: 500 * time.Millisecond, Renderings: renderings,
	})
}

// sent is a response as a scrape received it, with the bytes it was handed.
type sent struct {
	*httptest.ResponseRecorder
	handed []byte
}

func (s *sent) Write(b []byte) (int, error) {
	if s.handed == nil {
		s.handed = b
	}
	return s.ResponseRecorder.Write(b)
}

func get(h http.Handler, accept, encoding, timeout string) *sent {
	r := httptest.NewRequest(http.MethodGet, "/probe", nil)
	r.Header.Set("Accept", accept)
	r.Header.Set("Accept-Encoding", encoding)
	r.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", timeout)
	w := &sent{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, r)
	return w
}

// families decodes a response in the format and compression it names.
func families(t *testing.T, w *sent) map[string]bool {
	t.Helper()
	body := io.Reader(bytes.NewReader(w.Body.Bytes()))
	if w.Header().Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(body)
		if err != nil {
			t.Fatal(err)
		}
		body = zr
	}
	dec := expfmt.NewDecoder(body, expfmt.ResponseFormat(w.Header()))
	names := map[string]bool{}
	for {
		fam := &dto.MetricFamily{}
		if err := dec.Decode(fam); errors.Is(err, io.EOF) {
			return names
		} else if err != nil {
			t.Fatalf("%s, %s: %v", w.Header().Get("Content-Type"), w.Header().Get("Content-Encoding"), err)
		}
		names[fam.GetName()] = true
	}
}

// TestProbesShareOneResponsePerNegotiation: scrapes of one warm rendering
// are handed one response, encoded and compressed once, for each format and
// compression asked for: each the one its headers ask for, however they
// interleave; a new rendering is encoded anew.
func TestProbesShareOneResponsePerNegotiation(t *testing.T) {
	h := probeHandler(t, 1000, nil)
	text, proto := "text/plain;version=0.0.4;q=0.5,*/*;q=0.1", `application/vnd.google.protobuf;proto=io.prometheus.client.MetricFamily;encoding=delimited;q=0.7,text/plain;version=0.0.4;q=0.3`
	fetched := get(h, text, "gzip", "10") // the answers fetched: that rendering is the fetch's own
	first := map[string][]byte{}
	for round := range 3 {
		for _, tc := range []struct{ accept, encoding, wantType, wantEncoding string }{
			{text, "gzip", "text/plain", "gzip"},
			{text, "", "text/plain", ""},
			{proto, "gzip", "application/vnd.google.protobuf", "gzip"},
			{proto, "identity", "application/vnd.google.protobuf", ""},
		} {
			w := get(h, tc.accept, tc.encoding, "10")
			if ct := w.Header().Get("Content-Type"); w.Code != http.StatusOK || !strings.HasPrefix(ct, tc.wantType) || w.Header().Get("Content-Encoding") != tc.wantEncoding {
				t.Fatalf("round %d, Accept %q, Accept-Encoding %q: %d, %q, %q", round, tc.accept, tc.encoding, w.Code, ct, w.Header().Get("Content-Encoding"))
			}
			if f := families(t, w); !f["global_stability_up"] || !f["global_stability_conflict_events"] || !f["global_stability_api_backoff_seconds"] {
				t.Fatalf("round %d, %q, %q: families %v", round, tc.accept, tc.encoding, f)
			}
			k := tc.accept + tc.encoding
			if round == 0 {
				first[k] = w.handed
			} else if &w.handed[0] != &first[k][0] {
				t.Errorf("round %d, %q, %q: encoded again, not shared", round, tc.accept, tc.encoding)
			}
		}
	}
	if &fetched.handed[0] == &first[text+"gzip"][0] {
		t.Error("the fetch's rendering and the store's share a response")
	}
	if w := get(h, text, "gzip, br;q=0", "10"); &w.handed[0] == &first[text+"gzip"][0] {
		t.Error("a scrape asking otherwise was handed another's response")
	}
}

// TestRenderingsWaitForAPlaceUntilTheirDeadline: with every place for a
// rendering taken, a scrape waits for one; it renders as soon as one is
// free, and answers 503 at its deadline if none is, never later.
func TestRenderingsWaitForAPlaceUntilTheirDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		places := make(chan struct{}, 1)
		h := probeHandler(t, 10, places)
		get(h, "", "gzip", "10") // the store filled: scrapes then send no request
		places <- struct{}{}     // another scrape's rendering
		start := time.Now()
		w := get(h, "", "gzip", "2")
		if w.Code != http.StatusServiceUnavailable || time.Since(start) != 1500*time.Millisecond {
			t.Errorf("no place free: %d after %v, want 503 at the deadline, 1.5s (2s less the offset)", w.Code, time.Since(start))
		}
		done := make(chan *sent)
		start = time.Now()
		go func() { done <- get(h, "", "", "2") }()
		time.Sleep(time.Second)
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("a scrape rendered with no place free")
		default:
		}
		<-places // the other rendering ends
		w = <-done
		if s, err := promtext.Parse(w.Body.String()); err != nil || w.Code != http.StatusOK || time.Since(start) != time.Second {
			t.Fatalf("a place freed after 1s: %d after %v (%v), want 200 then", w.Code, time.Since(start), err)
		} else if v, _ := s.Get("global_stability_up"); v != 1 {
			t.Errorf("up = %v after waiting for a place", v)
		}
	})
}
