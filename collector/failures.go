// SPDX-License-Identifier: Apache-2.0

package collector

import (
	"crypto/tls"
	"errors"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/global-stability/global_stability_exporter/client"
)

// failureRepeat is how often the same failures are logged again: an outage
// scraped every 15 s would otherwise log thousands of lines a day.
const failureRepeat = 5 * time.Minute

// failureLog logs a scrape's failures as one line; the same again at most
// every failureRepeat, with how many it left out; and the recovery.
type failureLog struct {
	logger     log.Logger
	mu         sync.Mutex
	last       string    // signature of the failures last logged; "" when none
	loggedAt   time.Time // when they were logged
	suppressed int       // scrapes with the same failures since then
}

// report logs one scrape's failed results (none: a whole scrape), and
// returns the endpoints that failed and why, as the log line says.
func (l *failureLog) report(failures []result) (endpoints []string, why string) {
	for _, f := range failures {
		endpoints = append(endpoints, f.endpoint.Label)
	}
	why = errorText(failures) // "" for none
	l.mu.Lock()
	defer l.mu.Unlock()
	sig := signature(failures)
	switch {
	case sig == "" && l.last != "":
		level.Info(l.logger).Log("msg", "every endpoint answers again")
	case sig == "":
	case sig == l.last && time.Since(l.loggedAt) < failureRepeat:
		l.suppressed++
		return endpoints, why
	default:
		kv := []any{"msg", "scrape failed", "failed_endpoints", strings.Join(endpoints, ","), "err", why}
		if hint := failureHint(failures); hint != "" {
			kv = append(kv, "hint", hint)
		}
		if sig == l.last && l.suppressed > 0 {
			kv = append(kv, "same_failures_not_logged", l.suppressed, "since", l.loggedAt.UTC().Format(time.RFC3339))
		}
		level.Error(l.logger).Log(kv...)
	}
	l.last, l.loggedAt, l.suppressed = sig, time.Now(), 0
	return endpoints, why
}

// errorText says each distinct cause once: every endpoint refused with one
// 401 body makes one clause naming them all.
func errorText(failures []result) string {
	var (
		causes []string                // in order of first appearance
		where  = map[string][]string{} // cause → the endpoints (and pages) it hit
		paged  bool                    // a page after the first is named, which failed_endpoints does not say
	)
	for _, f := range failures {
		at, cause := f.endpoint.Label, f.err.Error()
		if head, tail, ok := strings.Cut(cause, ": "); ok && strings.HasPrefix(head, f.endpoint.Label) {
			at, cause = head, tail
		}
		if _, seen := where[cause]; !seen {
			causes = append(causes, cause)
		}
		where[cause] = append(where[cause], at)
		if _, page, ok := strings.Cut(at, " page "); ok && page != "1" {
			paged = true
		}
	}
	if len(causes) == 1 && !paged {
		// failed_endpoints names them already.
		return causes[0]
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = strings.Join(where[c], ", ") + ": " + c
	}
	return strings.Join(parts, "; ")
}

// numbers lets a signature ignore what changes between scrapes in the same
// failure: a Retry-After countdown, a duration, a page number.
var numbers = regexp.MustCompile(`[0-9][0-9.hmsuµn]*`)

// signature identifies failures: each endpoint's status, or its error's words.
func signature(failures []result) string {
	var b strings.Builder
	for _, f := range failures {
		if status, ok := errors.AsType[*client.StatusError](f.err); ok {
			b.WriteString(f.endpoint.Label + "=HTTP " + strconv.Itoa(status.StatusCode) + "\n")
		} else {
			b.WriteString(f.endpoint.Label + "=" + numbers.ReplaceAllString(f.err.Error(), "#") + "\n")
		}
	}
	return b.String()
}

func isType[E error](err error) bool { _, ok := errors.AsType[E](err); return ok }

// hints name the likely fix when failures point at the configuration. One
// needing every failure is the API's trouble when other endpoints answer.
var hints = []struct {
	every bool
	match func(result) bool
	text  string
}{
	{false, func(f result) bool { return errors.Is(f.err, client.ErrRedirectRefused) },
		"the API redirected outside the origin (scheme, host, port) of --api.url, where the key may not go: set --api.url to the address it redirects to"},
	// crypto/tls wraps every verification error of the certificate, x509's among them.
	{false, func(f result) bool { return isType[*tls.CertificateVerificationError](f.err) },
		"the API's TLS certificate was not accepted (signed by an authority this machine does not trust, such as a private CA or a TLS-inspecting proxy, issued for another name, or expired): if the API's certificate comes from a private CA, pass that CA's certificate with --api.tls.ca-file"},
	{false, func(f result) bool {
		return isType[tls.RecordHeaderError](f.err) || strings.Contains(f.err.Error(), "server gave HTTP response to HTTPS client")
	}, "--api.url says https://, but the server answered in plain HTTP: use the port where the API speaks TLS, or http:// for a plain-HTTP proxy on a network you trust"},
	{false, func(f result) bool { return errors.Is(f.err, client.ErrAuth) },
		"the API refused the key (HTTP 401/403): check that --api.key-file or GLOBAL_STABILITY_API_KEY holds a current key for this API"},
	{true, func(f result) bool { return errors.Is(f.err, syscall.ECONNREFUSED) || isType[*net.DNSError](f.err) },
		"no endpoint could be reached (connection refused, or a host name that does not resolve): check the host and port of --api.url, and that this machine can reach the API"},
	{true, func(f result) bool { return errors.Is(f.err, client.ErrNotFound) },
		"every failed endpoint is HTTP 404: check --api.url, which should be the API's base address; the exporter appends /v1/<endpoint> itself"},
	{false, func(f result) bool { return errors.Is(f.err, client.ErrBodyTooLarge) && !f.endpoint.Paged },
		"a response was larger than its limit: raise --api.max-document-bytes if the API's bodies are really that large"},
	{false, func(f result) bool { return errors.Is(f.err, client.ErrBodyTooLarge) && f.endpoint.Paged },
		"a response was larger than its limit: raise --api.max-response-bytes if the API's bodies are really that large"},
}

// failureHint is the hints that failures match, "" for none.
func failureHint(failures []result) string {
	var out []string
	for _, h := range hints {
		some := slices.ContainsFunc(failures, h.match)
		all := !slices.ContainsFunc(failures, func(f result) bool { return !h.match(f) })
		if some && (all || !h.every) {
			out = append(out, h.text)
		}
	}
	return strings.Join(out, "; ")
}
