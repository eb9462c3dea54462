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
	Num  float64
	Str  string
	ID   uint64 // an identifier's fingerprint
	name int    // a label value's number in its collection (see LabelValue), 0 if it has none
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
	if v, ok := shortDecimal(raw); ok {
		return Value{Num: v}, ""
	}
	v, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return Value{}, "number out of the range of a float64"
	}
	return Value{Num: v}, ""
}

// exact10 are the powers of ten a float64 holds exactly, up to 1e15.
var exact10 = [16]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// shortDecimal is strconv.ParseFloat of a valid JSON number of at most 15
// digits and no exponent, the API's usual: its digits and 10^k are exact
// in a float64, so one division rounds correctly, as ParseFloat's own fast
// path does. Without ParseFloat's copy into a string and its general
// reader, which the API's usual numbers do not need (BenchmarkRules).
func shortDecimal(b []byte) (float64, bool) {
	neg := b[0] == '-'
	i, m := boolToInt(neg), uint64(0)
	for ; i < len(b) && b[i]-'0' < 10; i++ {
		m = m*10 + uint64(b[i]-'0')
	}
	digits, scale := i-boolToInt(neg), 0
	if i < len(b) && b[i] == '.' {
		for i++; i < len(b) && b[i]-'0' < 10; i++ {
			m, scale = m*10+uint64(b[i]-'0'), scale+1
		}
	}
	if i < len(b) || digits+scale > 15 {
		return 0, false
	}
	v := float64(m) / exact10[scale]
	if neg {
		v = -v
	}
	return v, true
}

func boolToInt(b bool) int {
	if b {
		return 1
	}
	return 0
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

// LabelValue is text that becomes a label value: 1 to maxNameBytes bytes of UTF-8
// (invalid bytes become U+FFFD), no piece of a key: /metrics shows it as it
// is. Whether it reads plainly is judged on the series exported (onlyReadable).
func LabelValue(raw jsontext.Value, c *Config) (Value, string) {
	// A name repeats (a category on every event): checked once, then found
	// by its token, its text quoted, or, written with an escape, by its text.
	if v, ok := c.interned[string(raw)]; ok {
		return v, ""
	}
	b, bad := textBytes(raw, maxNameBytes)
	key := `"` + string(b) + `"`
	if v, ok := c.interned[key]; ok || bad != "" {
		return v, bad
	}
	v := Value{Str: key[1 : len(key)-1]}
	switch {
	case v.Str == "":
		return Value{}, "empty"
	case c.Keys.Redact(v.Str) != v.Str:
		return Value{}, "holds a piece of an API key"
	}
	// A text with a backslash is not its token quoted (`"\n"`): left out.
	if c.interned != nil && len(c.interned) < maxInterned && bytes.IndexByte(b, '\\') < 0 {
		v.name = len(c.interned) + 1 // folds count by it, not hashing the text again
		c.interned[key] = v
	}
	return v, ""
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
	t, ok := time.Time{}, false
	if raw.Kind() == '"' { // the usual form has neither escape nor other byte than ASCII
		t, ok = utcTimestamp([]byte(raw[1 : len(raw)-1]))
	}
	var err error
	if !ok {
		b, bad := textBytes(raw, maxTimestampBytes)
		if bad != "" {
			return Value{}, bad
		}
		t, err = ParseTimestamp(string(b))
	}
	latest := c.latest
	if latest.IsZero() {
		latest = c.clock().Add(MaxFutureSkew)
	}
	switch {
	case err != nil:
		return Value{}, err.Error()
	case t.After(latest):
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
	if !plainASCII(b) && (bytes.IndexByte(b, '\\') >= 0 || !utf8.Valid(b)) && len(b) <= 6*max {
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

// plainASCII reports whether a string's text is ASCII without an escape:
// its bytes are then the text (special8 marks a backslash; a quote or a
// control byte cannot be in a valid string token).
func plainASCII(b []byte) bool {
	for _, c := range b {
		if c >= 0x80 || c == '\\' {
			return false
		}
	}
	return true
}

// utcTimestamp reads the form the API sends, 2006-01-02T15:04:05Z with up
// to nine digits of fraction, as time.Parse does; false for any other,
// which ParseTimestamp then reads. Without time.Parse's general checks, its
// copy into a string and time.Date's normalising, needless for the API's
// one form (BenchmarkRules; FuzzUTCTimestamp holds it to time.Parse).
func utcTimestamp[S string | []byte](s S) (time.Time, bool) {
	n := len(s)
	if n < 20 || n > 30 || n == 21 || s[n-1] != 'Z' || n > 20 && s[19] != '.' || s[4] != '-' || s[7] != '-' || s[10] != 'T' || s[13] != ':' || s[16] != ':' {
		return time.Time{}, false
	}
	notDigits := false
	two := func(i int) int {
		a, b := s[i]-'0', s[i+1]-'0'
		notDigits = notDigits || a > 9 || b > 9
		return int(a)*10 + int(b)
	}
	y, mo, d, h, mi, sec := two(0)*100+two(2), two(5), two(8), two(11), two(14), two(17)
	frac := 0 // nanoseconds
	for i := 20; i < n-1; i++ {
		notDigits, frac = notDigits || s[i]-'0' > 9, frac*10+int(s[i]-'0')
	}
	frac *= int(exact10[min(30-n, 9)])
	leap := y%4 == 0 && (y%100 != 0 || y%400 == 0)
	if notDigits || y < 1 || mo < 1 || mo > 12 || d < 1 || d > monthDays[mo]-boolToInt(mo == 2 && !leap) || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}, false
	}
	if mo <= 2 { // days since 1970 of a year counted from March (Hinnant's days_from_civil)
		y, mo = y-1, mo+12
	}
	days := 365*y + y/4 - y/100 + y/400 + (153*(mo-3)+2)/5 + d - 719469
	return time.Unix(int64(days)*86400+int64(h*3600+mi*60+sec), int64(frac)).UTC(), true
}

// monthDays is each month's days in a leap year.
var monthDays = [13]int{0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}
