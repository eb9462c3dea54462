// SPDX-License-Identifier: Apache-2.0

package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/http/httpguts"
)

// RFC 9111 caching. The exporter caches for the Prometheus servers that
// scrape it: it honours s-maxage and stores private responses (its own
// key's). No heuristic freshness: without caching headers, every use revalidates.

// MaxFreshness caps reuse without asking, whatever the headers: longer would
// hide a misconfigured cache in front of the API; data-stale alerts start at an hour.
const MaxFreshness = time.Hour

// Validators identify a stored response for a 304, with its caching
// headers, which a 304 that does not repeat them leaves in force (RFC 9111 4.3.4).
type Validators struct {
	ETag         string // as sent, quotes and W/ included
	LastModified string // as sent, an HTTP date
	CacheControl []string
	Expires      string
}

// Freshness is what a response's caching headers allow.
type Freshness struct {
	Until   time.Time // when it stops being fresh; zero or past: revalidate before reuse
	NoStore bool      // Cache-Control: no-store, or Vary: *: never kept
}

// Fresh reports whether a response stored with f may be reused at now unasked.
func (f Freshness) Fresh(now time.Time) bool { return !f.NoStore && now.Before(f.Until) }

// validators reads a response's validators; a weak ETag is kept (the API compares weakly).
func validators(h http.Header) Validators {
	v := Validators{ETag: strings.TrimSpace(h.Get("ETag")), LastModified: strings.TrimSpace(h.Get("Last-Modified")),
		CacheControl: h.Values("Cache-Control"), Expires: h.Get("Expires")}
	if len(v.ETag) > 256 || !strings.HasSuffix(v.ETag, `"`) {
		v.ETag = "" // not an entity-tag: never sent back
	}
	if _, err := http.ParseTime(v.LastModified); err != nil {
		v.LastModified = ""
	}
	return v
}

// freshness computes how long a response stays fresh (RFC 9111 4.2): its
// lifetime less its age when received, the larger of Age plus the round
// trip and the Date's lag behind our clock.
func freshness(h http.Header, requested, received time.Time) Freshness {
	cc := params(strings.Join(h.Values("Cache-Control"), ","))
	// Vary: * matches no later request (RFC 9111 4.1); other Vary needs no
	// check: a client's requests all send the same headers and key.
	if _, ok := cc["no-store"]; ok || httpguts.HeaderValuesContainsToken(h.Values("Vary"), "*") {
		return Freshness{NoStore: true}
	}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		date = received
	}
	// The first source present decides; an invalid one makes it stale (RFC
	// 9111 4.2.1) rather than defer to Expires, often far ahead for old caches.
	var lifetime time.Duration
	if v, ok := cc["s-maxage"]; ok {
		lifetime = deltaSeconds(v)
	} else if v, ok := cc["max-age"]; ok {
		lifetime = deltaSeconds(v)
	} else if t, err := http.ParseTime(h.Get("Expires")); err == nil {
		lifetime = t.Sub(date)
	}
	if _, ok := cc["no-cache"]; ok || lifetime <= 0 {
		return Freshness{} // stored, but revalidated before use
	}
	corrected := deltaSeconds(strings.TrimSpace(h.Get("Age"))) + max(received.Sub(requested), 0)
	return Freshness{Until: received.Add(min(lifetime, MaxFreshness) - max(received.Sub(date), corrected))}
}

// deltaSeconds parses a non-negative number of seconds, 0 if it is not one;
// a value too large is capped (RFC 9111 1.2.2), at 2^31-1: ParseUint's
// results for a bad value and for one out of range.
func deltaSeconds(s string) time.Duration {
	n, _ := strconv.ParseUint(s, 10, 31)
	return time.Duration(n) * time.Second
}

// RateLimit is the quota a response announces (the spec shows none), taken
// whole from the newest convention it uses, never pieced together: a
// gateway's quota beside the application's may count other things. Newest
// first: IETF draft-08 on (RateLimit-Policy: "default";q=100;w=60 and
// RateLimit: "default";r=50;t=30); draft-07 (RateLimit: limit=100,
// remaining=50, reset=30, the window in RateLimit-Policy: 100;w=60); drafts
// 03 to 06 (RateLimit-Limit, -Remaining, -Reset in seconds from now); and
// X-RateLimit-*, whose reset is Unix seconds or, below 10^9, seconds from now.
type RateLimit struct {
	Limit     float64       // requests allowed per window; -1 if not sent
	Remaining float64       // requests left in this window; -1 if not sent
	Reset     time.Time     // when the window resets; zero if not sent
	Window    time.Duration // the window's length; 0 if not sent
}

// rateLimit reads a response's quota, received at now: the first
// convention, newest first, that gives a count or a reset.
func rateLimit(h http.Header, now time.Time) RateLimit {
	// IETF: RateLimit's first item, and the policy (q=) of its name, else the first.
	var ietf, policy sfItem
	if items := sfList(h.Values("RateLimit")...); len(items) > 0 {
		ietf = items[0]
	}
	for _, p := range sfList(h.Values("RateLimit-Policy")...) {
		if _, ok := p.params["q"]; ok && (policy.params == nil || p.name == ietf.name && policy.name != ietf.name) {
			policy = p
		}
	}
	d07 := params(h.Get("RateLimit"))
	for _, q := range []RateLimit{
		quota(policy.params["q"], ietf.params["r"], ietf.params["t"], ";w="+policy.params["w"], false, now),
		quota(d07["limit"], d07["remaining"], d07["reset"], h.Get("RateLimit-Policy"), false, now),
		quota(h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset"), h.Get("RateLimit-Limit"), false, now),
		quota(h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), "", true, now),
	} {
		if q.Limit >= 0 || q.Remaining >= 0 || !q.Reset.IsZero() {
			return q
		}
	}
	return RateLimit{Limit: -1, Remaining: -1}
}

// quota reads one convention's fields as sent, policy holding the window
// and reset Unix seconds where unix; a value that is no valid count is absent.
func quota(limit, remaining, reset, policy string, unix bool, now time.Time) RateLimit {
	// "100, 100;w=60": the first number is the quota.
	first, _, _ := strings.Cut(strings.TrimSpace(strings.Split(limit, ",")[0]), ";")
	r := RateLimit{Limit: count(first), Remaining: count(remaining), Window: window(policy)}
	if n := count(reset); n >= 0 {
		switch {
		case unix && n >= 1e9 && n < 253402300800: // before the year 10000
			r.Reset = time.Unix(int64(n), 0)
		case n < 1e9: // seconds from now; more would be a date, or nonsense
			r.Reset = now.Add(time.Duration(n) * time.Second)
		}
	}
	return r
}

// window is the first plausible (up to a year) w= of a list of policies.
func window(v string) time.Duration {
	for _, p := range sfList(v) {
		if w := count(p.params["w"]); w > 0 && w <= 366*24*3600 {
			return time.Duration(w) * time.Second
		}
	}
	return 0
}

// count parses a non-negative whole number no larger than 2^53; anything
// else is -1, as RateLimit marks a count not sent.
func count(s string) float64 {
	if n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64); err == nil && n <= 1<<53 {
		return float64(n)
	}
	return -1
}

// params reads the directives of Cache-Control, the members of a
// dictionary (`limit=100, remaining=50`) or an item's parameters
// (`;q=100;w=60`) leniently: names lowered, values unquoted, the first wins.
func params(v string) map[string]string {
	out := map[string]string{}
	for _, part := range strings.FieldsFunc(v, func(r rune) bool { return r == ';' || r == ',' }) {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if _, seen := out[k]; k != "" && !seen {
			out[k] = strings.Trim(strings.TrimSpace(val), `"`)
		}
	}
	return out
}

// sfItem is a member of a structured-field list (RFC 9651).
type sfItem struct {
	name   string
	params map[string]string
}

// sfList reads a structured-field list leniently, split at commas and
// semicolons: the rate-limit fields' names and values hold neither.
func sfList(lines ...string) []sfItem {
	var out []sfItem
	for _, member := range strings.Split(strings.Join(lines, ","), ",") { // a field's lines are one list
		name, rest, found := strings.Cut(member, ";")
		if name = strings.Trim(strings.TrimSpace(name), `"`); name != "" || found {
			out = append(out, sfItem{name: name, params: params(rest)})
		}
	}
	return out
}
