package client

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Classes of failure. Test with errors.Is; the concrete error types below
// carry the details.
var (
	ErrAuth         = errors.New("authentication failed")   // HTTP 401 or 403
	ErrNotFound     = errors.New("not found")               // HTTP 404
	ErrRateLimited  = errors.New("rate limited")            // HTTP 429
	ErrServer       = errors.New("server error")            // HTTP 5xx
	ErrBodyTooLarge = errors.New("response body too large") // over Config.MaxResponseBytes
	ErrTooManyPages = errors.New("too many pages")          // more than Config.MaxPages
	ErrCursorLoop   = errors.New("cursor repeated")         // the server sent a cursor seen before in this walk
	ErrBadContent   = errors.New("not a JSON response")     // a Content-Type that is not JSON
	ErrNotJSON      = errors.New("not valid JSON")          // a body that does not parse; decoders wrap it
)

// excerptBytes bounds how much of an error body is kept for the message.
const excerptBytes = 256

// maxRetryAfterSeconds caps a Retry-After so that an absurd value (or an
// overflow) cannot silence an endpoint for longer than a day.
const maxRetryAfterSeconds = 24 * 60 * 60

// StatusError is a response with a status code outside 2xx.
type StatusError struct {
	Endpoint   string        // endpoint label, e.g. "global-stability/pillar/cyber"
	StatusCode int           // HTTP status code
	Excerpt    string        // start of the body, sanitised, at most a few hundred bytes
	RetryAfter time.Duration // from Retry-After on a 429 or 503; 0 when absent
}

func (e *StatusError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: HTTP %d %s", e.Endpoint, e.StatusCode, http.StatusText(e.StatusCode))
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.Excerpt != "" {
		fmt.Fprintf(&b, ": %s", e.Excerpt)
	}
	return b.String()
}

// Is maps the status code to its class, so errors.Is(err, ErrAuth) works.
func (e *StatusError) Is(target error) bool {
	switch target {
	case ErrAuth:
		return e.StatusCode == http.StatusUnauthorized || e.StatusCode == http.StatusForbidden
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case ErrRateLimited:
		return e.StatusCode == http.StatusTooManyRequests
	case ErrServer:
		return e.StatusCode >= 500 && e.StatusCode <= 599
	}
	return false
}

// TransportError is a failure to get a whole response: connection refused or
// reset, TLS failure, a deadline, a body cut short. It never carries the
// request URL (a *url.Error's text would).
type TransportError struct {
	Endpoint string
	Err      error
}

func (e *TransportError) Error() string { return e.Endpoint + ": " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }

// DecodeError is a response that arrived whole but is not what the spec
// describes: not JSON, the wrong shape, a missing or null field, a value out
// of range, or a body over the size limit.
type DecodeError struct {
	Endpoint string
	Field    string // path of the offending field, e.g. "events[3].lat"; empty for the whole body
	Err      error
}

func (e *DecodeError) Error() string {
	if e.Endpoint == "" { // as a decoder returns it, before the client names the endpoint
		return "field " + e.Field + ": " + e.Err.Error()
	}
	if e.Field == "" {
		return e.Endpoint + ": decode: " + e.Err.Error()
	}
	return e.Endpoint + ": decode: field " + e.Field + ": " + e.Err.Error()
}
func (e *DecodeError) Unwrap() error { return e.Err }

// RetryAfter returns how long the server asked the caller to wait, if err
// carries a Retry-After header value.
func RetryAfter(err error) (time.Duration, bool) {
	var se *StatusError
	if errors.As(err, &se) && se.RetryAfter > 0 {
		return se.RetryAfter, true
	}
	return 0, false
}

// parseRetryAfter reads Retry-After as delay-seconds or an HTTP date
// (RFC 9110 section 10.2.3), either capped at maxRetryAfterSeconds.
// Unparsable or past values give 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		return time.Duration(min(max(secs, 0), maxRetryAfterSeconds)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		// Sub saturates at 292 years rather than overflowing; cap it too.
		return min(t.Sub(now), maxRetryAfterSeconds*time.Second)
	}
	return 0
}

// sanitize makes text from the wire safe for one log line: control
// characters and invalid UTF-8 become spaces, runs of space collapse, and
// the result is at most max bytes. Redact the key first (Client.excerpt):
// cutting could otherwise leave a piece of it too short to recognise.
func sanitize(s string, max int) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		if r == utf8.RuneError || unicode.IsControl(r) || unicode.IsSpace(r) {
			if !space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = true
			continue
		}
		space = false
		if b.Len()+utf8.RuneLen(r) > max {
			b.WriteString("…")
			break
		}
		b.WriteRune(r)
	}
	return strings.TrimSpace(b.String())
}
