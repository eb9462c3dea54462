package client

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// TestScannerBuffersArePooledUnlessGrown: a read buffer of the default size
// goes back to the pool for the next body (one allocation per body would
// show in every scrape's allocations); one grown for a huge token does not,
// or the pool would pin it.
func TestScannerBuffersArePooledUnlessGrown(t *testing.T) {
	c, err := New(Config{BaseURL: "http://api.example.com", APIKey: StaticKey("k")})
	if err != nil {
		t.Fatal(err)
	}
	// reused reports whether a buffer put back is handed out again. A
	// sync.Pool may drop what it is given (under -race it does at random),
	// so one reuse in many tries is proof enough.
	reused := func(size int) bool {
		for range 50 {
			s := c.scanner(strings.NewReader(""))
			if size > 0 {
				s.buf = make([]byte, size)
			}
			first := &s.buf[0]
			c.putScanner(s)
			next := c.scanner(strings.NewReader(""))
			same := &next.buf[0] == first
			if same {
				return true
			}
		}
		return false
	}
	if !reused(0) {
		t.Error("a default-size buffer is never reused")
	}
	if !reused(scanBufferSize) {
		t.Error("a buffer of exactly the default size is never reused")
	}
	if reused(scanBufferSize + 1) {
		t.Error("a grown buffer was pooled")
	}
}

// chunks reads its parts one Read call each.
type chunks []string

func (c *chunks) Read(p []byte) (int, error) {
	if len(*c) == 0 {
		return 0, io.EOF
	}
	n := copy(p, (*c)[0])
	(*c)[0] = (*c)[0][n:]
	if (*c)[0] == "" {
		*c = (*c)[1:]
	}
	return n, nil
}

// TestKeyColonAcrossReads: when a key ends exactly where the bytes read so
// far end, the colon must come from the next read, never from whatever the
// buffer held past its end (a buffer from the pool holds an old body's
// bytes). The buffer here is full of colons to make such a mistake visible.
func TestKeyColonAcrossReads(t *testing.T) {
	stale := func() []byte { return bytes.Repeat([]byte{':'}, scanBufferSize) }
	for _, tc := range []struct {
		parts []string
		want  float64 // the value of "a"; 0 for a syntax error
	}{
		{[]string{`{"a"`, `:7}`}, 7},
		{[]string{`{"a"`, ` : 7 }`}, 7},
		{[]string{`{"a"`, `7}`}, 0}, // no colon at all
		{[]string{`{"a"`, `x:7}`}, 0},
	} {
		r := chunks(append([]string(nil), tc.parts...))
		s := newScanner(&r, stale())
		var got float64
		d := &decoder{s: s}
		err := d.document(func(key []byte) error {
			if string(key) != "a" {
				return fmt.Errorf("read the key as %q, want \"a\"", key)
			}
			v, bad, err := s.numberValue()
			if bad != "" {
				return errors.New(bad)
			}
			got = v
			return err
		})
		if tc.want == 0 {
			if err == nil {
				t.Errorf("%q: decoded a=%v, want a syntax error", tc.parts, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%q: a=%v, %v; want %v", tc.parts, got, err, tc.want)
		}
	}
}

// TestEventDecodersArePooledUnlessGrown: as for read buffers, the event
// decoder (its buffer and interned names) is reused between walks unless a
// page made its buffer grow.
func TestEventDecodersArePooledUnlessGrown(t *testing.T) {
	c, err := New(Config{BaseURL: "http://api.example.com", APIKey: StaticKey("k")})
	if err != nil {
		t.Fatal(err)
	}
	reused := func(bufSize int) bool {
		for range 50 {
			d := c.eventPages.Get().(*eventPages)
			d.buf = make([]byte, bufSize)
			c.putEventPages(d)
			next := c.eventPages.Get().(*eventPages)
			c.putEventPages(next)
			if next == d {
				return true
			}
		}
		return false
	}
	if !reused(scanBufferSize) {
		t.Error("an event decoder with a buffer of the usual size is never reused")
	}
	if reused(scanBufferSize + 1) {
		t.Error("an event decoder with a grown buffer was pooled")
	}
}

// TestWhitespaceAnywhere: JSON's four whitespace bytes may stand between
// any two tokens; a pretty-printed body decodes as the compact one does,
// read whole or a byte at a time.
func TestWhitespaceAnywhere(t *testing.T) {
	compact := `{"score":40,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`
	pretty := " \t\r\n{ \"score\" :\n\t40 ,\r\n \"trend\": \"stable\" , \"pillars\" : {\n  \"conflict\" : 1 ,\n  \"cyber\":2, \"supply_chain\" :3 ,\"macro\" : 4\n } ,\n \"as_of\" : \"2026-11-22T00:00:00Z\"\n}\n\t "
	for _, body := range []string{compact, pretty} {
		for name, r := range readers([]byte(body)) {
			o, err := testDecoder(r()).overview()
			if err != nil || o.Score == nil || *o.Score != 40 || len(o.Pillars) != 4 || o.Pillars[PillarMacro] != 4 || o.AsOf == nil || o.Invalid.Total() != 0 {
				t.Errorf("%s, %q: %+v, %v", name, body, o, err)
			}
		}
	}
}

// TestSyntaxErrorsNameTheirByte: the offset in the error counts every byte
// read before, across refills of the buffer.
func TestSyntaxErrorsNameTheirByte(t *testing.T) {
	body := `{"score":` + strings.Repeat(" ", 3*scanBufferSize) + `}`
	for name, r := range readers([]byte(body)) {
		_, err := testDecoder(r()).overview()
		if want := fmt.Sprintf("at byte %d", len(body)-1); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one %s", name, err, want)
		}
	}
}

// TestNameLimitIsExact: a name of exactly the limit is kept and one byte
// more is invalid, whether the string takes the fast path (plain ASCII) or
// the slow one (an escape, multi-byte UTF-8).
func TestNameLimitIsExact(t *testing.T) {
	for _, tc := range []struct {
		name  string
		json  string // the trend's JSON string
		valid bool
	}{
		{"plain, at the limit", `"` + strings.Repeat("a", DefaultMaxNameBytes) + `"`, true},
		{"plain, one over", `"` + strings.Repeat("a", DefaultMaxNameBytes+1) + `"`, false},
		{"escaped, at the limit", `"\u0041` + strings.Repeat("a", DefaultMaxNameBytes-1) + `"`, true},
		{"escaped, one over", `"\u0041` + strings.Repeat("a", DefaultMaxNameBytes) + `"`, false},
		{"two-byte runes, at the limit", `"` + strings.Repeat("é", DefaultMaxNameBytes/2) + `"`, true},
		{"two-byte runes, one over", `"` + strings.Repeat("é", DefaultMaxNameBytes/2) + `a"`, false},
		{"empty", `""`, false},
	} {
		body := `{"score":40,"trend":` + tc.json + `,"pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"2026-11-22T00:00:00Z"}`
		for how, r := range readers([]byte(body)) {
			o, err := testDecoder(r()).overview()
			if err != nil {
				t.Fatalf("%s, %s: %v", tc.name, how, err)
			}
			if got := o.Trend != nil; got != tc.valid || (tc.valid && len(*o.Trend) > DefaultMaxNameBytes) {
				t.Errorf("%s, %s: trend kept %v, want %v", tc.name, how, got, tc.valid)
			}
			if tc.valid == (o.Invalid.Counts["trend"] == 1) {
				t.Errorf("%s, %s: invalid counts %v", tc.name, how, o.Invalid.Counts)
			}
		}
	}
}

// TestNestingLimitIsExact: a skipped value may nest maxDepth levels of
// arrays or objects; one level more is refused before it can exhaust the
// stack.
func TestNestingLimitIsExact(t *testing.T) {
	accepted := func(levels int, open, inner, close string) bool {
		body := `{"ignored":` + strings.Repeat(open, levels) + inner + strings.Repeat(close, levels) + `,"score":40}`
		_, err := testDecoder(strings.NewReader(body)).overview()
		return err == nil
	}
	for _, b := range [][3]string{{"[", "", "]"}, {`{"k":`, "0", "}"}, {"[", "0", "]"}} {
		if !accepted(maxDepth, b[0], b[1], b[2]) {
			t.Errorf("%s%s nested %d deep refused", b[0], b[1], maxDepth)
		}
		if accepted(maxDepth+1, b[0], b[1], b[2]) {
			t.Errorf("%s%s nested %d deep accepted", b[0], b[1], maxDepth+1)
		}
	}
}

// TestNumberLengthLimitIsExact: a number's text of maxNumberBytes is read
// as a number; one byte more is invalid (too long to keep), read whole, a
// byte at a time or over a stale buffer.
func TestNumberLengthLimitIsExact(t *testing.T) {
	for _, tc := range []struct {
		text  string
		valid bool
	}{
		{"0." + strings.Repeat("0", maxNumberBytes-3) + "1", true},
		{"0." + strings.Repeat("0", maxNumberBytes-2) + "1", false},
		{"4" + strings.Repeat("0", 0) + "e" + strings.Repeat("0", maxNumberBytes-3) + "1", true},
	} {
		body := `{"score":` + tc.text + `,"trend":"stable"}`
		for how, r := range readers([]byte(body)) {
			o, err := testDecoder(r()).overview()
			if err != nil {
				t.Fatalf("%d bytes, %s: %v", len(tc.text), how, err)
			}
			if (o.Score != nil) != tc.valid || (o.Trend == nil) {
				t.Errorf("%d bytes, %s: score kept %v, want %v (trend %v)", len(tc.text), how, o.Score != nil, tc.valid, o.Trend)
			}
		}
	}
}

// TestLiteralsAcrossReads: true, false and null are read whole even when
// they arrive a byte at a time over a stale buffer.
func TestLiteralsAcrossReads(t *testing.T) {
	body := `{"score":null,"trend":true,"extra":[false,null,true],"pillars":{"conflict":false,"cyber":2,"supply_chain":3,"macro":4},"as_of":null}`
	for how, r := range readers([]byte(body)) {
		o, err := testDecoder(r()).overview()
		if err != nil || o.Score != nil || o.Trend != nil || len(o.Pillars) != 3 || o.Invalid.Total() != 4 {
			t.Errorf("%s: %+v, %v; want score, trend, conflict and as_of invalid, three pillars", how, o, err)
		}
	}
	for _, bad := range []string{`{"score":nul}`, `{"score":tru}`, `{"score":fals}`, `{"score":nulll}`, `{"score":n`} {
		for how, r := range readers([]byte(bad)) {
			if _, err := testDecoder(r()).overview(); err == nil {
				t.Errorf("%s: %q decoded", how, bad)
			}
		}
	}
}

// TestShortDecimalTakesTheUsualNumbers: the fast path for plain decimals
// must take the numbers the API sends itself, land on the same float64 as
// strconv.ParseFloat, and stop right after the number; exponents, more
// than 19 digits, mantissas from 2^52 and malformed numbers it leaves to
// the slow path. Its fallback would hide a fast path that gives up.
func TestShortDecimalTakesTheUsualNumbers(t *testing.T) {
	take := []string{"0", "-0", "7", "-7", "40", "100", "0.5", "-0.25", "48.8566", "-122.4194", "0.000001",
		"12345678.9", "4503599627370495", "450359962737049.5", "0.4503599627370495", "-4503599627370495",
		"999999999999999", "3.14159265358979", "0.000000000000000001"}
	decline := []string{"1e5", "1E5", "1.5e-3", "4503599627370496", "45035996273704.96", "12345678901234567890",
		"0.12345678901234567890", "1234567890123456.7", "0.0000000000000000001", "1.", "-", "-.5", ".5", "x"}
	// at puts text at offset from in the buffer, as a number anywhere in a body.
	at := func(text string, from int) *scanner {
		s := newScanner(strings.NewReader(""), nil)
		s.end = copy(s.buf[from:], text+",") + from
		s.pos = from
		return s
	}
	for _, from := range []int{0, 7, 1000} {
		for _, text := range take {
			s := at(text, from)
			v, ok := s.shortDecimal()
			want, err := strconv.ParseFloat(text, 64)
			if err != nil {
				t.Fatal(err)
			}
			if !ok || v != want || math.Signbit(v) != math.Signbit(want) || s.pos != from+len(text) {
				t.Errorf("shortDecimal(%q at %d) = %v, %v, pos %d; want %v, true, pos %d", text, from, v, ok, s.pos, want, from+len(text))
			}
		}
		for _, text := range decline {
			s := at(text, from)
			if v, ok := s.shortDecimal(); ok {
				t.Errorf("shortDecimal(%q at %d) = %v, ok; want it left to the slow path", text, from, v)
			}
			if s.pos != from {
				t.Errorf("shortDecimal(%q at %d) declined but moved to %d", text, from, s.pos)
			}
		}
	}
	// A number cut by the end of what was read may go on: not taken.
	s := newScanner(strings.NewReader(""), nil)
	s.end = copy(s.buf, "12")
	if _, ok := s.shortDecimal(); ok {
		t.Error("a number at the end of the buffer was taken before its end was seen")
	}
}

// TestNumbersAcrossTheBufferEnd: a number that starts near the end of a
// full buffer and goes on in the next read is read whole and valid, far
// from the buffer's start.
func TestNumbersAcrossTheBufferEnd(t *testing.T) {
	for _, num := range []string{"40.5", "12345678901234567890", "1.5e1", "-0.000123"} {
		for shift := range len(num) + 1 {
			pad := scanBufferSize - len(`{"score":`) - shift
			body := `{"score":` + strings.Repeat(" ", pad) + num + `,"trend":"stable"}`
			o, err := testDecoder(strings.NewReader(body)).overview()
			want, _ := strconv.ParseFloat(num, 64)
			valid := want >= 0 && want <= 100
			if err != nil || (o.Score != nil) != valid || (valid && *o.Score != want) {
				t.Errorf("%s crossing the buffer's end by %d: %+v, %v", num, shift, o.Score, err)
			}
		}
	}
}
