// SPDX-License-Identifier: Apache-2.0

package client

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestFreshness: how long each combination of caching headers lets a
// response be reused without asking the API (RFC 9111 section 4.2).
func TestFreshness(t *testing.T) {
	requested := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	received := requested.Add(2 * time.Second) // a 2 s round trip
	date := received.Format(http.TimeFormat)
	for _, tc := range []struct {
		name    string
		headers map[string]string
		fresh   time.Duration // from received; 0: must revalidate
		noStore bool
	}{
		{"max-age", map[string]string{"Cache-Control": "max-age=30", "Date": date}, 28 * time.Second, false}, // less the round trip
		{"s-maxage wins over max-age", map[string]string{"Cache-Control": "max-age=30, s-maxage=60", "Date": date}, 58 * time.Second, false},
		{"directives in any case, quoted", map[string]string{"Cache-Control": `Public, MAX-AGE="45"`, "Date": date}, 43 * time.Second, false},
		{"Age counts", map[string]string{"Cache-Control": "max-age=30", "Age": "20", "Date": date}, 8 * time.Second, false},
		{"Age past max-age", map[string]string{"Cache-Control": "max-age=30", "Age": "40", "Date": date}, 0, false},
		{"a Date behind our clock counts as age", map[string]string{"Cache-Control": "max-age=30", "Date": received.Add(-25 * time.Second).Format(http.TimeFormat)}, 5 * time.Second, false},
		{"Expires minus Date", map[string]string{"Expires": received.Add(time.Minute).Format(http.TimeFormat), "Date": date}, 58 * time.Second, false},
		{"max-age wins over Expires", map[string]string{"Cache-Control": "max-age=10", "Expires": received.Add(time.Hour).Format(http.TimeFormat), "Date": date}, 8 * time.Second, false},
		{"an invalid Expires is expired", map[string]string{"Expires": "0", "Date": date}, 0, false},
		{"Expires in the past", map[string]string{"Expires": received.Add(-time.Minute).Format(http.TimeFormat), "Date": date}, 0, false},
		{"no-cache: stored, always revalidated", map[string]string{"Cache-Control": "no-cache, max-age=30", "Date": date}, 0, false},
		{"no-store", map[string]string{"Cache-Control": "max-age=30, no-store", "Date": date}, 0, true},
		{"nothing: no heuristic freshness", map[string]string{"Date": date, "Last-Modified": received.Add(-24 * time.Hour).Format(http.TimeFormat)}, 0, false},
		{"a bad max-age is ignored", map[string]string{"Cache-Control": "max-age=-5", "Date": date}, 0, false},
		// RFC 9111 4.2.1: an invalid value makes the response stale; it
		// does not fall back to the next source of freshness.
		{"an invalid max-age is stale, whatever Expires says", map[string]string{"Cache-Control": "max-age=-1", "Expires": received.Add(time.Hour).Format(http.TimeFormat), "Date": date}, 0, false},
		{"an invalid s-maxage is stale, whatever max-age says", map[string]string{"Cache-Control": "s-maxage=soon, max-age=30", "Date": date}, 0, false},
		{"Vary: * never matches a later request", map[string]string{"Cache-Control": "max-age=30", "Vary": "Accept, *", "Date": date}, 0, true},
		{"Vary on a header the exporter always sends alike", map[string]string{"Cache-Control": "max-age=30", "Vary": "Accept-Encoding", "Date": date}, 28 * time.Second, false},
		// The API's clock, not ours: Expires minus the API's Date is the
		// lifetime, however far the two clocks are apart.
		{"a Date ahead of our clock: Expires read on the API's clock", map[string]string{"Expires": received.Add(11 * time.Minute).Format(http.TimeFormat), "Date": received.Add(10 * time.Minute).Format(http.TimeFormat)}, time.Minute - 2*time.Second, false},
		{"a Date behind our clock: Expires read on the API's clock", map[string]string{"Expires": received.Add(-9 * time.Minute).Format(http.TimeFormat), "Date": received.Add(-10 * time.Minute).Format(http.TimeFormat)}, 0, false},
		{"capped at MaxFreshness", map[string]string{"Cache-Control": "max-age=31536000", "Date": date}, MaxFreshness - 2*time.Second, false},
		// RFC 9111 1.2.2: a delta-seconds past 2^31 is capped, not invalid.
		{"a max-age past 2^31 is capped", map[string]string{"Cache-Control": "max-age=99999999999999999999", "Date": date}, MaxFreshness - 2*time.Second, false},
		{"an Age past 2^31 is capped, and stale", map[string]string{"Cache-Control": "max-age=30", "Age": "99999999999999999999", "Date": date}, 0, false},
		{"private: ours to store", map[string]string{"Cache-Control": "private, max-age=30", "Date": date}, 28 * time.Second, false},
	} {
		h := http.Header{}
		for k, v := range tc.headers {
			h.Set(k, v)
		}
		f := freshness(h, requested, received)
		if f.NoStore != tc.noStore {
			t.Errorf("%s: NoStore %v, want %v", tc.name, f.NoStore, tc.noStore)
		}
		var got time.Duration
		if !f.Until.IsZero() {
			got = f.Until.Sub(received)
		}
		if max(got, 0) != tc.fresh {
			t.Errorf("%s: fresh for %s, want %s", tc.name, got, tc.fresh)
		}
		if f.Fresh(received) != (tc.fresh > 0) || f.Fresh(received.Add(tc.fresh)) {
			t.Errorf("%s: Fresh at receipt %v, at its end %v", tc.name, f.Fresh(received), f.Fresh(received.Add(tc.fresh)))
		}
	}
}

// TestValidators: what is kept to send back, and what is not an
// entity-tag or a date.
func TestValidators(t *testing.T) {
	for _, tc := range []struct{ etag, lastModified, wantETag, wantLM string }{
		{`"abc"`, "Tue, 24 Nov 2026 12:00:00 GMT", `"abc"`, "Tue, 24 Nov 2026 12:00:00 GMT"},
		{`W/"abc"`, "", `W/"abc"`, ""},
		{`abc`, "yesterday", "", ""}, // unquoted; not a date
		{`"` + strings.Repeat("a", 254) + `"`, "", `"` + strings.Repeat("a", 254) + `"`, ""}, // 256 bytes: kept
		{`"` + strings.Repeat("a", 255) + `"`, "", "", ""},                                   // 257: not an ETag we send back
	} {
		h := http.Header{}
		h.Set("ETag", tc.etag)
		h.Set("Last-Modified", tc.lastModified)
		v := validators(h)
		if v.ETag != tc.wantETag || v.LastModified != tc.wantLM {
			t.Errorf("ETag %.20q, Last-Modified %q: kept %+v", tc.etag, tc.lastModified, v)
		}
	}
}

// TestRateLimit: each convention, and a newer one winning over an older.
func TestRateLimit(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name             string
		headers          map[string]string
		limit, remaining float64
		reset            time.Time
		window           time.Duration
	}{
		{"none", nil, -1, -1, time.Time{}, 0},
		{"X- with a Unix reset", map[string]string{"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": "4990", "X-RateLimit-Reset": "1795615200"}, 5000, 4990, time.Unix(1795615200, 0), 0},
		{"X- with seconds to reset", map[string]string{"X-RateLimit-Limit": "100", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "60"}, 100, 0, now.Add(time.Minute), 0},
		{"draft RateLimit-*", map[string]string{"RateLimit-Limit": "100, 100;w=60", "RateLimit-Remaining": "42", "RateLimit-Reset": "30"}, 100, 42, now.Add(30 * time.Second), time.Minute},
		{"draft-07 RateLimit", map[string]string{"RateLimit": "limit=100, remaining=50, reset=30"}, 100, 50, now.Add(30 * time.Second), 0},
		{"IETF RateLimit and RateLimit-Policy", map[string]string{"RateLimit-Policy": `"hourly";q=1000;w=3600`, "RateLimit": `"hourly";r=998;t=1800`}, 1000, 998, now.Add(30 * time.Minute), time.Hour},
		{"IETF wins over X-", map[string]string{"X-RateLimit-Limit": "1", "X-RateLimit-Remaining": "1", "RateLimit-Policy": `"d";q=1000;w=3600`, "RateLimit": `"d";r=998;t=1800`}, 1000, 998, now.Add(30 * time.Minute), time.Hour},
		{"garbage is absent", map[string]string{"X-RateLimit-Limit": "lots", "X-RateLimit-Remaining": "-3", "X-RateLimit-Reset": "1e9"}, -1, -1, time.Time{}, 0},
		// Values that would overflow a time.Duration, or name no date.
		{"a reset too far is absent", map[string]string{"RateLimit-Limit": "5;w=9007199254740992", "RateLimit-Reset": "9007199254740992"}, 5, -1, time.Time{}, 0},
		{"a Unix reset past the year 9999 is absent", map[string]string{"X-RateLimit-Limit": "5", "X-RateLimit-Reset": "999999999999"}, 5, -1, time.Time{}, 0},
		{"a window of a year and a day is absent", map[string]string{"RateLimit-Policy": `"p";q=5;w=31708800`}, 5, -1, time.Time{}, 0},
		{"a window of 366 days is one", map[string]string{"RateLimit-Policy": `"p";q=5;w=31622400`}, 5, -1, time.Time{}, 366 * 24 * time.Hour},
		{"a window of 0 is absent", map[string]string{"RateLimit-Limit": "5;w=0", "RateLimit-Remaining": "0"}, 5, 0, time.Time{}, 0},
		{"the largest exact count", map[string]string{"X-RateLimit-Limit": "9007199254740992", "X-RateLimit-Remaining": "9007199254740993"}, 9007199254740992, -1, time.Time{}, 0},
		// One convention, whole: never a limit from one and what is left
		// from another.
		{"drafts' RateLimit-* beside X-: the drafts', whole", map[string]string{"X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "3", "X-RateLimit-Reset": "1795615200", "RateLimit-Remaining": "500"}, -1, 500, time.Time{}, 0},
		{"X- limit beside the drafts' remaining: not 500 of 10", map[string]string{"X-RateLimit-Limit": "10", "RateLimit-Remaining": "500", "RateLimit-Reset": "30"}, -1, 500, now.Add(30 * time.Second), 0},
		{"draft-07 beside the drafts' fields", map[string]string{"RateLimit": "limit=100, remaining=50, reset=30", "RateLimit-Limit": "7", "RateLimit-Remaining": "6", "RateLimit-Reset": "5"}, 100, 50, now.Add(30 * time.Second), 0},
		{"draft-07 with its policy's window", map[string]string{"RateLimit": "limit=100, remaining=50, reset=30", "RateLimit-Policy": "100;w=60"}, 100, 50, now.Add(30 * time.Second), time.Minute},
		{"IETF beside draft-07's and X-", map[string]string{"RateLimit": `"d";r=998;t=1800`, "RateLimit-Policy": `"d";q=1000;w=3600`, "RateLimit-Remaining": "1", "X-RateLimit-Reset": "1795615200"}, 1000, 998, now.Add(30 * time.Minute), time.Hour},
		{"IETF policy of the same name, not the first", map[string]string{"RateLimit": `"daily";r=5;t=60`, "RateLimit-Policy": `"burst";q=10;w=1, "daily";q=1000;w=86400`}, 1000, 5, now.Add(time.Minute), 24 * time.Hour},
		// A field sent as several lines is one list (RFC 9110 5.3).
		{"IETF policies on two lines", map[string]string{"RateLimit": `"daily";r=5;t=60`, "RateLimit-Policy": "\"burst\";q=10;w=1\n\"daily\";q=1000;w=86400"}, 1000, 5, now.Add(time.Minute), 24 * time.Hour},
		{"IETF policy alone", map[string]string{"RateLimit-Policy": `"p";q=50;w=60`, "X-RateLimit-Remaining": "49"}, 50, -1, time.Time{}, time.Minute},
		{"unusable newer fields do not hide older ones", map[string]string{"RateLimit-Limit": "lots", "X-RateLimit-Limit": "10", "X-RateLimit-Remaining": "3"}, 10, 3, time.Time{}, 0},
		{"a Unix reset in the year 9999", map[string]string{"X-RateLimit-Limit": "5", "X-RateLimit-Reset": "253402300799"}, 5, -1, time.Unix(253402300799, 0), 0},
	} {
		h := http.Header{}
		for k, v := range tc.headers {
			for _, line := range strings.Split(v, "\n") { // each a header line
				h.Add(k, line)
			}
		}
		got := rateLimit(h, now)
		if got.Limit != tc.limit || got.Remaining != tc.remaining || !got.Reset.Equal(tc.reset) || got.Window != tc.window {
			t.Errorf("%s: %+v, want limit %v remaining %v reset %v window %v", tc.name, got, tc.limit, tc.remaining, tc.reset, tc.window)
		}
	}
}
