// SPDX-License-Identifier: Apache-2.0

package client

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

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
	if items := sfList(h.Values("RateLimit")); len(items) > 0 {
		ietf = items[0]
	}
	for _, p := range sfList(h.Values("RateLimit-Policy")) {
		if _, ok := p.params["q"]; ok && (policy.params == nil || p.name == ietf.name && policy.name != ietf.name) {
			policy = p
		}
	}
	d07 := params(h.Get("RateLimit"))
	for _, c := range []convention{
		{policy.params["q"], ietf.params["r"], ietf.params["t"], ";w=" + policy.params["w"], false},
		{d07["limit"], d07["remaining"], d07["reset"], h.Get("RateLimit-Policy"), false},
		{h.Get("RateLimit-Limit"), h.Get("RateLimit-Remaining"), h.Get("RateLimit-Reset"), h.Get("RateLimit-Limit"), false},
		{h.Get("X-RateLimit-Limit"), h.Get("X-RateLimit-Remaining"), h.Get("X-RateLimit-Reset"), "", true},
	} {
		if q := c.quota(now); q.Limit >= 0 || q.Remaining >= 0 || !q.Reset.IsZero() {
			return q
		}
	}
	return RateLimit{Limit: -1, Remaining: -1}
}

// convention is one convention's fields as sent: policy holds the window,
// and a reset may be Unix seconds where unix.
type convention struct {
	limit, remaining, reset, policy string
	unix                            bool
}

// quota reads c's values; one that is no valid count is absent.
func (c convention) quota(now time.Time) RateLimit {
	r := RateLimit{Limit: -1, Remaining: -1, Window: window(c.policy)}
	// "100, 100;w=60": the first number is the quota.
	first, _, _ := strings.Cut(strings.TrimSpace(strings.Split(c.limit, ",")[0]), ";")
	if n, ok := count(first); ok {
		r.Limit = n
	}
	if n, ok := count(c.remaining); ok {
		r.Remaining = n
	}
	if n, ok := count(c.reset); ok {
		switch {
		case c.unix && n >= 1e9 && n < 253402300800: // before the year 10000
			r.Reset = time.Unix(int64(n), 0)
		case n < 1e9: // seconds from now; more would be a date, or nonsense
			r.Reset = now.Add(time.Duration(n) * time.Second)
		}
	}
	return r
}

// window is the first plausible (up to a year) w= of a list of policies.
func window(v string) time.Duration {
	for _, p := range sfList([]string{v}) {
		if w, ok := count(p.params["w"]); ok && w > 0 && w <= 366*24*3600 {
			return time.Duration(w) * time.Second
		}
	}
	return 0
}

// count parses a non-negative whole number no larger than 2^53.
func count(s string) (float64, bool) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	return float64(n), err == nil && n <= 1<<53
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
func sfList(values []string) []sfItem {
	var out []sfItem
	for _, v := range values {
		for _, member := range strings.Split(v, ",") {
			name, rest, found := strings.Cut(member, ";")
			if name = strings.Trim(strings.TrimSpace(name), `"`); name != "" || found {
				out = append(out, sfItem{name: name, params: params(rest)})
			}
		}
	}
	return out
}
