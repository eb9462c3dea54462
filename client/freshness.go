package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// What RFC 9111 (HTTP Caching) lets a cache do with a response: how long it
// stays fresh, and the validators that revalidate it. The exporter is the
// only client of what it stores, on behalf of the Prometheus servers that
// scrape it: it honours s-maxage over max-age (like a shared cache, which
// is what it is to them) and stores responses marked private (they are its
// own key's). It uses no heuristic freshness: a response without explicit
// freshness is revalidated every time, so an API that sends no caching
// headers costs what it did before.

// MaxFreshness caps how long a response is reused without asking the API,
// whatever its headers say.
const MaxFreshness = time.Hour

// Validators identify a stored response to the API: sent back as
// If-None-Match and If-Modified-Since, they let it answer 304 Not Modified.
// They also carry the response's own caching headers, which a 304 that
// does not repeat them leaves in force (RFC 9111 section 4.3.4).
type Validators struct {
	ETag         string // as sent, quotes and W/ included
	LastModified string // as sent, an HTTP date
	CacheControl []string
	Expires      string
}

// Empty reports whether there is nothing to revalidate with.
func (v Validators) Empty() bool { return v.ETag == "" && v.LastModified == "" }

// Freshness is what a response's caching headers allow.
type Freshness struct {
	// Until is when the response stops being fresh; zero or past: it must
	// be revalidated before reuse.
	Until time.Time
	// NoStore forbids keeping it at all (Cache-Control: no-store).
	NoStore bool
}

// Fresh reports whether a response stored with f may be reused at now
// without asking the API.
func (f Freshness) Fresh(now time.Time) bool { return !f.NoStore && now.Before(f.Until) }

// validators reads a response's validators. A weak ETag is kept: the API
// compares it with If-None-Match, where weak comparison is the rule.
func validators(h http.Header) Validators {
	v := Validators{ETag: strings.TrimSpace(h.Get("ETag")), LastModified: strings.TrimSpace(h.Get("Last-Modified"))}
	if len(v.ETag) > 256 || !strings.HasSuffix(v.ETag, `"`) {
		v.ETag = "" // not an entity-tag: never sent back
	}
	if _, err := http.ParseTime(v.LastModified); err != nil {
		v.LastModified = ""
	}
	v.CacheControl, v.Expires = h.Values("Cache-Control"), h.Get("Expires")
	return v
}

// updated is the 304's headers with the stored response's caching headers
// where the 304 does not send its own.
func updated(h http.Header, stored Validators) http.Header {
	if len(h.Values("Cache-Control")) > 0 || len(h.Values("Expires")) > 0 {
		return h
	}
	h = h.Clone()
	for _, v := range stored.CacheControl {
		h.Add("Cache-Control", v)
	}
	if stored.Expires != "" {
		h.Set("Expires", stored.Expires)
	}
	return h
}

// freshness computes how long a response stays fresh (RFC 9111 section
// 4.2): its lifetime (s-maxage, else max-age, else Expires minus Date)
// less its age when received (the larger of Age, corrected for the
// request's round trip, and the Date's lag behind our clock).
func freshness(h http.Header, requested, received time.Time) Freshness {
	cc := cacheControl(h.Values("Cache-Control"))
	if _, ok := cc["no-store"]; ok || varyStar(h) {
		return Freshness{NoStore: true}
	}
	if _, ok := cc["no-cache"]; ok {
		return Freshness{} // stored, but revalidated before every use
	}
	date, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		date = received
	}
	var lifetime time.Duration
	sMaxAge, haveS := cc["s-maxage"]
	maxAge, haveMax := cc["max-age"]
	if haveS || haveMax {
		// The first present wins, and an invalid value (max-age=-1) makes
		// the response stale (RFC 9111 4.2.1), rather than handing the
		// decision to Expires, which an origin that wants no caching often
		// sets far ahead for older caches.
		v := maxAge
		if haveS {
			v = sMaxAge
		}
		s, ok := deltaSeconds(v)
		if !ok {
			return Freshness{}
		}
		lifetime = s
	} else if exp := h.Values("Expires"); len(exp) > 0 {
		t, err := http.ParseTime(exp[0])
		if err != nil {
			return Freshness{} // an invalid Expires means already expired
		}
		lifetime = t.Sub(date)
	} else {
		return Freshness{}
	}
	if lifetime <= 0 {
		return Freshness{}
	}
	// A lifetime longer than an hour would only hide a misconfigured cache
	// in front of the API: the data-stale alerts start at an hour.
	lifetime = min(lifetime, MaxFreshness)
	age, _ := deltaSeconds(strings.TrimSpace(h.Get("Age")))
	apparent := max(received.Sub(date), 0)
	corrected := age + max(received.Sub(requested), 0)
	initial := max(apparent, corrected)
	return Freshness{Until: received.Add(lifetime - initial)}
}

// varyStar reports whether Vary lists "*": such a response never matches a
// later request (RFC 9111 4.1), so it is never reused, not even after a
// 304. Vary naming headers needs no check: every request of a client
// carries the same Accept, Accept-Encoding and User-Agent, and the same
// account's key (a rotated key is still that account's; another account
// is another client, with a store of its own).
func varyStar(h http.Header) bool {
	for _, v := range h.Values("Vary") {
		for _, name := range strings.Split(v, ",") {
			if strings.TrimSpace(name) == "*" {
				return true
			}
		}
	}
	return false
}

// cacheControl parses Cache-Control directives, names in lower case, a
// quoted argument unquoted; the first of a repeated directive wins.
func cacheControl(values []string) map[string]string {
	out := map[string]string{}
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			name, arg, _ := strings.Cut(strings.TrimSpace(part), "=")
			name = strings.ToLower(strings.TrimSpace(name))
			if name == "" {
				continue
			}
			if _, seen := out[name]; !seen {
				out[name] = strings.Trim(strings.TrimSpace(arg), `"`)
			}
		}
	}
	return out
}

// deltaSeconds parses a non-negative number of seconds; a value too large
// is capped (RFC 9111 section 1.2.2), a bad one is not there.
func deltaSeconds(s string) (time.Duration, bool) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	const maxSeconds = 1 << 31
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n > maxSeconds {
		n = maxSeconds
	}
	return time.Duration(n) * time.Second, true
}
