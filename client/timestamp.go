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

// ParseTimestamp parses an ISO 8601 / RFC 3339 timestamp of the API. The
// error does not quote the input: text from the wire reaches errors only
// through the redacted body excerpt.
func ParseTimestamp(s string) (time.Time, error) {
	for _, layout := range timestampLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("not an RFC 3339 timestamp (%d bytes)", len(s))
}
