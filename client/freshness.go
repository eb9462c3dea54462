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
	apparent := max(received.Sub(date), 0)
	corrected := deltaSeconds(strings.TrimSpace(h.Get("Age"))) + max(received.Sub(requested), 0)
	return Freshness{Until: received.Add(min(lifetime, MaxFreshness) - max(apparent, corrected))}
}

// deltaSeconds parses a non-negative number of seconds, 0 if it is not one;
// a value too large is capped (RFC 9111 1.2.2), at 2^31-1: ParseUint's
// results for a bad value and for one out of range.
func deltaSeconds(s string) time.Duration {
	n, _ := strconv.ParseUint(s, 10, 31)
	return time.Duration(n) * time.Second
}
