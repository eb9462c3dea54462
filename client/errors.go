// SPDX-License-Identifier: Apache-2.0

package client

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Classes of failure, for errors.Is; the error types carry the details.
var (
	ErrAuth         = errors.New("authentication failed")   // HTTP 401 or 403
	ErrNotFound     = errors.New("not found")               // HTTP 404
	ErrRateLimited  = errors.New("rate limited")            // HTTP 429
	ErrServer       = errors.New("server error")            // HTTP 5xx
	ErrBodyTooLarge = errors.New("response body too large") // over its limit (Config.MaxResponseBytes, MaxDocumentBytes)
	ErrTooManyPages = errors.New("too many pages")          // more than Config.MaxPages
	ErrCursorLoop   = errors.New("cursor repeated")         // the server sent a cursor seen before in this walk
	ErrBadContent   = errors.New("not a JSON response")     // a Content-Type that is not JSON, a Content-Encoding other than gzip
	ErrNotJSON      = errors.New("not valid JSON")          // a body that does not parse; decoders wrap it
	// A redirect outside the base URL's origin, where the key must not go,
	// refused before anything is sent; or a loop within it.
	ErrRedirectRefused = errors.New("redirect refused")
)

// excerptBytes bounds how much of an error body is kept for the message.
const excerptBytes = 256

// StatusError is a response with a status code outside 2xx.
type StatusError struct {
	Endpoint   string // endpoint label, e.g. "global-stability/pillar/cyber"
	StatusCode int
	Excerpt    string        // start of the body, through Readable and sanitised
	RetryAfter time.Duration // a 429's or 503's, capped at a day: no value silences an endpoint longer
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s: HTTP %d %s", e.Endpoint, e.StatusCode, http.StatusText(e.StatusCode))
	if e.RetryAfter > 0 {
		msg += fmt.Sprintf(" (retry after %s)", e.RetryAfter)
	}
	if e.Excerpt != "" {
		msg += ": " + e.Excerpt
	}
	return msg
}

// Is maps the status code to its class, so errors.Is(err, ErrAuth) works.
func (e *StatusError) Is(target error) bool {
	code := e.StatusCode
	return target == ErrAuth && (code == 401 || code == 403) || target == ErrNotFound && code == 404 ||
		target == ErrRateLimited && code == 429 || target == ErrServer && code >= 500 && code <= 599
}

// TransportError is a failure to get a whole response (connection, TLS, a
// deadline, a body cut short). Its text never holds the request URL.
type TransportError struct {
	Endpoint string
	Err      error
}

func (e *TransportError) Error() string { return e.Endpoint + ": " + e.Err.Error() }
func (e *TransportError) Unwrap() error { return e.Err }

// DecodeError is a whole response that is not what the spec describes; for
// ErrNotJSON, with the start of the body.
type DecodeError struct {
	Endpoint string // empty as a decoder returns it
	Field    string // path of the offending field, e.g. "events[3].lat"; empty for the whole body
	Err      error
}

func (e *DecodeError) Error() string {
	msg := e.Err.Error()
	if e.Field != "" {
		msg = "field " + e.Field + ": " + msg
	}
	if e.Endpoint != "" {
		msg = e.Endpoint + ": decode: " + msg
	}
	return msg
}
func (e *DecodeError) Unwrap() error { return e.Err }

// parseRetryAfter reads Retry-After as delay-seconds or an HTTP date (RFC
// 9110 10.2.3), capped at a day; a bad or past value is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	delay := deltaSeconds(strings.TrimSpace(v)) // as Cache-Control's are read
	if t, err := http.ParseTime(strings.TrimSpace(v)); err == nil {
		delay = t.Sub(now) // Sub saturates at 292 years
	}
	return min(max(delay, 0), 24*time.Hour)
}

// excerpt makes text from the wire fit for one log line, at most n bytes
// and "…": through Readable first (printable UTF-8 and spaces only), so
// that no cut hides a key from it. A character that the read cut short at
// the end is dropped, not a reason to withhold the rest.
func (c *Client) excerpt(s string, n int) string {
	for i := max(len(s)-utf8.UTFMax+1, 0); i < len(s); i++ {
		if utf8.RuneStart(s[i]) && !utf8.FullRuneInString(s[i:]) {
			s = s[:i]
			break
		}
	}
	s = strings.Join(strings.Fields(c.cfg.Keys.Readable(s)), " ")
	if len(s) <= n {
		return s
	}
	return strings.TrimSpace(strings.ToValidUTF8(s[:n], "")) + "…" // a rune cut in two is dropped
}

// redactedError is an error whose text Readable changed: it answers
// errors.Is as the original does but never unwraps to its text.
type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

// redactError passes err's text, which may quote upstream bytes, through Readable.
func (c *Client) redactError(err error) error {
	if msg := c.cfg.Keys.Readable(err.Error()); msg != err.Error() {
		return &redactedError{msg: msg, orig: err}
	}
	return err
}
