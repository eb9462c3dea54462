// SPDX-License-Identifier: Apache-2.0

package collector

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/go-kit/log"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// TestFailureLogOneLinePerScrapeThenQuiet: an outage logs one line per
// scrape naming every failed endpoint, the same failures again only every
// failureRepeat (with a count of the scrapes left out), other failures at
// once, and the recovery once.
func TestFailureLogOneLinePerScrapeThenQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		l := &failureLog{logger: log.NewLogfmtLogger(&buf)}
		lines := func() []string {
			defer buf.Reset()
			if buf.Len() == 0 {
				return nil
			}
			return strings.Split(strings.TrimSpace(buf.String()), "\n")
		}
		outage := func(retryAfter time.Duration) []result {
			return []result{
				failed("conflict", &client.StatusError{Endpoint: "conflict", StatusCode: 503, RetryAfter: retryAfter}),
				failed("briefings", fmt.Errorf("not requested: the API asked to wait %s more (Retry-After)", retryAfter)),
			}
		}

		l.report(outage(60 * time.Second))
		got := lines()
		if len(got) != 1 || strings.Contains(got[0], "hint=") || strings.Contains(got[0], "not_logged") {
			t.Errorf("a 503 needs no configuration hint, and nothing was left out yet: %q", got)
		}
		if len(got) != 1 || !strings.Contains(got[0], `failed_endpoints=conflict,briefings `) ||
			!strings.Contains(got[0], "conflict: HTTP 503") || !strings.Contains(got[0], "briefings: not requested") {
			t.Fatalf("first failure: want one line naming both endpoints and why, got %q", got)
		}
		// Every 15 s for just under failureRepeat: the countdown changes, the
		// failures do not.
		for i := 1; i < int(failureRepeat/(15*time.Second)); i++ {
			time.Sleep(15 * time.Second)
			l.report(outage(60*time.Second - time.Duration(i)*time.Second))
		}
		if got := lines(); got != nil {
			t.Errorf("the same failures within %s were logged again: %q", failureRepeat, got)
		}
		time.Sleep(15 * time.Second)
		l.report(outage(time.Second))
		if got := lines(); len(got) != 1 || !strings.Contains(got[0], "same_failures_not_logged=19") {
			t.Errorf("after %s: want the failures again with the 19 scrapes left out, got %q", failureRepeat, got)
		}
		// Another failure is news at once.
		time.Sleep(15 * time.Second)
		l.report([]result{failed("conflict", &client.StatusError{Endpoint: "conflict", StatusCode: 500})})
		if got := lines(); len(got) != 1 || !strings.Contains(got[0], "HTTP 500") || strings.Contains(got[0], "not_logged") {
			t.Errorf("a different failure: want it logged at once, got %q", got)
		}
		// Recovery: one line, then nothing.
		l.report(nil)
		l.report(nil)
		if got := lines(); len(got) != 1 || !strings.Contains(got[0], "every endpoint answers again") {
			t.Errorf("recovery: want one line, got %q", got)
		}
		// And a failure after recovery is news again, even if it is the old one.
		l.report([]result{failed("conflict", &client.StatusError{Endpoint: "conflict", StatusCode: 500})})
		if got := lines(); len(got) != 1 {
			t.Errorf("the old failure after a recovery: want it logged, got %q", got)
		}
		// Scraped less often than failureRepeat: each scrape's line, with
		// nothing said about scrapes left out, since none were.
		time.Sleep(failureRepeat + time.Second)
		l.report([]result{failed("conflict", &client.StatusError{Endpoint: "conflict", StatusCode: 500})})
		if got := lines(); len(got) != 1 || strings.Contains(got[0], "not_logged") {
			t.Errorf("a slow scrape's repeat: want one line without a count, got %q", got)
		}
		// A refused key: the line carries the hint.
		l.report([]result{failed("summaries", &client.StatusError{Endpoint: "summaries", StatusCode: 401})})
		if got := lines(); len(got) != 1 || !strings.Contains(got[0], "hint=") {
			t.Errorf("a 401: want the hint in the line, got %q", got)
		}
	})
}

func TestFailureHints(t *testing.T) {
	auth := &client.StatusError{Endpoint: "summaries", StatusCode: 401}
	notFound := &client.StatusError{Endpoint: "summaries", StatusCode: 404}
	for _, tc := range []struct {
		name     string
		failures []result
		want     string // substring of the hint; "" for none
	}{
		{"401", []result{failed("summaries", auth)}, "--api.key-file"},
		{"403 among others", []result{failed("conflict", errors.New("timeout")), failed("summaries", &client.StatusError{Endpoint: "summaries", StatusCode: 403})}, "key"},
		{"404 everywhere", []result{failed("summaries", notFound), failed("conflict", &client.StatusError{Endpoint: "conflict", StatusCode: 404})}, "--api.url"},
		{"404 on one of two", []result{failed("summaries", notFound), failed("conflict", errors.New("timeout"))}, ""},
		{"timeout", []result{failed("conflict", errors.New("timeout"))}, ""},
		{"connection refused everywhere", []result{
			failed("summaries", &client.TransportError{Endpoint: "summaries", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}),
			failed("conflict", &client.TransportError{Endpoint: "conflict", Err: &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: "api.invalid", IsNotFound: true}}}),
		}, "host and port of --api.url"},
		{"connection refused on one of two", []result{
			failed("summaries", &client.TransportError{Endpoint: "summaries", Err: &net.OpError{Op: "dial", Net: "tcp", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}}),
			failed("conflict", errors.New("timeout")),
		}, ""},
		{"document over its limit", []result{failed("summaries", &client.DecodeError{Endpoint: "summaries", Err: client.ErrBodyTooLarge})}, "--api.max-document-bytes"},
		{"page over its limit", []result{failed("briefings", &client.DecodeError{Endpoint: "briefings page 2", Err: client.ErrBodyTooLarge})}, "--api.max-response-bytes"},
		{"redirect refused", []result{failed("summaries", &client.TransportError{Endpoint: "summaries", Err: client.ErrRedirectRefused})}, "redirected"},
	} {
		hint := failureHint(tc.failures)
		if (tc.want == "") != (hint == "") || !strings.Contains(hint, tc.want) {
			t.Errorf("%s: hint %q, want one with %q", tc.name, hint, tc.want)
		}
	}
}

// TestOneClausePerCause: every endpoint refused with the same 401 body
// makes one clause naming them all, not a copy of the body each; distinct
// causes keep a clause each, in order.
func TestOneClausePerCause(t *testing.T) {
	body := strings.Repeat("invalid or revoked API key; see https://docs.example.com/auth ", 3)
	var fs []result
	for _, e := range endpoint.All() {
		where := e.Label
		if e.Paged {
			where += " page 1"
		}
		fs = append(fs, failed(e.Label, &client.StatusError{Endpoint: where, StatusCode: 401, Excerpt: body}))
	}
	fs = append(fs[:2], append([]result{failed("briefings", errors.New("briefings: no answer within the scrape deadline"))}, fs[2:]...)...)
	text := errorText(fs)
	if n := strings.Count(text, "invalid or revoked"); n != 3 {
		t.Errorf("the 401 body appears %d/3 times:\n%s", n/3, text)
	}
	if !strings.HasPrefix(text, "global-stability, global-stability/pillar/conflict, global-stability/pillar/cyber") ||
		!strings.Contains(text, "conflict page 1") || !strings.Contains(text, "; briefings: no answer") {
		t.Errorf("want the 401 clause naming every endpoint, then the deadline clause:\n%s", text)
	}
}

// TestTLSHintsFromRealErrors: the errors a real client gets from a TLS
// server whose certificate nobody trusts, and from a plain-HTTP server
// asked for https://, each get the hint that fixes them.
func TestTLSHintsFromRealErrors(t *testing.T) {
	tlsSrv := httptest.NewTLSServer(http.NotFoundHandler())
	defer tlsSrv.Close()
	tlsSrv.Config.ErrorLog = stdlog.New(io.Discard, "", 0)
	plain := httptest.NewServer(http.NotFoundHandler())
	defer plain.Close()
	for _, tc := range []struct {
		name, url, want string
	}{
		{"an unknown authority", tlsSrv.URL, "--api.tls.ca-file"},
		{"https:// to plain HTTP", strings.Replace(plain.URL, "http://", "https://", 1), "answered in plain HTTP"},
	} {
		cl, err := client.New(client.Config{BaseURL: tc.url, APIKey: client.StaticKey("test-key-0123456789")})
		if err != nil {
			t.Fatal(err)
		}
		_, err = cl.Get(context.Background(), "summaries", client.DocumentLimit, client.Validators{}, func(io.Reader) error { return nil })
		if err == nil {
			t.Fatalf("%s: no error", tc.name)
		}
		if hint := failureHint([]result{failed("summaries", err)}); !strings.Contains(hint, tc.want) {
			t.Errorf("%s: error %v, hint %q, want one with %q", tc.name, err, hint, tc.want)
		}
	}
}

// TestOneCauseIsNotNamedTwice: one cause of every failure (a refused key)
// is said once, without the endpoints the line's failed_endpoints names.
func TestOneCauseIsNotNamedTwice(t *testing.T) {
	var fs []result
	for _, e := range []string{"global-stability", "conflict", "summaries"} {
		where := e
		if e == "conflict" {
			where += " page 1"
		}
		fs = append(fs, failed(e, &client.StatusError{Endpoint: where, StatusCode: 401, Excerpt: `{"error":"invalid key"}`}))
	}
	if text := errorText(fs); text != `HTTP 401 Unauthorized: {"error":"invalid key"}` {
		t.Errorf("errorText = %q, want only the cause", text)
	}
	fs[1].err = &client.StatusError{Endpoint: "conflict page 3", StatusCode: 401, Excerpt: `{"error":"invalid key"}`}
	if text := errorText(fs); !strings.Contains(text, "conflict page 3") {
		t.Errorf("errorText = %q, want the page after the first named", text)
	}
}

// failed is the result of the endpoint labelled label, as endpoint.All
// describes it (a page's body limit for a paged one), failing with err.
func failed(label string, err error) result {
	i := slices.IndexFunc(endpoint.All(), func(e *endpoint.Endpoint) bool { return e.Label == label })
	return result{endpoint: endpoint.All()[i], err: err}
}
