package client

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"testing"
	"testing/iotest"
	"time"

	"github.com/global-stability/global_stability_exporter/simulator"
)

// eventPage renders one page of n events as the simulator serves it.
func eventPage(b *testing.B, n int) []byte {
	b.Helper()
	sim := simulator.New(simulator.Config{Key: "k", Events: n, PageSize: n, Now: func() time.Time { return time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC) }})
	r := httptest.NewRequest(http.MethodGet, "/v1/conflict", nil)
	r.Header.Set("Authorization", "Bearer k")
	w := httptest.NewRecorder()
	sim.ServeHTTP(w, r)
	return w.Body.Bytes()
}

// BenchmarkDecodeEventPage decodes a page of 1,000 events, the unit of work
// of /v1/conflict, with the scanner the client uses and, for comparison,
// with the encoding/json reference it replaced.
func BenchmarkDecodeEventPage(b *testing.B) {
	page := eventPage(b, 1000)
	for _, bc := range []struct {
		name   string
		decode pageDecoder[Event]
	}{
		{"scanner", newEventPages().decode},
		{"encoding_json", referenceEventPage},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			var items []Event
			for b.Loop() {
				var err error
				items, _, err = bc.decode(bytes.NewReader(page), items[:0])
				if err != nil || len(items) != 1000 {
					b.Fatalf("decoded %d events: %v", len(items), err)
				}
			}
		})
	}
}

// TestEventPageDecoderByteByByte: a real page of 300 events decodes the same
// whether it arrives at once or a byte at a time (every refill path), and
// the same as with encoding/json.
func TestEventPageDecoderByteByByte(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: "k", Events: 300, PageSize: 300, Now: func() time.Time { return time.Date(2026, 11, 22, 4, 0, 0, 0, time.UTC) }})
	r := httptest.NewRequest(http.MethodGet, "/v1/conflict", nil)
	r.Header.Set("Authorization", "Bearer k")
	w := httptest.NewRecorder()
	sim.ServeHTTP(w, r)
	page := w.Body.Bytes()

	whole, _, err1 := newEventPages().decode(bytes.NewReader(page), nil)
	trickled, _, err2 := newEventPages().decode(iotest.OneByteReader(bytes.NewReader(page)), nil)
	ref, _, err3 := referenceEventPage(bytes.NewReader(page), nil)
	if err1 != nil || err2 != nil || err3 != nil || len(whole) != 300 {
		t.Fatalf("errors %v, %v, %v; %d events", err1, err2, err3, len(whole))
	}
	if !reflect.DeepEqual(whole, trickled) {
		t.Error("decoding byte by byte differs from decoding at once")
	}
	for i := range whole {
		if whole[i].ID != ref[i].ID || !whole[i].OccurredAt.Equal(ref[i].OccurredAt) || whole[i].Lat != ref[i].Lat || !slices.Equal(whole[i].Actors, ref[i].Actors) {
			t.Fatalf("event %d: scanner %+v, encoding/json %+v", i, whole[i], ref[i])
		}
	}
}
