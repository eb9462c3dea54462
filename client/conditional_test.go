// SPDX-License-Identifier: Apache-2.0

package client_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// TestConditionalGet: validators go out as If-None-Match and
// If-Modified-Since (none when empty); a 304 to them is NotModified, with
// no body read and the validators and freshness it renews; a 304 to a
// request without validators is a status error; a 200's validators,
// freshness and quota come back in Meta and the observer.
func TestConditionalGet(t *testing.T) {
	const lastModified = "Tue, 24 Nov 2026 12:00:00 GMT"
	var mu sync.Mutex
	var seen []http.Header
	var quota []client.RateLimit
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", lastModified)
		w.Header().Set("X-RateLimit-Remaining", "7")
		if r.Header.Get("If-None-Match") == `"v1"` || r.Header.Get("X-Test-Bare-304") != "" {
			if r.Header.Get("X-Test-Bare-304") == "" {
				w.Header().Set("Cache-Control", "max-age=60")
			}
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Cache-Control", "max-age=30")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"as_of": "2026-11-24T12:00:00Z"}`)
	})
	c := newClient(t, srv.URL, func(cfg *client.Config) {
		cfg.Observe = func(r client.Request) {
			mu.Lock()
			quota = append(quota, r.RateLimit)
			mu.Unlock()
		}
	})
	read := 0
	get := func(v client.Validators) (client.Meta, error) {
		return c.Get(context.Background(), "summaries", client.DocumentLimit, v, func(r io.Reader) error {
			read++
			_, err := io.Copy(io.Discard, r)
			return err
		})
	}

	meta, err := get(client.Validators{})
	if err != nil || meta.NotModified || read != 1 {
		t.Fatalf("a plain GET: meta %+v, err %v, bodies read %d", meta, err, read)
	}
	if meta.Validators.ETag != `"v1"` || meta.Validators.LastModified != lastModified || !meta.Freshness.Fresh(time.Now().Add(25*time.Second)) || meta.Freshness.Fresh(time.Now().Add(31*time.Second)) {
		t.Errorf("meta %+v: want the ETag, Last-Modified and 30 s of freshness", meta)
	}
	if h := seen[0]; h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != "" || len(h.Values("If-None-Match")) != 0 {
		t.Errorf("validators sent without any: %v", h)
	}
	if len(quota) != 1 || quota[0].Remaining != 7 {
		t.Errorf("the observer saw the quota %+v, want remaining 7", quota)
	}

	meta, err = get(meta.Validators)
	if err != nil || !meta.NotModified || read != 1 {
		t.Fatalf("a conditional GET answered 304: meta %+v, err %v, bodies read %d (want none)", meta, err, read)
	}
	if h := seen[1]; h.Get("If-None-Match") != `"v1"` || h.Get("If-Modified-Since") != lastModified {
		t.Errorf("sent If-None-Match %q, If-Modified-Since %q", h.Get("If-None-Match"), h.Get("If-Modified-Since"))
	}
	if !meta.Freshness.Fresh(time.Now().Add(55*time.Second)) || meta.Validators.ETag != `"v1"` {
		t.Errorf("after a 304 with max-age=60: meta %+v", meta)
	}

	// Only Last-Modified: sent alone.
	if _, err = get(client.Validators{LastModified: lastModified}); err != nil {
		t.Fatal(err)
	}
	if h := seen[2]; h.Get("If-None-Match") != "" || h.Get("If-Modified-Since") != lastModified {
		t.Errorf("sent If-None-Match %q, If-Modified-Since %q", h.Get("If-None-Match"), h.Get("If-Modified-Since"))
	}
	// Only an ETag: sent alone.
	if _, err = get(client.Validators{ETag: `"v0"`}); err != nil {
		t.Fatal(err)
	}
	if h := seen[3]; h.Get("If-None-Match") != `"v0"` || h.Get("If-Modified-Since") != "" {
		t.Errorf("sent If-None-Match %q, If-Modified-Since %q", h.Get("If-None-Match"), h.Get("If-Modified-Since"))
	}
}

// TestA304WithoutValidatorsIsAnError: a 304 the client did not ask for has
// no stored answer behind it.
func TestA304WithoutValidatorsIsAnError(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) })
	_, err := newClient(t, srv.URL).Get(context.Background(), "summaries", client.DocumentLimit, client.Validators{}, func(io.Reader) error { return nil })
	var se *client.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotModified {
		t.Errorf("err %v, want a StatusError 304", err)
	}
}

// TestA304KeepsTheStoredCachingHeaders: a 304 without Cache-Control is
// fresh as long as the stored answer's Cache-Control says.
func TestA304KeepsTheStoredCachingHeaders(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		// A 304 may name the answer anew (a weak ETag for a strong one,
		// say); that is what to send next time.
		w.Header().Set("ETag", `W/"v1"`)
		w.WriteHeader(http.StatusNotModified)
	})
	c := newClient(t, srv.URL)
	for _, tc := range []struct {
		stored client.Validators
		fresh  time.Duration
	}{
		{client.Validators{ETag: `"v1"`, CacheControl: []string{"max-age=40"}}, 40 * time.Second},
		{client.Validators{ETag: `"v1"`, Expires: time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)}, time.Hour},
		{client.Validators{ETag: `"v1"`}, 0},
	} {
		meta, err := c.Get(context.Background(), "summaries", client.DocumentLimit, tc.stored, func(io.Reader) error { return nil })
		if err != nil || !meta.NotModified {
			t.Fatalf("meta %+v, err %v", meta, err)
		}
		if meta.Validators.ETag != `W/"v1"` {
			t.Errorf("after a 304 naming W/\"v1\": ETag %q", meta.Validators.ETag)
		}
		until := time.Until(meta.Freshness.Until)
		if tc.fresh == 0 && meta.Freshness.Fresh(time.Now()) || tc.fresh > 0 && (until < tc.fresh-5*time.Second || until > tc.fresh) {
			t.Errorf("stored %+v: fresh for %s after a bare 304, want %s", tc.stored, until.Round(time.Second), tc.fresh)
		}
	}
}

// pager records what a walk asked and was told.
type pager struct {
	validators map[int]client.Validators
	answered   []string
}

func (p *pager) Validators(page int, cursor string) client.Validators { return p.validators[page] }

func (p *pager) Read(body io.Reader, page int) (string, error) {
	b, _ := io.ReadAll(body)
	if strings.Contains(string(b), `"next_cursor": "p2"`) {
		return "p2", nil
	}
	return "", nil
}

func (p *pager) Answered(page int, cursor string, meta client.Meta, next string) (string, error) {
	p.answered = append(p.answered, strings.Join([]string{cursor, map[bool]string{true: "304", false: "200"}[meta.NotModified], next, meta.Validators.ETag}, " "))
	if meta.NotModified {
		return "p2", nil // what the stored page 1 led to
	}
	return next, nil
}

// TestWalkAsksThePager: each page's validators come from the pager, and
// every answer, 304 or read, goes back to it with its cursor.
func TestWalkAsksThePager(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		page := r.URL.Query().Get("cursor")
		w.Header().Set("ETag", `"`+page+`"`)
		if r.Header.Get("If-None-Match") == `""` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if page == "" {
			_, _ = io.WriteString(w, `{"events": [], "next_cursor": "p2"}`)
			return
		}
		_, _ = io.WriteString(w, `{"events": [], "next_cursor": null}`)
	})
	p := &pager{validators: map[int]client.Validators{1: {ETag: `""`}}}
	n, err := newClient(t, srv.URL).Walk(context.Background(), "conflict", client.PageLimit, p)
	if err != nil || n != 2 {
		t.Fatalf("walked %d pages, err %v", n, err)
	}
	if got := strings.Join(p.answered, " | "); got != ` 304  "" | p2 200  "p2"` { // a 304 has no body, so no next_cursor of its own
		t.Errorf("answers %q", got)
	}
}

// TestA304WithoutValidatorsKeepsOurs: a 304 that does not repeat the
// validators leaves the ones sent in force.
func TestA304WithoutValidatorsKeepsOurs(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNotModified) })
	sent := client.Validators{ETag: `"v1"`, LastModified: "Tue, 24 Nov 2026 12:00:00 GMT"}
	meta, err := newClient(t, srv.URL).Get(context.Background(), "summaries", client.DocumentLimit, sent, func(io.Reader) error { return nil })
	if err != nil || meta.Validators.ETag != sent.ETag || meta.Validators.LastModified != sent.LastModified {
		t.Errorf("meta %+v, err %v: want the validators sent", meta, err)
	}
}
