// SPDX-License-Identifier: Apache-2.0

package endpoint_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// TestEveryReadSizeGivesOneResult: the simulator's answer of every
// endpoint, read whole, in halves, through windows of a few bytes, and a
// byte at a time (so that every name, value and escape crosses a refill,
// or ends just before one), gives one result: what a window held is never
// read after the next one replaced it.
func TestEveryReadSizeGivesOneResult(t *testing.T) {
	now := time.Date(2026, 11, 22, 4, 37, 12, 0, time.UTC)
	sim := simulator.New(simulator.Config{Key: "read-size-key-0123", Seed: 3, Events: 200, PageSize: 200, Briefings: 20, Now: func() time.Time { return now }})
	for _, e := range endpoint.All() {
		req := httptest.NewRequest(http.MethodGet, "/v1/"+e.Label, nil)
		req.Header.Set("Authorization", "Bearer read-size-key-0123")
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		// An escaped name and value too, and a name whose colon is far off.
		body := strings.Replace(rec.Body.String(), `{`, `{"\u0061ctors" `+strings.Repeat(" ", 40)+`: "\u00e9\n\ud83d\ude00", `, 1)
		read := func(r io.Reader, window int) string {
			col := e.Start(endpoint.Config{Now: func() time.Time { return now }})
			next, err := endpoint.ReadInWindow(col, r, 1, window)
			if err != nil {
				t.Fatalf("%s (window %d): %v", e.Label, window, err)
			}
			res := col.Result()
			return fmt.Sprint(next, res.Samples, res.Invalid, res.Dropped, res.Duplicates)
		}
		want := read(strings.NewReader(body), endpoint.WindowBytes)
		if !strings.Contains(want, "[{") {
			t.Fatalf("%s: no series read: %s", e.Label, want)
		}
		for _, window := range []int{1, 2, 3, 7, 13, 64, 1000} {
			if got := read(iotest.OneByteReader(strings.NewReader(body)), window); got != want {
				t.Errorf("%s, a byte at a time, window %d:\n%s\nwhole:\n%s", e.Label, window, got, want)
			}
			if got := read(strings.NewReader(body), window); got != want {
				t.Errorf("%s, window %d:\n%s\nwhole:\n%s", e.Label, window, got, want)
			}
		}
		if got := read(iotest.HalfReader(strings.NewReader(body)), endpoint.WindowBytes); got != want {
			t.Errorf("%s, in halves:\n%s\nwhole:\n%s", e.Label, got, want)
		}
	}
}

// BenchmarkReadPage reads a page of conflict events spread over the globe,
// judged and folded as a collection does, at 1,000, 10,000 and 100,000
// events (the last, the ids' set past any cache, as the bench harness's
// largest volume has it).
func BenchmarkReadPage(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		var page strings.Builder
		page.WriteString(`{"events":[`)
		for i := range n {
			if i > 0 {
				page.WriteByte(',')
			}
			fmt.Fprintf(&page, `{"id":"evt_%d","lat":%g,"lon":%g,"actors":["a","b"],"category":"category_%d","escalation":0.%d,"occurred_at":"2026-11-22T%02d:%02d:00Z"}`,
				i, -87.5+5*float64(i/72%36), -177.5+5*float64(i%72), i%12, i%10, i/60%4, i%60)
		}
		page.WriteString(`],"next_cursor":null}`)
		body := page.String()
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				col := endpoint.Conflict.Start(endpoint.Config{Now: func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }})
				if _, err := col.Read(strings.NewReader(body), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
