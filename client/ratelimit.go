package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimit is the quota an API response announces, where it uses one of
// the common conventions; the spec shows none, so every field may be
// absent (negative). Read from, in this order of preference:
//
//   - the IETF fields (draft-ietf-httpapi-ratelimit-headers-08 and later):
//     RateLimit-Policy: "default";q=100;w=60 and RateLimit: "default";r=50;t=30
//   - its draft-07 form: RateLimit: limit=100, remaining=50, reset=30
//   - its earlier drafts: RateLimit-Limit, RateLimit-Remaining,
//     RateLimit-Reset (seconds from now)
//   - the de facto X-RateLimit-Limit, X-RateLimit-Remaining and
//     X-RateLimit-Reset, whose reset is Unix seconds (GitHub and most
//     others) or, when smaller than 10^9, seconds from now.
type RateLimit struct {
	Limit     float64       // requests allowed per window; -1 if not sent
	Remaining float64       // requests left in this window; -1 if not sent
	Reset     time.Time     // when the window resets; zero if not sent
	Window    time.Duration // the window's length; 0 if not sent
}

// rateLimit reads a response's quota, received at now.
func rateLimit(h http.Header, now time.Time) RateLimit {
	r := RateLimit{Limit: -1, Remaining: -1}
	// The oldest convention first, so that a newer one the API also sends wins.
	r.set(h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), now, true)
	r.set(h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset"), now, false)
	if v := h.Get("RateLimit"); v != "" {
		params := structuredParams(v)
		if _, ok := params["limit"]; ok || params["remaining"] != "" {
			r.set(params["limit"], params["remaining"], params["reset"], now, false) // draft-07
		} else {
			r.set("", params["r"], params["t"], now, false)
		}
	}
	if v := h.Get("RateLimit-Policy"); v != "" {
		params := structuredParams(v)
		if q, ok := count(params["q"]); ok {
			r.Limit = q
		}
		if w, ok := count(params["w"]); ok {
			if d, ok := seconds(w); ok {
				r.Window = d
			}
		}
	}
	return r
}

// set takes each value that is a valid count.
func (r *RateLimit) set(limit, remaining, reset string, now time.Time, resetMayBeUnix bool) {
	// "100, 100;w=60" (drafts 03 to 06) and "100;w=60": the first number is
	// the quota, the first w= its window.
	elems := strings.Split(limit, ",")
	first, _, _ := strings.Cut(strings.TrimSpace(elems[0]), ";")
	if n, ok := count(first); ok {
		r.Limit = n
		for _, e := range elems {
			_, params, _ := strings.Cut(e, ";")
			if w, ok := count(structuredParams(params)["w"]); ok {
				if d, ok := seconds(w); ok {
					r.Window = d
					break
				}
			}
		}
	}
	if n, ok := count(remaining); ok {
		r.Remaining = n
	}
	if n, ok := count(reset); ok {
		switch {
		case resetMayBeUnix && n >= 1e9 && n < maxUnixReset:
			r.Reset = time.Unix(int64(n), 0)
		case n < 1e9: // seconds from now; more would be a date, or nonsense
			r.Reset = now.Add(time.Duration(n) * time.Second)
		}
	}
}

// maxUnixReset is the first second of the year 10000: a reset after it is
// not a date.
const maxUnixReset = 253402300800

// seconds turns a window's w= into a duration, if it is a plausible one
// (up to a year).
func seconds(n float64) (time.Duration, bool) {
	if n <= 0 || n > 366*24*3600 {
		return 0, false
	}
	return time.Duration(n) * time.Second, true
}

// count parses a non-negative whole number no larger than 2^53.
func count(s string) (float64, bool) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || n > 1<<53 {
		return 0, false
	}
	return float64(n), true
}

// structuredParams reads the parameters of a structured field item
// (`"name";q=100;w=60`) or a dictionary (`limit=100, remaining=50`) into
// one map: key → value, quotes removed.
func structuredParams(v string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' }) {
		k, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		if !ok {
			continue
		}
		k = strings.ToLower(strings.TrimSpace(k))
		if _, seen := out[k]; !seen {
			out[k] = strings.Trim(strings.TrimSpace(val), `"`)
		}
	}
	return out
}
