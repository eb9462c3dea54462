// SPDX-License-Identifier: Apache-2.0

package client_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/global-stability/global_stability_exporter/client"
)

// TestErrorTexts: what the log shows for each kind of failure.
func TestErrorTexts(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&client.StatusError{Endpoint: "conflict", StatusCode: 503}, "conflict: HTTP 503 Service Unavailable"},
		{&client.StatusError{Endpoint: "conflict", StatusCode: 503, RetryAfter: 30e9}, "conflict: HTTP 503 Service Unavailable (retry after 30s)"},
		{&client.StatusError{Endpoint: "conflict", StatusCode: 404, Excerpt: "no such page"}, "conflict: HTTP 404 Not Found: no such page"},
		{&client.DecodeError{Endpoint: "summaries", Err: errors.New("unexpected end")}, "summaries: decode: unexpected end"},
		{&client.DecodeError{Endpoint: "summaries", Field: "as_of", Err: errors.New("not a string")}, "summaries: decode: field as_of: not a string"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
	for code, class := range map[int]error{500: client.ErrServer, 599: client.ErrServer, 401: client.ErrAuth, 403: client.ErrAuth, 404: client.ErrNotFound, 429: client.ErrRateLimited} {
		if err := (&client.StatusError{StatusCode: code}); !errors.Is(err, class) {
			t.Errorf("HTTP %d is not %v", code, class)
		}
	}
	for _, code := range []int{499, 600, 400} {
		if err := (&client.StatusError{StatusCode: code}); errors.Is(err, client.ErrServer) || errors.Is(err, client.ErrAuth) {
			t.Errorf("HTTP %d is classed as a server or authentication error", code)
		}
	}
}

// TestNoPageSizeWithoutASize: a page size parameter with no size to send
// is not sent (an API might read limit=0 as "nothing").
func TestNoPageSizeWithoutASize(t *testing.T) {
	var queries []string
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		queries = append(queries, r.URL.RawQuery)
		_, _ = w.Write([]byte(`{"events":[],"next_cursor":null}`))
	})
	c := newClient(t, srv.URL, func(cfg *client.Config) { cfg.PageSizeParam, cfg.PageSize = "limit", 0 })
	if _, err := walk(c); err != nil {
		t.Fatal(err)
	}
	if len(queries) != 1 || strings.Contains(queries[0], "limit") {
		t.Errorf("queries %q, want one without limit", queries)
	}
}

// TestRedirectCount: up to maxRedirects (5) same-origin redirects are
// followed, as docs/api.md says; one more fails the request.
func TestRedirectCount(t *testing.T) {
	for _, tc := range []struct {
		redirects int
		ok        bool
	}{{1, true}, {5, true}, {6, false}} {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			n := len(r.URL.Query().Get("hop"))
			if n < tc.redirects {
				http.Redirect(w, r, r.URL.Path+"?hop="+strings.Repeat("x", n+1), http.StatusFound)
				return
			}
			_, _ = w.Write([]byte(okOverview))
		})
		_, err := overview(newClient(t, srv.URL))
		if (err == nil) != tc.ok || (err != nil && !errors.Is(err, client.ErrRedirectRefused)) {
			t.Errorf("%d redirects: err = %v, want success %v", tc.redirects, err, tc.ok)
		}
	}
}

// TestBodyLimitIsExact: a body of exactly the limit is read; one byte more
// fails the endpoint as too large.
func TestBodyLimitIsExact(t *testing.T) {
	t.Run("with Content-Length", func(t *testing.T) {
		bodyLimitCases(t, serve(t, func(w http.ResponseWriter, r *http.Request) { _, _ = w.Write([]byte(okOverview)) }))
	})
	// Chunked, the end of the body is a read of its own, after the last
	// byte: the limit is reached with nothing more to read.
	t.Run("chunked", func(t *testing.T) {
		bodyLimitCases(t, serve(t, func(w http.ResponseWriter, r *http.Request) {
			_, _ = w.Write([]byte(okOverview))
			w.(http.Flusher).Flush()
			time.Sleep(50 * time.Millisecond) // the body's end comes later
		}))
	})
}

func bodyLimitCases(t *testing.T, srv *httptest.Server) {
	t.Helper()
	for _, tc := range []struct {
		limit int64
		ok    bool
	}{{int64(len(okOverview)), true}, {int64(len(okOverview)) + 1, true}, {int64(len(okOverview)) - 1, false}} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		doc, err := getJSON(ctx, newClient(t, srv.URL, func(c *client.Config) { c.MaxDocumentBytes = tc.limit }), "global-stability")
		cancel()
		if tc.ok && (err != nil || doc["score"] == nil) {
			t.Errorf("limit %d for %d bytes: %v", tc.limit, len(okOverview), err)
		}
		if !tc.ok && !errors.Is(err, client.ErrBodyTooLarge) {
			t.Errorf("limit %d for %d bytes: err = %v, want ErrBodyTooLarge", tc.limit, len(okOverview), err)
		}
	}
}

// TestExcerptsAreCutShort: an error quotes at most 64 bytes of a
// Content-Type and 80 of a body that is not JSON, whatever their length,
// and never half of a character.
func TestExcerptsAreCutShort(t *testing.T) {
	long := "x" + strings.Repeat("é", 200) // a cut at an odd offset falls inside an é; within what the door reads
	for _, tc := range []struct {
		contentType, body, quoted string
		max                       int
	}{
		{"text/html; x=" + long, okOverview, "Content-Type ", 64},
		{"application/json", long, "(body starts ", 80},
	} {
		srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", tc.contentType)
			_, _ = w.Write([]byte(tc.body))
		})
		_, err := overview(newClient(t, srv.URL))
		if err == nil {
			t.Fatalf("%s: no error", tc.quoted)
		}
		_, rest, _ := strings.Cut(err.Error(), tc.quoted)
		quoted, unquoteErr := strconv.QuotedPrefix(rest)
		excerpt, _ := strconv.Unquote(quoted)
		if unquoteErr != nil || !strings.HasSuffix(excerpt, "…") || len(excerpt) > tc.max+len("…") || !utf8.ValidString(excerpt) {
			t.Errorf("%s: want at most %d bytes and a …, got %q in %v", tc.quoted, tc.max, excerpt, err)
		}
	}
}

// TestABodyKnownTooLargeIsNotRead: a Content-Length over the limit fails
// the request before its body is read (only the drain before closing
// reads a little of it), with the same error as a body cut at the limit.
func TestABodyKnownTooLargeIsNotRead(t *testing.T) {
	const limit = 1 << 20
	body := `{"padding":"` + strings.Repeat("x", limit) + `"}`
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write([]byte(body))
	})
	var read int64
	cl := newClient(t, srv.URL, func(c *client.Config) {
		c.MaxDocumentBytes = limit
		c.Observe = func(r client.Request) { read += r.Bytes }
	})
	_, err := getJSON(context.Background(), cl, "global-stability")
	if !errors.Is(err, client.ErrBodyTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("more than %d bytes", limit)) {
		t.Fatalf("err = %v, want ErrBodyTooLarge, more than %d bytes", err, limit)
	}
	if read > 64<<10 {
		t.Errorf("%d bytes of a body known to be too large were read, want at most the 64 KiB drained before closing", read)
	}
}
