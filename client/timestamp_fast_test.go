package client

import (
	"fmt"
	"testing"
)

// TestFastTimestampPathTakesTheUsualForms: the event decoder's arithmetic
// parser must take every usual form itself (falling back to time.Parse
// costs allocations on every event) and agree with ParseTimestamp to the
// nanosecond; what is not a valid instant it must leave to ParseTimestamp.
// A fallback hides a fast path that gives up too often, so this test asks
// for ok explicitly.
func TestFastTimestampPathTakesTheUsualForms(t *testing.T) {
	years := []int{0, 1, 3, 4, 99, 100, 399, 400, 401, 1599, 1600, 1900, 1969, 1970, 1971, 2000, 2024, 2026, 2100, 2400, 9999}
	days := map[int][]int{1: {1, 31}, 2: {1, 28}, 3: {1, 31}, 4: {30}, 5: {31}, 6: {30}, 7: {31}, 8: {31}, 9: {30}, 10: {31}, 11: {30}, 12: {1, 31}}
	clocks := []string{"00:00:00", "23:59:59", "12:34:56.789", "23:59:60", "01:02:03.000000001", "09:08:07.123456789", "10:20:30.5"}
	zones := []string{"Z", "z", "+00:00", "-00:00", "+02:00", "-11:30", "+14:00", "+23:59", "-23:59"}
	seps := []string{"T", "t", " "}
	checked := 0
	for _, y := range years {
		leap := y%4 == 0 && (y%100 != 0 || y%400 == 0)
		for m := 1; m <= 12; m++ {
			ds := days[m]
			if m == 2 && leap {
				ds = append(ds, 29)
			}
			for _, d := range ds {
				for i, clock := range clocks {
					// Every zone and separator, spread over the clocks.
					s := fmt.Sprintf("%04d-%02d-%02d%s%s%s", y, m, d, seps[(i+d)%len(seps)], clock, zones[(i+m+y)%len(zones)])
					want, err := ParseTimestamp(s)
					if err != nil {
						t.Fatalf("ParseTimestamp(%q): %v", s, err)
					}
					got, ok := parseRFC3339Fast([]byte(s))
					if !ok || !got.Equal(want) {
						t.Errorf("parseRFC3339Fast(%q) = %v, %v; want %v, true", s, got, ok, want)
					}
					checked++
				}
			}
		}
	}
	for _, zone := range zones {
		s := "2026-11-22T04:30:00" + zone
		want, _ := ParseTimestamp(s)
		if got, ok := parseRFC3339Fast([]byte(s)); !ok || !got.Equal(want) {
			t.Errorf("parseRFC3339Fast(%q) = %v, %v; want %v", s, got, ok, want)
		}
	}
	// Not valid instants, or not in the fast path's form: it must decline.
	for _, s := range []string{
		"2023-02-29T00:00:00Z", "1900-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2026-04-31T00:00:00Z",
		"2026-00-10T00:00:00Z", "2026-13-10T00:00:00Z", "2026-11-00T00:00:00Z", "2026-11-32T00:00:00Z",
		"2026-11-22T24:00:00Z", "2026-11-22T23:60:00Z", "2026-11-22T23:59:61Z",
		"2026-11-22T23:59:59.Z", "2026-11-22T23:59:59.1234567890Z",
		"2026-11-22T04:30:00+24:00", "2026-11-22T04:30:00+05:60", "2026-11-22T04:30:00+0200",
		"2026-11-22T04:30:00", "2026-11-22T04:30:00.123", "2026-11-22T04:30:00ZZ", "2026-11-22T04:30:00+02:0", "2026-11-22X04:30:00Z",
		"2026/11-22T04:30:00Z", "2026-11/22T04:30:00Z", "2026-11-22T04-30:00Z", "2026-11-22T04:30-00Z",
		"2O26-11-22T04:30:00Z", "2026-11-22T04:30:00*02:00", "2026-11-22T04:30:00+02-00",
	} {
		if got, ok := parseRFC3339Fast([]byte(s)); ok {
			t.Errorf("parseRFC3339Fast(%q) = %v, ok; want it left to ParseTimestamp", s, got)
		}
	}
	t.Logf("%d timestamps agree", checked)
}
