package client

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/simulator"
)

// eventPage renders one page of n events as the simulator serves it.
func eventPage(tb testing.TB, n int) []byte {
	tb.Helper()
	sim := simulator.New(simulator.Config{Key: "k", Events: n, PageSize: n, Now: func() time.Time { return time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC) }})
	r := httptest.NewRequest(http.MethodGet, "/v1/conflict", nil)
	r.Header.Set("Authorization", "Bearer k")
	w := httptest.NewRecorder()
	sim.ServeHTTP(w, r)
	return w.Body.Bytes()
}

// BenchmarkDecodeEventPage decodes a page of 1,000 events, the unit of work
// of /v1/conflict, with the scanner the client uses and, for comparison,
// with the encoding/json reference of the tests.
func BenchmarkDecodeEventPage(b *testing.B) {
	page := eventPage(b, 1000)
	b.Run("scanner", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		d := newEventPages(fuzzSeed)
		for b.Loop() {
			n := 0
			if _, err := d.decode(bytes.NewReader(page), 1, fuzzNow, DefaultMaxNameBytes, nil, func(eventWithID) { n++ }); err != nil || n != 1000 {
				b.Fatalf("decoded %d events: %v", n, err)
			}
		}
	})
	b.Run("encoding_json", func(b *testing.B) {
		b.SetBytes(int64(len(page)))
		b.ReportAllocs()
		for b.Loop() {
			if events, _, _, err := fuzzRules.eventPage(page); err != nil || len(events) != 1000 {
				b.Fatalf("decoded %d events: %v", len(events), err)
			}
		}
	})
}

// TestEventPageDecoderOnARealPage: a real page of 300 events decodes the
// same whether it arrives at once or a byte at a time (every refill path),
// and the same as with the reference; none is invalid.
func TestEventPageDecoderOnARealPage(t *testing.T) {
	page := eventPage(t, 300)
	ref, cursor, refInv, err := fuzzRules.eventPage(page)
	if err != nil || len(ref) != 300 || refInv.Total() != 0 {
		t.Fatalf("reference: %d events, %v invalid, %v", len(ref), refInv.Counts, err)
	}
	differ(t, page, nil, show(cursor, ref, refInv), decodeEventsShown)
}
