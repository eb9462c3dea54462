package client

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

func TestParseTimestamp(t *testing.T) {
	tests := []struct {
		in   string
		want time.Time
	}{
		{"2026-11-22T04:30:00Z", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22T04:30:00.5Z", time.Date(2026, 11, 22, 4, 30, 0, 5e8, time.UTC)},
		{"2026-11-22T04:30:00.123456789Z", time.Date(2026, 11, 22, 4, 30, 0, 123456789, time.UTC)},
		{"2026-11-22T06:30:00+02:00", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22T06:30:00.250+02:00", time.Date(2026, 11, 22, 4, 30, 0, 25e7, time.UTC)},
		{"2026-11-21T23:30:00-05:00", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22T06:30:00+0200", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22T04:30:00", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := ParseTimestamp(tt.in)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-11-22", "22/11/2026 04:30", "2026-13-01T00:00:00Z", "1700000000"} {
		if _, err := ParseTimestamp(bad); err == nil {
			t.Errorf("ParseTimestamp(%q) succeeded, want an error", bad)
		} else if bad != "" && strings.Contains(err.Error(), bad) {
			t.Errorf("error %q quotes the input", err)
		}
	}
}

func TestSanitize(t *testing.T) {
	got := sanitize("line1\nline2\t\x00 bad\xff utf8 tail", 100)
	if want := "line1 line2 bad utf8 tail"; got != want {
		t.Errorf("sanitize = %q, want %q", got, want)
	}
	if got := sanitize(strings.Repeat("é", 100), 11); got != "ééééé…" {
		t.Errorf("sanitize cut = %q, want five runes and an ellipsis", got)
	}
}

// The fuzz targets feed arbitrary bytes to every decoder. They must never
// panic, and whatever they accept must satisfy the spec's invariants.

func FuzzDecodeOverview(f *testing.F) {
	f.Add([]byte(`{"score":54,"trend":"stable","pillars":{"conflict":64.3,"cyber":59,"macro":42.1,"supply_chain":45},"as_of":"2026-11-22T04:31:00Z"}`))
	f.Add([]byte(`{"score":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		o, err := decodeOverview(json.NewDecoder(bytes.NewReader(body)))
		if err != nil {
			return
		}
		if o.Score < 0 || o.Score > 100 || len(o.Pillars) != 4 || o.AsOf.IsZero() {
			t.Errorf("accepted an invalid overview: %+v", o)
		}
	})
}

func FuzzDecodeDrilldown(f *testing.F) {
	f.Add([]byte(`{"pillar":"cyber","score":59,"delta_24h":-1.5,"indicators":[{"key":"critical_cves_7d","value":28}],"as_of":"2026-11-22T04:31:00Z"}`))
	f.Add([]byte(`{"pillar":"cyber","indicators":[null]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		d, err := decodeDrilldown(json.NewDecoder(bytes.NewReader(body)), PillarCyber)
		if err != nil {
			return
		}
		if d.Pillar != PillarCyber || d.Score < 0 || d.Score > 100 || d.AsOf.IsZero() {
			t.Errorf("accepted an invalid drilldown: %+v", d)
		}
	})
}

// FuzzEventPageDecoders holds the scanner to the encoding/json reference:
// both accept or both reject every input, and when they accept, they agree
// on every event and on the cursor.
func FuzzEventPageDecoders(f *testing.F) {
	f.Add([]byte(`{"events":[{"id":"evt_1","lat":48.0,"lon":37.8,"actors":["a"],"category":"battles","escalation":0.7,"occurred_at":"2026-11-19T02:25:35.862Z"}],"next_cursor":"abc"}`))
	f.Add([]byte(`{"events":[],"next_cursor":null,"events":[]}`))
	f.Add([]byte(`{"next_cursor":12,"events":[{}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		fast, fastCursor, fastErr := newEventPages().decode(bytes.NewReader(body), nil)
		ref, refCursor, refErr := referenceEventPage(bytes.NewReader(body), nil)
		// A body that arrives a byte at a time exercises every refill path.
		trickled, trickledCursor, trickledErr := newEventPages().decode(iotest.OneByteReader(bytes.NewReader(body)), nil)
		if (trickledErr == nil) != (fastErr == nil) || trickledCursor != fastCursor || !reflect.DeepEqual(trickled, fast) {
			t.Fatalf("read at once: %v, %+v; read byte by byte: %v, %+v", fastErr, fast, trickledErr, trickled)
		}
		if (fastErr == nil) != (refErr == nil) {
			t.Fatalf("scanner error %v, encoding/json error %v, for %q", fastErr, refErr, body)
		}
		if fastErr != nil {
			return
		}
		if fastCursor != refCursor || len(fast) != len(ref) {
			t.Fatalf("scanner: %d events, cursor %q; encoding/json: %d events, cursor %q", len(fast), fastCursor, len(ref), refCursor)
		}
		for i := range fast {
			a, b := fast[i], ref[i]
			if a.ID != b.ID || a.Category != b.Category || !sameFloat(a.Lat, b.Lat) || !sameFloat(a.Lon, b.Lon) ||
				!sameFloat(a.Escalation, b.Escalation) || !a.OccurredAt.Equal(b.OccurredAt) || !slices.Equal(a.Actors, b.Actors) {
				t.Fatalf("event %d: scanner %+v, encoding/json %+v", i, a, b)
			}
		}
	})
}

// TestFloatMatchesParseFloat holds the scanner's number parsing, fast path
// and slow, to strconv.ParseFloat bit for bit, on the edges of the fast
// path and on many random decimals of the kind the API sends.
func TestFloatMatchesParseFloat(t *testing.T) {
	inputs := []string{"0", "-0", "0.0", "-0.0", "1", "-1", "0.1", "0.3", "24.2795", "-1.675", "89.9204", "100", "0.287",
		"4503599627370495", "4503599627370496", "4503599627370497", "9007199254740993", "1234567890123456789",
		"12345678901234567890", "40.6537199829809128", "819616817.54490502", "-776198260.568676898", "0.0000000000000000000001", "0.00000000000000000000001", "1.7976931348623157",
		"1e5", "1E-5", "2.5e+3", "123456.78901234567", "0.1234567890123456789"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		digits := 1 + rng.IntN(18)
		n := strconv.FormatUint(rng.Uint64N(uint64(math.Pow10(digits))), 10)
		if at := rng.IntN(len(n) + 1); at < len(n) {
			n = n[:at] + "." + n[at:]
			if at == 0 {
				n = "0" + n
			}
		}
		if rng.IntN(2) == 0 {
			n = "-" + n
		}
		inputs = append(inputs, n)
	}
	buf := make([]byte, 4096)
	for _, in := range inputs {
		want, wantErr := strconv.ParseFloat(in, 64)
		// As a value in an object (the fast path), and alone at the end of
		// the input (number cut by the buffer's end: the slow path).
		for _, doc := range []string{in + ",", in} {
			s := newScanner(strings.NewReader(doc), buf)
			_, _ = s.next() // fill the buffer, as the decoder has when it reaches a value
			got, err := s.float()
			if (err != nil) != (wantErr != nil) || math.Float64bits(got) != math.Float64bits(want) {
				t.Fatalf("float(%q) = %v (%x), %v; ParseFloat: %v (%x), %v", doc, got, math.Float64bits(got), err, want, math.Float64bits(want), wantErr)
			}
		}
	}
}

func sameFloat(a, b float64) bool { return a == b || (a != a && b != b) }

func FuzzDecodeBriefingPage(f *testing.F) {
	f.Add([]byte(`{"briefings":[{"id":"brf_1","headline":"h","summary":"s","tags":["t"],"published_at":"2026-11-21T06:00:00Z"}],"next_cursor":null}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		dec := json.NewDecoder(bytes.NewReader(body))
		_, _ = decodePage(dec, "briefings", func(i int) error {
			b, err := decodeBriefing(dec, "briefings[0].")
			if err == nil && (b.PublishedAt.IsZero() || b.Tags == nil) {
				t.Errorf("accepted an invalid briefing: %+v", b)
			}
			return err
		})
	})
}

func FuzzDecodeSummary(f *testing.F) {
	f.Add([]byte(`{"summary":"text","as_of":"2026-11-22T04:30:00Z"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		s, err := decodeSummary(json.NewDecoder(bytes.NewReader(body)))
		if err == nil && s.AsOf.IsZero() {
			t.Errorf("accepted a summary without as_of: %+v", s)
		}
	})
}

func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2026-11-22T04:30:00Z", "2026-11-22T06:30:00.250+02:00", "2026-11-22T06:30:00+0200"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if ts, err := ParseTimestamp(s); err == nil && ts.IsZero() && !strings.HasPrefix(s, "0001-01-01") {
			t.Errorf("ParseTimestamp(%q) = zero time without error", s)
		}
	})
}

// FuzzTimestampFastPath holds the event decoder's arithmetic timestamp
// parser to ParseTimestamp (time.Parse): whatever it accepts, time.Parse
// accepts as the same instant.
func FuzzTimestampFastPath(f *testing.F) {
	for _, s := range []string{"2026-11-22T04:30:00Z", "2026-11-22T06:30:00.250+02:00", "2024-02-29T23:59:59.999999999-11:30",
		"2023-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1900-03-01T00:00:00+00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fast, ok := parseRFC3339Fast([]byte(s))
		if !ok {
			return
		}
		ref, err := ParseTimestamp(s)
		if err != nil || !fast.Equal(ref) {
			t.Fatalf("parseRFC3339Fast(%q) = %v; time.Parse gives %v, %v", s, fast, ref, err)
		}
	})
}

func FuzzParseCursor(f *testing.F) {
	for _, s := range []string{`null`, `""`, `"abc"`, `17`, `-1.5e3`, `true`, `{}`, `"\u0000"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		c, err := parseCursor(raw)
		if err == nil && c != "" && json.Valid(raw) && bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
			t.Errorf("null gave cursor %q", c)
		}
	})
}
