// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"bytes"
	"fmt"
	"hash/maphash"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
)

// Value is a judged value (an instant is its Unix seconds).
type Value struct {
	Num float64
	Str string
	ID  uint64 // an identifier's fingerprint
}

// Rule judges one value's raw JSON, already known valid: bad says why it is unusable.
type Rule func(raw jsontext.Value, c *Config) (v Value, bad string)

// Limits on the values that are kept: a longer one is refused unparsed.
const (
	maxNameBytes      = 128 // a trend word, an indicator key, a category
	maxNumberBytes    = 1024
	maxTimestampBytes = 64  // RFC 3339 needs 35 at most
	maxIDBytes        = 256 // a longer event id is not used to spot repeats
)

// MaxFutureSkew is how far ahead of our clock a timestamp may be: an as_of a
// day ahead would quiet staleness alerts for a day; an hour covers clock
// skew and an as_of naming the end of its window.
const MaxFutureSkew = time.Hour

// Number is any JSON number a float64 holds, of no assumed unit or range.
func Number(raw jsontext.Value, _ *Config) (Value, string) {
	if raw.Kind() != '0' {
		return Value{}, wrongKind(raw.Kind(), "a number")
	}
	if len(raw) > maxNumberBytes {
		return Value{}, fmt.Sprintf("a number of more than %d characters", maxNumberBytes)
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return Value{}, "number out of the range of a float64"
	}
	return Value{Num: v}, ""
}

// within is Number limited to [lo, hi], named what for the message.
func within(lo, hi float64, why string) Rule {
	return func(raw jsontext.Value, c *Config) (Value, string) {
		v, bad := Number(raw, c)
		if bad == "" && !(v.Num >= lo && v.Num <= hi) { // written so that NaN fails too
			bad = fmt.Sprintf("%g %s", v.Num, why)
		}
		return v, bad
	}
}

// ScoreRule is the spec's 0–100 score scale; Latitude and Longitude are on Earth.
var (
	ScoreRule = within(0, 100, "is outside the spec's 0–100 score scale")
	Latitude  = within(-90, 90, "is not a latitude")
	Longitude = within(-180, 180, "is not a longitude")
)

// Name is text that becomes a label value: 1 to maxNameBytes bytes of UTF-8
// (invalid bytes become U+FFFD), no piece of a key: /metrics shows it as it
// is. Whether it reads plainly is judged on the series exported (onlyReadable).
func Name(raw jsontext.Value, c *Config) (Value, string) {
	b, bad := textBytes(raw, maxNameBytes)
	if bad != "" {
		return Value{}, bad
	}
	if s, ok := c.interned[string(b)]; ok { // a name repeats (a category on every event): checked once
		return Value{Str: s}, ""
	}
	s := string(b)
	switch {
	case s == "":
		return Value{}, "empty"
	case c.Keys.Redact(s) != s:
		return Value{}, "holds a piece of an API key"
	}
	if c.interned != nil && len(c.interned) < maxInterned {
		c.interned[s] = s
	}
	return Value{Str: s}, ""
}

// maxInterned bounds the names a collection interns; past it, each is a copy.
const maxInterned = 4096

// ID is an identifier only compared, never exported: its fingerprint.
func ID(raw jsontext.Value, _ *Config) (Value, string) {
	b, bad := textBytes(raw, maxIDBytes)
	if bad == "" && len(b) == 0 {
		bad = "empty"
	}
	return Value{ID: maphash.Bytes(idSeed, b)}, bad
}

// idSeed is chosen once per process, so that no upstream can aim IDs at one hash.
var idSeed = maphash.MakeSeed()

// Timestamp is an instant (ParseTimestamp) at most MaxFutureSkew ahead.
func Timestamp(raw jsontext.Value, c *Config) (Value, string) {
	b, bad := textBytes(raw, maxTimestampBytes)
	if bad != "" {
		return Value{}, bad
	}
	switch t, err := ParseTimestamp(string(b)); {
	case err != nil:
		return Value{}, err.Error()
	case t.After(c.clock().Add(MaxFutureSkew)):
		return Value{}, fmt.Sprintf("%s is more than %s ahead of this host's clock", t.Format(time.RFC3339), MaxFutureSkew)
	default: // Unix seconds with their fraction: UnixNano would overflow outside 1678-2262
		return Value{Num: float64(t.Unix()) + float64(t.Nanosecond())/1e9}, ""
	}
}

// textBytes is a string's text: for the usual one, its bytes inside raw.
func textBytes(raw jsontext.Value, max int) ([]byte, string) {
	if raw.Kind() != '"' {
		return nil, wrongKind(raw.Kind(), "a string")
	}
	b := []byte(raw[1 : len(raw)-1])
	// A byte of text is one to six of JSON; the syntax was checked, so the
	// one fault left is invalid UTF-8 (U+FFFD).
	if (bytes.IndexByte(b, '\\') >= 0 || !utf8.Valid(b)) && len(b) <= 6*max {
		b, _ = jsontext.AppendUnquote(nil, raw)
	}
	if len(b) > max {
		return nil, "longer than " + strconv.Itoa(max) + " bytes"
	}
	return b, ""
}

// timestampLayouts: RFC 3339, then ISO 8601 forms servers emit: an offset
// without a colon, and no zone (UTC, as spec section 2 says).
var timestampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
}

// ParseTimestamp parses an API timestamp (years 0000 to 9999) into UTC,
// with what RFC 3339 allows beyond Go's layouts: "t" or "z", a space for
// "T" (its 5.6 note), and a leap second (":60", the next minute's first:
// Unix time has none). The error does not quote the input.
func ParseTimestamp(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t.UTC(), nil // the usual form, on time.Parse's fast path
	}
	b := []byte(s)
	if len(b) > 10 && (b[10] == 't' || b[10] == ' ') {
		b[10] = 'T'
	}
	if n := len(b); n > 0 && b[n-1] == 'z' {
		b[n-1] = 'Z'
	}
	leap := len(b) > 18 && b[16] == ':' && b[17] == '6' && b[18] == '0'
	if leap {
		b[17], b[18] = '5', '9'
	}
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, string(b)); err == nil {
			if leap {
				t = t.Add(time.Second)
			}
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("not an RFC 3339 timestamp (%d bytes)", len(s))
}
