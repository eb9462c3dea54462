// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// What the simulator says about caching and quota, when Config asks it to:
// validators (an ETag that is a hash of the body, a Last-Modified that is
// the body's as_of) with 304 Not Modified for a request that still holds
// them, a Cache-Control header, and a quota of requests per hour announced
// in both the IETF RateLimit fields and the de facto X-RateLimit-* ones.

// What --demo announces; the simulator command its Cache-Control too.
const (
	DemoCacheControl = "max-age=30"
	DemoRateLimit    = 10000 // requests per hour
	// A quota that runs out in the first minutes, whatever the scrape
	// interval: one round of every endpoint (ten requests, three of them
	// the pages of the events); the next is answered 429.
	DemoScarceRateLimit = 10
)

// Demo is the service --demo scrapes: an account per key, each with a
// world of its own (seeds 1, 2, ...), answering as a good API would, with
// validators, Cache-Control and a quota; but the last one's quota runs out
// in its first minutes, so that the dashboards show a red row and
// GlobalStabilityAPIQuotaLow fires.
func Demo(keys ...string) http.Handler {
	var accounts []*Simulator
	for i, key := range keys {
		c := Config{Key: key, Seed: uint64(i + 1), Validators: true, CacheControl: DemoCacheControl, RateLimit: DemoRateLimit}
		if i == len(keys)-1 {
			c.RateLimit = DemoScarceRateLimit
		}
		accounts = append(accounts, New(c))
	}
	return Accounts(accounts...)
}

// caching writes the caching and quota headers of a 200 answer with body,
// and reports whether the request's validators still hold: the answer is
// then 304 Not Modified, already written.
func (s *Simulator) caching(w http.ResponseWriter, r *http.Request, body []byte) (notModified bool) {
	h := w.Header()
	if s.cfg.CacheControl != "" {
		h.Set("Cache-Control", s.cfg.CacheControl)
	}
	if !s.cfg.Validators {
		return false
	}
	sum := fnv.New64a()
	_, _ = sum.Write(body)
	etag := fmt.Sprintf(`"%016x"`, sum.Sum64())
	h.Set("ETag", etag)
	modified, hasModified := asOf(body)
	if hasModified {
		h.Set("Last-Modified", modified.UTC().Format(http.TimeFormat))
	}
	// RFC 9110 section 13.2.2: If-None-Match, when sent, decides alone.
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		notModified = etagMatches(inm, etag)
	} else if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && hasModified {
		notModified = !modified.Truncate(time.Second).After(ims)
	}
	if notModified {
		h.Del("Content-Type")
		w.WriteHeader(http.StatusNotModified)
	}
	return notModified
}

// etagMatches compares weakly, as If-None-Match does.
func etagMatches(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == "*" || t == strings.TrimPrefix(etag, "W/") {
			return true
		}
	}
	return false
}

// asOf reads the as_of of a document, if it has one.
func asOf(body []byte) (time.Time, bool) {
	var doc struct {
		AsOf string `json:"as_of"`
	}
	if json.Unmarshal(body, &doc) != nil || doc.AsOf == "" {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, doc.AsOf)
	return t, err == nil
}

// quota counts a request against Config.RateLimit (requests per hour) and
// announces what is left; past the quota it answers 429 with Retry-After
// and reports false.
func (s *Simulator) quota(w http.ResponseWriter, now time.Time) bool {
	if s.cfg.RateLimit <= 0 {
		return true
	}
	window := now.Truncate(time.Hour)
	s.mu.Lock()
	if !window.Equal(s.rateWindow) {
		s.rateWindow, s.rateUsed = window, 0
	}
	s.rateUsed++
	used := s.rateUsed
	s.mu.Unlock()
	remaining := max(s.cfg.RateLimit-used, 0)
	reset := window.Add(time.Hour)
	resetIn := int(reset.Sub(now).Seconds() + 0.999)
	h := w.Header()
	h.Set("RateLimit-Policy", fmt.Sprintf(`"hourly";q=%d;w=3600`, s.cfg.RateLimit))
	h.Set("RateLimit", fmt.Sprintf(`"hourly";r=%d;t=%d`, remaining, resetIn))
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.cfg.RateLimit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset.Unix(), 10))
	if used > s.cfg.RateLimit {
		h.Set("Retry-After", strconv.Itoa(resetIn))
		writeError(w, http.StatusTooManyRequests, "rate_limited", "hourly quota used up")
		return false
	}
	return true
}
