// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/global-stability/global_stability_exporter/client"
)

// The fast paths of the reader and the rules are held to the general code
// they shortcut: each gives exactly its answer, or leaves the value to it.

// FuzzShortDecimal: a number shortDecimal reads is the float64
// strconv.ParseFloat reads, to the bit (a negative zero included).
func FuzzShortDecimal(f *testing.F) {
	for _, s := range []string{"0", "-0", "1", "-87.5", "0.1", "0.3", "179.999999999999", "123456789012345", "1234567890123456", "0.000000000000001", "9007199254740993", "90071992547409.93", "1e5", "-0.0", "100"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if s == "" || s[0] != '-' && (s[0] < '0' || s[0] > '9') || strings.TrimSpace(s) != s || !json.Valid([]byte(s)) {
			return // not a JSON number
		}
		got, ok := shortDecimal([]byte(s))
		want, err := strconv.ParseFloat(s, 64)
		if ok && (err != nil || math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("shortDecimal(%q) = %v, ParseFloat %v, %v", s, got, want, err)
		}
		if digits := len(s) - strings.Count(s, "-") - strings.Count(s, "."); !ok && digits <= 15 && !strings.ContainsAny(s, "eE") {
			t.Fatalf("shortDecimal(%q) left a short decimal to ParseFloat", s)
		}
	})
}

// FuzzUTCTimestamp: an instant utcTimestamp reads is the one time.Parse
// reads with RFC 3339's layout, and every RFC 3339 UTC time of the form
// the API sends, years 1 to 9999, is read by it.
func FuzzUTCTimestamp(f *testing.F) {
	for _, s := range []string{
		"2026-11-22T04:30:00Z", "2026-11-22T04:30:00.5Z", "2026-11-22T04:30:00.123456789Z", "2024-02-29T23:59:59Z",
		"2026-02-29T00:00:00Z", "2000-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "0001-01-01T00:00:00Z", "9999-12-31T23:59:59.999999999Z",
		"2026-11-22T24:00:00Z", "2026-11-22T04:60:00Z", "2016-12-31T23:59:60Z", "2026-11-22T04:30:00.Z", "2026-11-22T04:30:00.1234567891Z",
		"2026-11-22t04:30:00z", "2026-11-22T04:30:00+00:00", "2026-1a-22T04:30:00Z", "1969-12-31T23:59:59.5Z", "0000-03-01T00:00:00Z",
	} {
		f.Add(s)
	}
	for _, y := range []int{2024, 2026, 2000, 1900} { // every month's end, in leap years and not
		for m := 1; m <= 12; m++ {
			for d := 28; d <= 32; d++ {
				f.Add(fmt.Sprintf("%04d-%02d-%02dT23:59:59Z", y, m, d))
			}
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := utcTimestamp(s)
		want, err := time.Parse(time.RFC3339Nano, s)
		if ok && (err != nil || !got.Equal(want) || got.Location() != time.UTC) {
			t.Fatalf("utcTimestamp(%q) = %v, time.Parse %v, %v", s, got, want, err)
		}
		if gotBytes, okBytes := utcTimestamp([]byte(s)); okBytes != ok || !gotBytes.Equal(got) {
			t.Fatalf("utcTimestamp(%q) reads bytes otherwise than a string", s)
		}
		usual := len(s) >= 20 && s[len(s)-1] == 'Z' && s[10] == 'T' && (len(s) == 20 || s[19] == '.' && len(s) <= 30) && !strings.HasPrefix(s, "0000")
		if !ok && err == nil && usual {
			t.Fatalf("utcTimestamp(%q) left the usual form to time.Parse", s)
		}
	})
}

// TestPlainASCII: a string's text is taken as its bytes exactly when it is
// ASCII without an escape, whatever its length and wherever the byte that
// is not.
func TestPlainASCII(t *testing.T) {
	if !plainASCII(nil) {
		t.Error("no text is not plain")
	}
	for n := range 20 {
		for at := range n {
			for _, c := range []byte{'a', '\\', 0x7f, 0x80, 0xc3, 0xff, ' '} {
				b := []byte(strings.Repeat("x", n))
				b[at] = c
				want := c < 0x80 && c != '\\'
				if got := plainASCII(b); got != want {
					t.Fatalf("plainASCII(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
}

// FuzzReadInAnyWindow: every endpoint reads a body through a window of one
// byte, where no fast path applies (no token whole in the window, no
// member name matched as written), as it does through the full window:
// the same error class, the same series, the same invalid values.
func FuzzReadInAnyWindow(f *testing.F) {
	for _, s := range []string{
		`{"events":[{"id":"e1","lat":-87.5,"lon":-177.5,"actors":["a","b"],"category":"riot","escalation":0.3,"occurred_at":"2026-11-22T00:03:00Z"}],"next_cursor":null}`,
		`{"events":[{"lat":1,"id":"e\u0031","lon":01,"category":"r","escalation":-0,"occurred_at":"2026-11-22T00:03:00.5Z"},{"id" : "e2","lat":1.5e1}],"next_cursor":"c"}`,
		`{"events":[{"id":"e1","lat":1,"lon":2,"category":"\u00e9","escalation":0.25,"occurred_at":"2026-02-29T00:00:00Z"}, 7],"next_cursor":null}`,
		`{"pillar":"cyber","delta_24h":-1.25,"as_of":"2026-11-22T04:30:00Z","indicators":[{"key":"a","value":1},{"value":2,"key":"b"}]}`,
		`{"score":42.5,"trend":"up","as_of":"2026-11-22T04:30:00Z","pillars":{"conflict":1,"cyber":2.5,"supply_chain":3,"macro":100}}`,
	} {
		for which := range All() {
			f.Add(s, uint8(which))
		}
	}
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	all := All()
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		e := all[int(which)%len(all)]
		read := func(window int) string {
			col := e.Start(Config{Now: func() time.Time { return now }})
			s := newScanner(iotest.OneByteReader(strings.NewReader(body)))
			if window > 1 {
				s = newScanner(strings.NewReader(body))
			}
			s.buf, s.window = make([]byte, window), window
			next, err := col.readWith(s, 1)
			var de *client.DecodeError
			switch {
			case errors.Is(err, client.ErrNotJSON):
				return "not JSON"
			case errors.As(err, &de):
				return "decode error: " + de.Field
			case err != nil:
				return err.Error()
			}
			r := col.Result()
			return fmt.Sprint(next, r.Samples, r.Invalid, r.Dropped, r.Duplicates)
		}
		if whole, byByte := read(WindowBytes), read(1); whole != byByte {
			t.Fatalf("%s: whole %s\nbyte by byte %s", e.Label, whole, byByte)
		}
	})
}

// TestCountsByNameBeyondTheInternedNames: a category counted by its
// number and one past the names a collection numbers are counted alike,
// and past the names tracked, neither is, however busy.
func TestCountsByNameBeyondTheInternedNames(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"events":[`)
	add := func(category string, n int) {
		for range n {
			fmt.Fprintf(&b, `{"lat":1,"lon":1,"category":%q,"escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z"},`, category)
		}
	}
	names := minTracked + 100 // past every name interned, and past those tracked at a cap of 1,000
	for i := range names {
		add(fmt.Sprintf("c%05d", i), 1)
	}
	early, numbered, late := "c00001", "c02000", fmt.Sprintf("c%05d", minTracked+50)
	add(early, 2)
	add(numbered, 4)
	add(late, 3)
	body := strings.TrimSuffix(b.String(), ",") + `],"next_cursor":null}`
	for _, tc := range []struct {
		limit int
		want  map[string]float64 // 0: not kept
	}{
		{1100, map[string]float64{early: 3, numbered: 5, late: 4}}, // 11,000 names tracked: all
		{1000, map[string]float64{early: 3, numbered: 5, late: 0}}, // 10,000 tracked: the first
	} {
		col := Conflict.Start(Config{MaxLabelValues: tc.limit, Now: func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }})
		if _, err := col.Read(strings.NewReader(body), 1); err != nil {
			t.Fatal(err)
		}
		r := col.Result()
		counts := map[string]float64{}
		for _, s := range r.Samples {
			if s.Metric == ConflictEventsByCategory {
				counts[s.Labels[0]] = s.Value
			}
		}
		for name, want := range tc.want {
			if counts[name] != want || len(counts) != tc.limit {
				t.Errorf("limit %d: %s counted %v, want %v (%d kept)", tc.limit, name, counts[name], want, len(counts))
			}
		}
		if d := r.Dropped[ConflictEventsByCategory.Name]; d != names-tc.limit {
			t.Errorf("limit %d: dropped %d, want %d", tc.limit, d, names-tc.limit)
		}
	}
}

// BenchmarkRules judges the values of an event as the API sends them: the
// rules' fast paths (shortDecimal, utcTimestamp, plainASCII, a name
// numbered once) against their general readers.
func BenchmarkRules(b *testing.B) {
	c := Config{}.withDefaults()
	for _, tc := range []struct {
		name string
		rule Rule
		raw  string
	}{
		{"latitude", Latitude, `-87.5`},
		{"escalation", Number, `0.3`},
		{"escalation, exponent (general)", Number, `3e-1`},
		{"occurred_at", Timestamp, `"2026-11-22T00:03:00Z"`},
		{"occurred_at, offset (general)", Timestamp, `"2026-11-22T01:03:00+01:00"`},
		{"category", LabelValue, `"category_3"`},
		{"category, escaped (general)", LabelValue, `"categor\u0079_3"`},
		{"id", ID, `"evt_123"`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			raw := jsontext.Value(tc.raw)
			b.ReportAllocs()
			for b.Loop() {
				if _, bad := tc.rule(raw, &c); bad != "" {
					b.Fatal(bad)
				}
			}
		})
	}
}

// BenchmarkResultOfAPage reads a page of 1,000 events in 1,000 cells and
// makes its series: the cells' series would cost more than reading their
// events if each cell's centre were formatted anew, or the cells sorted
// when all are kept.
func BenchmarkResultOfAPage(b *testing.B) {
	var page strings.Builder
	page.WriteString(`{"events":[`)
	for i := range 1000 {
		if i > 0 {
			page.WriteByte(',')
		}
		fmt.Fprintf(&page, `{"id":"evt_%d","lat":%g,"lon":%g,"category":"category_%d","escalation":0.%d,"occurred_at":"2026-11-22T%02d:%02d:00Z"}`,
			i, -87.5+5*float64(i/72%36), -177.5+5*float64(i%72), i%12, i%10, i/60%4, i%60)
	}
	page.WriteString(`],"next_cursor":null}`)
	body := page.String()
	b.ReportAllocs()
	for b.Loop() {
		col := Conflict.Start(Config{Now: func() time.Time { return time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC) }})
		if _, err := col.Read(strings.NewReader(body), 1); err != nil {
			b.Fatal(err)
		}
		col.Result()
	}
}
