// SPDX-License-Identifier: Apache-2.0

package client

import (
	"net/http"
	"testing"
	"time"
)

// FuzzCachingHeaders: whatever caching and quota headers the API sends,
// reading them never panics, never makes an answer fresh for longer than
// MaxFreshness, and never announces a quota reset outside years 1970 to
// 9999 or a negative count.
func FuzzCachingHeaders(f *testing.F) {
	for _, seed := range [][4]string{
		{"max-age=30, s-maxage=60", "Tue, 24 Nov 2026 12:00:00 GMT", "5", `"hourly";q=100;w=3600`},
		{"no-store", "0", "99999999999999999999", "limit=100, remaining=50, reset=30"},
		{`MAX-AGE="45", private`, "", "-1", `"p";r=5;t=9007199254740992`},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3])
	}
	requested := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	received := requested.Add(time.Second)
	f.Fuzz(func(t *testing.T, cacheControl, expires, age, quota string) {
		h := http.Header{}
		h.Set("Cache-Control", cacheControl)
		h.Set("Expires", expires)
		h.Set("Age", age)
		h.Set("Date", expires)
		h.Set("RateLimit", quota)
		h.Set("RateLimit-Policy", quota)
		h.Set("X-RateLimit-Reset", age)
		h.Set("RateLimit-Reset", age)
		h.Set("X-RateLimit-Limit", quota)
		fr := freshness(h, requested, received)
		if fr.Until.After(received.Add(MaxFreshness)) {
			t.Fatalf("fresh until %s, past MaxFreshness", fr.Until)
		}
		q := rateLimit(h, received)
		if !q.Reset.IsZero() && (q.Reset.Year() < 1970 || q.Reset.Year() > 9999) {
			t.Fatalf("reset %s", q.Reset)
		}
		if q.Window < 0 || (q.Limit < 0 && q.Limit != -1) || (q.Remaining < 0 && q.Remaining != -1) {
			t.Fatalf("quota %+v", q)
		}
		_ = validators(h)
	})
}
