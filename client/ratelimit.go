package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// RateLimit is the quota an API response announces, where it uses one of
// the common conventions; the spec shows none, so every field may be
// absent (negative). A quota is taken whole from one convention, the
// newest the response uses, never pieced together from several: an API
// that sends two of them (often a gateway's beside the application's) may
// count different things in each, and "500 left of 10" helps nobody. In
// order of preference:
//
//   - the IETF fields (draft-ietf-httpapi-ratelimit-headers-08 and later):
//     RateLimit-Policy: "default";q=100;w=60 and RateLimit: "default";r=50;t=30
//   - its draft-07 form: RateLimit: limit=100, remaining=50, reset=30, with
//     RateLimit-Policy: 100;w=60 for the window
//   - its earlier drafts: RateLimit-Limit, RateLimit-Remaining,
//     RateLimit-Reset (seconds from now)
//   - the de facto X-RateLimit-Limit, X-RateLimit-Remaining and
//     X-RateLimit-Reset, whose reset is Unix seconds (GitHub and most
//     others) or, when smaller than 10^9, seconds from now.
//
// A convention is in use when one of its fields holds a usable value.
type RateLimit struct {
	Limit     float64       // requests allowed per window; -1 if not sent
	Remaining float64       // requests left in this window; -1 if not sent
	Reset     time.Time     // when the window resets; zero if not sent
	Window    time.Duration // the window's length; 0 if not sent
}

// noQuota is a RateLimit that announces nothing.
var noQuota = RateLimit{Limit: -1, Remaining: -1}

// announces reports whether any field was read.
func (r RateLimit) announces() bool {
	return r.Limit >= 0 || r.Remaining >= 0 || !r.Reset.IsZero() || r.Window > 0
}

// rateLimit reads a response's quota, received at now, from the newest
// convention it uses.
func rateLimit(h http.Header, now time.Time) RateLimit {
	for _, read := range []func(http.Header, time.Time) RateLimit{ietfQuota, draft07Quota, draftQuota, xQuota} {
		if r := read(h, now); r.announces() {
			return r
		}
	}
	return noQuota
}

// ietfQuota reads RateLimit's first item (r=, t=) and the RateLimit-Policy
// item of the same name (q=, w=), or the first policy if none has it.
func ietfQuota(h http.Header, now time.Time) RateLimit {
	r := noQuota
	var name string
	if items := sfList(h.Values("RateLimit")); len(items) > 0 {
		if _, ok := items[0].params["r"]; ok || items[0].params["t"] != "" {
			name = items[0].name
			r.set("", items[0].params["r"], items[0].params["t"], now, false)
		}
	}
	if p, ok := policy(sfList(h.Values("RateLimit-Policy")), name); ok {
		if q, ok := count(p.params["q"]); ok {
			r.Limit = q
		}
		if w, ok := count(p.params["w"]); ok {
			if d, ok := seconds(w); ok {
				r.Window = d
			}
		}
	}
	return r
}

// policy is the policy (an item with q=) named name, or else the first.
func policy(policies []sfItem, name string) (sfItem, bool) {
	var first *sfItem
	for i, p := range policies {
		if _, ok := p.params["q"]; !ok {
			continue
		}
		if p.name == name {
			return p, true
		}
		if first == nil {
			first = &policies[i]
		}
	}
	if first == nil {
		return sfItem{}, false
	}
	return *first, true
}

// draft07Quota reads draft-07's RateLimit dictionary, with the window from
// a RateLimit-Policy of its form (100;w=60).
func draft07Quota(h http.Header, now time.Time) RateLimit {
	r := noQuota
	params := structuredParams(h.Get("RateLimit"))
	_, hasLimit := params["limit"]
	_, hasRemaining := params["remaining"]
	if !hasLimit && !hasRemaining {
		return r
	}
	r.set(params["limit"], params["remaining"], params["reset"], now, false)
	if r.Window == 0 {
		r.setWindow(h.Get("RateLimit-Policy"))
	}
	return r
}

// draftQuota reads drafts 03 to 06: RateLimit-Limit (with its windows),
// RateLimit-Remaining, RateLimit-Reset.
func draftQuota(h http.Header, now time.Time) RateLimit {
	r := noQuota
	r.set(h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset"), now, false)
	return r
}

// xQuota reads X-RateLimit-Limit, -Remaining and -Reset.
func xQuota(h http.Header, now time.Time) RateLimit {
	r := noQuota
	r.set(h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), now, true)
	return r
}

// set takes each value that is a valid count.
func (r *RateLimit) set(limit, remaining, reset string, now time.Time, resetMayBeUnix bool) {
	// "100, 100;w=60" (drafts 03 to 06) and "100;w=60": the first number is
	// the quota, the first w= its window.
	first, _, _ := strings.Cut(strings.TrimSpace(strings.Split(limit, ",")[0]), ";")
	if n, ok := count(first); ok {
		r.Limit = n
		r.setWindow(limit)
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

// setWindow takes the first plausible w= of a list of quota policies
// ("100, 100;w=60" or "100;w=60").
func (r *RateLimit) setWindow(v string) {
	for _, e := range strings.Split(v, ",") {
		_, params, _ := strings.Cut(e, ";")
		if w, ok := count(structuredParams(params)["w"]); ok {
			if d, ok := seconds(w); ok {
				r.Window = d
				return
			}
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

// sfItem is one member of a structured-field list (RFC 9651) as the IETF
// rate-limit fields use it: a name (a string or a token) and parameters.
type sfItem struct {
	name   string
	params map[string]string
}

// sfList reads a structured-field list leniently: members split at commas,
// parameters at semicolons; quotes are removed. Enough for the rate-limit
// fields, whose names and values hold neither.
func sfList(values []string) []sfItem {
	var out []sfItem
	for _, v := range values {
		for _, member := range strings.Split(v, ",") {
			parts := strings.Split(member, ";")
			name := strings.Trim(strings.TrimSpace(parts[0]), `"`)
			if name == "" && len(parts) == 1 {
				continue
			}
			out = append(out, sfItem{name: name, params: structuredParams(strings.Join(parts[1:], ";"))})
		}
	}
	return out
}
