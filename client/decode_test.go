package client

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"
	"unsafe"
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
		// What RFC 3339 allows beyond Go's layouts.
		{"2026-11-22t04:30:00z", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2026-11-22 04:30:00Z", time.Date(2026, 11, 22, 4, 30, 0, 0, time.UTC)},
		{"2016-12-31T23:59:60Z", time.Date(2017, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"2016-12-31T23:59:60.5+00:00", time.Date(2017, 1, 1, 0, 0, 0, 5e8, time.UTC)},
		// Far from today, and kept exactly: plausibility is the caller's call.
		{"0001-01-01T00:00:00Z", time.Time{}},
		{"1600-01-01T00:00:00Z", time.Date(1600, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"9999-12-31T23:59:59Z", time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC)},
	}
	for _, tt := range tests {
		got, err := ParseTimestamp(tt.in)
		if err != nil || !got.Equal(tt.want) {
			t.Errorf("ParseTimestamp(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
		fast, err := parseTimestampBytes([]byte(tt.in))
		if err != nil || !fast.Equal(tt.want) {
			t.Errorf("parseTimestampBytes(%q) = %v, %v; want %v", tt.in, fast, err, tt.want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-11-22", "22/11/2026 04:30", "2026-13-01T00:00:00Z", "1700000000", "2026-11-22T04:30:61Z", "2026-11-22x04:30:00Z", "2026-11-22T04:30:6", "2026-11-22T04:30:"} {
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
	if got := sanitize(" \n\tlead", 10); got != "lead" {
		t.Errorf("sanitize = %q, want no leading space", got)
	}
	for _, in := range []string{"exactly10!", " exactly10!", "\n\texactly10!"} {
		if got := sanitize(in, 10); got != "exactly10!" {
			t.Errorf("sanitize(%q) = %q, want a text of exactly max bytes whole, leading space not counted", in, got)
		}
	}
}

// TestInternIsBounded: category names are interned (one string per name
// however many events carry it), up to maxInterned names.
func TestInternIsBounded(t *testing.T) {
	d := newEventPages(fuzzSeed)
	a, _ := d.category([]byte("battles"))
	b, _ := d.category([]byte("battles"))
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("a repeated name was not interned")
	}
	for i := range maxInterned + 10 {
		d.category([]byte(fmt.Sprint("name", i)))
	}
	if len(d.intern) != maxInterned {
		t.Errorf("%d names interned, want the cap of %d", len(d.intern), maxInterned)
	}
}

// fuzzNow is the clock of the fuzz targets: timestamps after it plus
// MaxFutureSkew are invalid.
var fuzzNow = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

var fuzzSeed = maphash.MakeSeed()

func testDecoder(r io.Reader) *decoder {
	return &decoder{s: newScanner(r, staleBuffer(r)), now: fuzzNow, maxName: DefaultMaxNameBytes}
}

// staleReader marks a reader whose decoder gets a buffer full of one byte,
// as a pooled buffer is full of an old body's bytes: read a byte at a time,
// the byte past the end of what was read is always that one, so a decoder
// that looked past the end (for a colon, a quote, a comma, a closing
// bracket) would find it there and go wrong.
type staleReader struct {
	io.Reader
	stale byte
}

// staleBuffer is the buffer a decoder of r starts with: nil (a fresh one)
// unless r is a staleReader.
func staleBuffer(r io.Reader) []byte {
	if s, ok := r.(*staleReader); ok {
		return bytes.Repeat([]byte{s.stale}, scanBufferSize)
	}
	return nil
}

var fuzzRules = refRules{now: fuzzNow, maxName: DefaultMaxNameBytes, seed: fuzzSeed}

// readers gives the same body whole and a byte at a time: the second takes
// every refill path of the scanner.
func readers(body []byte) map[string]func() io.Reader {
	rs := map[string]func() io.Reader{
		"at once":      func() io.Reader { return bytes.NewReader(body) },
		"byte by byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
	}
	for _, stale := range []byte(`":,}]\`) {
		rs[fmt.Sprintf("byte by byte over stale %q", stale)] = func() io.Reader {
			return &staleReader{iotest.OneByteReader(bytes.NewReader(body)), stale}
		}
	}
	// Three bytes a read: a refill moves the token being read to the
	// buffer's start, so a byte at a time a token always starts at 0; in
	// threes, tokens start anywhere, and cross the end of what was read.
	rs["three bytes a read over stale 'n'"] = func() io.Reader {
		return &staleReader{&shortReads{r: bytes.NewReader(body), n: 3}, 'n'}
	}
	return rs
}

// shortReads returns at most n bytes per Read.
type shortReads struct {
	r io.Reader
	n int
}

func (s *shortReads) Read(p []byte) (int, error) { return s.r.Read(p[:min(len(p), s.n)]) }

// show renders decoded values for comparison, pointers followed.
func show(vs ...any) string {
	var b strings.Builder
	for _, v := range vs {
		switch v := v.(type) {
		case *float64:
			if v == nil {
				b.WriteString("nil ")
			} else {
				fmt.Fprintf(&b, "%x ", math.Float64bits(*v))
			}
		case *string:
			if v == nil {
				b.WriteString("nil ")
			} else {
				fmt.Fprintf(&b, "%q ", *v)
			}
		case *time.Time:
			if v == nil {
				b.WriteString("nil ")
			} else {
				fmt.Fprintf(&b, "%s ", v.UTC().Format(time.RFC3339Nano))
			}
		case Invalid:
			keys := slices.Sorted(func(yield func(string) bool) {
				for k := range v.Counts {
					if !yield(k) {
						return
					}
				}
			})
			for _, k := range keys {
				fmt.Fprintf(&b, "%s=%d ", k, v.Counts[k])
			}
			if (v.First == "") != (len(v.Counts) == 0) {
				b.WriteString("(first detail missing or stray) ")
			}
		default:
			fmt.Fprintf(&b, "%v ", v)
		}
	}
	return b.String()
}

// differ fails the fuzz case when the streaming decoder, read at once or
// byte by byte, and the reference disagree.
func differ(t *testing.T, body []byte, refErr error, ref string, decode func(io.Reader) (string, error)) {
	t.Helper()
	for how, r := range readers(body) {
		got, err := decode(r())
		if (err == nil) != (refErr == nil) {
			t.Fatalf("%s: error %v, reference error %v, for %q", how, err, refErr, body)
		}
		if err == nil && got != ref {
			t.Fatalf("%s: decoded\n%s\nreference\n%s\nfor %q", how, got, ref, body)
		}
	}
}

// stringSeeds are strings that take every path of the scanner's string
// decoding: every escape, surrogate pairs and lone halves, invalid
// escapes, multi-byte and invalid UTF-8, control characters.
var stringSeeds = []string{
	`"plain"`, `""`, `"\" \\ \/ \b \f \n \r \t"`, `"\u0041\u00e9\u4e2d"`, `"\uD83D\uDE00"`, `"\uD83D"`,
	`"\uDE00x"`, `"\uD83D\u0041"`, `"\uD83D\uZZZZ"`, `"\x"`, `"\u12"`, `"\u12G4"`, `"ünïcødé ☢ 指标"`,
	"\"bad \xff\xfe utf8\"", "\"cut \xe2\x82\"", "\"tab\tinside\"", `"\`, `"open`, `"` + strings.Repeat("long", 60) + `"`,
}

// syntaxSeeds derives broken bodies from a valid one: cut at every byte
// (an end of input inside every kind of token and between them), and with
// a byte at every position replaced by one that JSON does not allow there.
func syntaxSeeds(valid string) []string {
	var seeds []string
	for i := range len(valid) {
		seeds = append(seeds, valid[:i])
		if i%3 == 0 {
			seeds = append(seeds, valid[:i]+"}"+valid[i+1:], valid[:i]+"x"+valid[i+1:], valid[:i]+","+valid[i+1:])
		}
	}
	return seeds
}

func addSeeds(f *testing.F, valid string, field string) {
	f.Add([]byte(valid))
	for _, s := range syntaxSeeds(valid) {
		f.Add([]byte(s))
	}
	for _, s := range stringSeeds {
		f.Add([]byte(strings.Replace(valid, field, s, 1)))
	}
	for _, v := range []string{"null", "1e400", "-0", "true", "[]", "{}", `"2026-11-22T04:30:60Z"`, `"2126-11-22T04:30:00Z"`, `"0001-01-01T00:00:00Z"`} {
		f.Add([]byte(strings.Replace(valid, field, v, 1)))
	}
}

const (
	validOverview  = `{"score":54,"trend":"stable","pillars":{"conflict":64.3,"cyber":59,"macro":42.1,"supply_chain":45},"as_of":"2026-11-22T04:31:00Z"}`
	validDrilldown = `{"pillar":"cyber","score":59,"delta_24h":-1.5,"indicators":[{"key":"critical_cves_7d","value":28},{"key":"b","value":0.5}],"as_of":"2026-11-22T04:31:00Z"}`
	validSummary   = `{"summary":"text","as_of":"2026-11-22T04:30:00Z"}`
	validEvents    = `{"events":[{"id":"evt_1","lat":48.0,"lon":37.8,"actors":["a","b"],"category":"battles","escalation":0.7,"occurred_at":"2026-11-19T02:25:35.862Z"}],"next_cursor":"abc"}`
	validBriefings = `{"briefings":[{"id":"brf_1","headline":"h","summary":"s","tags":["t"],"published_at":"2026-11-21T06:00:00Z"}],"next_cursor":null}`
)

func FuzzDecodeOverview(f *testing.F) {
	addSeeds(f, validOverview, `"stable"`)
	addSeeds(f, validOverview, `64.3`)
	f.Fuzz(func(t *testing.T, body []byte) {
		ref, refErr := fuzzRules.overview(body)
		differ(t, body, refErr, show(ref.Score, ref.Trend, ref.Pillars, ref.AsOf, ref.Invalid), func(r io.Reader) (string, error) {
			o, err := testDecoder(r).overview()
			return show(o.Score, o.Trend, o.Pillars, o.AsOf, o.Invalid), err
		})
	})
}

func FuzzDecodeDrilldown(f *testing.F) {
	addSeeds(f, validDrilldown, `"critical_cves_7d"`)
	addSeeds(f, validDrilldown, `28`)
	f.Add([]byte(`{"indicators":[],"indicators":[]}`))
	f.Add([]byte(`{"pillar":"macro","indicators":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ref, refInds, refErr := fuzzRules.drilldown(body, PillarCyber)
		differ(t, body, refErr, show(ref.Delta24h, ref.AsOf, refInds, ref.Invalid), func(r io.Reader) (string, error) {
			d := testDecoder(r)
			d.pillar = PillarCyber
			var inds []Indicator
			dd, err := d.drilldown(func(ind Indicator) { inds = append(inds, ind) })
			return show(dd.Delta24h, dd.AsOf, inds, dd.Invalid), err
		})
	})
}

func FuzzDecodeSummary(f *testing.F) {
	addSeeds(f, validSummary, `"text"`)
	addSeeds(f, validSummary, `"2026-11-22T04:30:00Z"`)
	f.Fuzz(func(t *testing.T, body []byte) {
		ref, refErr := fuzzRules.summary(body)
		differ(t, body, refErr, show(ref.AsOf, ref.Invalid), func(r io.Reader) (string, error) {
			s, err := testDecoder(r).summary()
			return show(s.AsOf, s.Invalid), err
		})
	})
}

func FuzzDecodeEventPage(f *testing.F) {
	addSeeds(f, validEvents, `"battles"`)
	addSeeds(f, validEvents, `"evt_1"`)
	addSeeds(f, validEvents, `48.0`)
	addSeeds(f, validEvents, `"abc"`) // the cursor
	f.Add([]byte(`{"events":[null,1,{}],"next_cursor":17}`))
	f.Add([]byte(`{"events":[],"next_cursor":null,"events":[]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		ref, refCursor, refInv, refErr := fuzzRules.eventPage(body)
		differ(t, body, refErr, show(refCursor, ref, refInv), decodeEventsShown)
	})
}

func decodeEventsShown(r io.Reader) (string, error) {
	d := newEventPages(fuzzSeed)
	d.buf = staleBuffer(r)
	var events []eventWithID
	cursor, err := d.decode(r, 1, fuzzNow, DefaultMaxNameBytes, nil, func(ev eventWithID) { events = append(events, ev) })
	return show(cursor, events, d.inv), err
}

func FuzzDecodeBriefingPage(f *testing.F) {
	addSeeds(f, validBriefings, `"2026-11-21T06:00:00Z"`)
	addSeeds(f, validBriefings, `"h"`)
	f.Fuzz(func(t *testing.T, body []byte) {
		ref, refCursor, refInv, refErr := fuzzRules.briefingPage(body)
		differ(t, body, refErr, show(refCursor, ref, refInv), func(r io.Reader) (string, error) {
			d := testDecoder(r)
			var briefings []Briefing
			cursor, err := d.briefingPage(func(b Briefing) { briefings = append(briefings, b) })
			return show(cursor, briefings, d.inv), err
		})
	})
}

// TestStringEscapes pins the decoded bytes of every escape, so that a
// decoder that got one wrong fails here even if the reference were to
// share the mistake.
func TestStringEscapes(t *testing.T) {
	tests := map[string]string{
		`"a\"b"`: `a"b`, `"a\\b"`: `a\b`, `"a\/b"`: "a/b", `"\b\f\n\r\t"`: "\b\f\n\r\t",
		`"\u0041\u00e9"`: "Aé", `"\uD83D\uDE00"`: "😀", `"\uD83Dx"`: "\uFFFDx", `"\uDE00"`: "\uFFFD",
		`"\uD83D\u0041"`: "\uFFFDA", "\"\xff\"": "\uFFFD", "\"\x80\"": "\uFFFD", "\"a\x7f\"": "a\x7f", `"指标"`: "指标",
	}
	for in, want := range tests {
		for how, r := range readers([]byte(in)) {
			s := newScanner(r(), nil)
			got, tooLong, err := s.str(100)
			if err != nil || tooLong || string(got) != want {
				t.Errorf("%s: str(%s) = %q, %v, %v; want %q", how, in, got, tooLong, err, want)
			}
		}
	}
	for _, bad := range []string{`"\x"`, `"\u12G4"`, `"\uD83D\uZZZZ"`, "\"a\nb\"", `"open`} {
		if _, _, err := newScanner(strings.NewReader(bad), nil).str(100); err == nil {
			t.Errorf("str(%q) succeeded, want a syntax error", bad)
		}
	}
}

// TestHugeTokensDoNotGrowTheBuffer: a string or a number far longer than
// the read buffer is read to its end without the buffer growing.
func TestHugeTokensDoNotGrowTheBuffer(t *testing.T) {
	for name, body := range map[string]string{
		"string":         `"` + strings.Repeat("x", 1<<20) + `"`,
		"escaped string": `"` + strings.Repeat(`\u0041`, 1<<18) + `"`,
		"number":         "1" + strings.Repeat("0", 1<<20),
	} {
		s := newScanner(strings.NewReader(body), nil)
		if err := s.skip(0); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if cap(s.buf) > scanBufferSize {
			t.Errorf("%s: the buffer grew to %d bytes", name, cap(s.buf))
		}
	}
	s := newScanner(strings.NewReader(`"`+strings.Repeat("y", 1<<20)+`"`), nil)
	if b, tooLong, err := s.str(128); err != nil || !tooLong || b != nil {
		t.Errorf("str(128) of a 1 MiB string = %d bytes, %v, %v; want too long", len(b), tooLong, err)
	}
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

func FuzzParseTimestamp(f *testing.F) {
	for _, s := range []string{"2026-11-22T04:30:00Z", "2026-11-22T06:30:00.250+02:00", "2026-11-22T06:30:00+0200", "2026-11-22t04:30:00z", "2026-11-22 04:30:60Z"} {
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
		"2023-02-29T00:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59Z", "1900-03-01T00:00:00+00:00", "2016-12-31t23:59:60z"} {
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
