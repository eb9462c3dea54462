package client

import (
	"fmt"
	"time"
)

// timestampLayouts are tried in order. RFC3339Nano parses both with and
// without fractional seconds; the others cover ISO 8601 forms that servers
// commonly emit: an offset without a colon, and no zone at all (read as UTC,
// because spec section 2 says timestamps are in UTC).
var timestampLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04:05.999999999",
}

// ParseTimestamp parses an ISO 8601 / RFC 3339 timestamp of the API, with
// what RFC 3339 allows beyond Go's layouts: a lowercase "t" or "z", a space
// instead of "T" (its section 5.6 note), and a leap second (":60", taken
// as the first second of the next minute, as Unix time has no leap
// seconds). Years 0000 to 9999 are accepted as they are: whether an instant
// is plausible is for the caller to judge. The error does not quote the
// input: text from the wire reaches errors only through the redacted body
// excerpt. The result is in UTC.
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
