package collector

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"

	"github.com/global-stability/global_stability_exporter/client"
)

// failureRepeat is how often the same failures are logged again while they
// last. An outage scraped every 15 s would otherwise write a line a scrape:
// thousands a day saying one thing.
const failureRepeat = 5 * time.Minute

// failure is one endpoint that failed a scrape.
type failure struct {
	endpoint string
	err      error
	paged    bool // its body limit is a page's
}

// failureLog logs the failures of each scrape as one line naming every
// endpoint that failed and why; the same failures again (same endpoints,
// same kind of error) at most every failureRepeat, saying how many scrapes
// it left out; and one line when every endpoint answers again.
type failureLog struct {
	logger log.Logger
	now    func() time.Time

	mu         sync.Mutex
	last       string    // signature of the failures last logged; "" when none
	loggedAt   time.Time // when they were logged
	suppressed int       // scrapes with the same failures since then
}

// report logs the failures of one scrape (none: a whole scrape).
func (l *failureLog) report(failures []failure) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if len(failures) == 0 {
		if l.last != "" {
			level.Info(l.logger).Log("msg", "every endpoint answers again")
			l.last, l.suppressed = "", 0
		}
		return
	}
	sig := signature(failures)
	if sig == l.last && now.Sub(l.loggedAt) < failureRepeat {
		l.suppressed++
		return
	}
	endpoints := make([]string, len(failures))
	for i, f := range failures {
		endpoints[i] = f.endpoint
	}
	kv := []any{"msg", "scrape failed", "failed_endpoints", strings.Join(endpoints, ","), "err", errorText(failures)}
	if hint := failureHint(failures); hint != "" {
		kv = append(kv, "hint", hint)
	}
	if sig == l.last && l.suppressed > 0 {
		kv = append(kv, "same_failures_not_logged", l.suppressed, "since", l.loggedAt.UTC().Format(time.RFC3339))
	}
	level.Error(l.logger).Log(kv...)
	l.last, l.loggedAt, l.suppressed = sig, now, 0
}

// errorText says what went wrong with each endpoint, once per distinct
// cause: eight endpoints refused with one 401 body make one clause naming
// the eight, not eight copies of the body.
func errorText(failures []failure) string {
	var (
		causes []string                // in order of first appearance
		where  = map[string][]string{} // cause → the endpoints (and pages) it hit
	)
	for _, f := range failures {
		msg := f.err.Error()
		at, cause := f.endpoint, msg
		if strings.HasPrefix(msg, f.endpoint) {
			if i := strings.Index(msg, ": "); i >= 0 {
				at, cause = msg[:i], msg[i+2:]
			}
		}
		if _, seen := where[cause]; !seen {
			causes = append(causes, cause)
		}
		where[cause] = append(where[cause], at)
	}
	if len(causes) == 1 && !paged(where[causes[0]]) {
		// One cause of every failure: the line's failed_endpoints names
		// them already (a refused key would name all eight twice).
		return causes[0]
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		parts[i] = strings.Join(where[c], ", ") + ": " + c
	}
	return strings.Join(parts, "; ")
}

// paged reports whether a place names a page after the first, which
// failed_endpoints does not say.
func paged(places []string) bool {
	for _, p := range places {
		if i := strings.LastIndex(p, " page "); i >= 0 && p[i+len(" page "):] != "1" {
			return true
		}
	}
	return false
}

// numbers lets a signature ignore what changes from one scrape to the next
// in the same failure: a Retry-After countdown (1m0s, then 59s), a
// duration, a page number.
var numbers = regexp.MustCompile(`[0-9][0-9.hmsuµn]*`)

// signature identifies a set of failures: which endpoints, and per
// endpoint its HTTP status or its error text with numbers left out.
func signature(failures []failure) string {
	var b strings.Builder
	for _, f := range failures {
		b.WriteString(f.endpoint)
		b.WriteByte('=')
		var status *client.StatusError
		if errors.As(f.err, &status) {
			b.WriteString("HTTP " + strconv.Itoa(status.StatusCode))
		} else {
			b.WriteString(numbers.ReplaceAllString(f.err.Error(), "#"))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// failureHint names the likely fix when the failures point at the
// configuration rather than at the API, one hint per cause.
func failureHint(failures []failure) string {
	var (
		hints                 []string
		notFound, unreachable int
		auth, redirected      bool
		tlsVerify, plainHTTP  bool
		tooLarge              = map[string]bool{} // flags that would raise the limit hit
	)
	for _, f := range failures {
		var (
			dnsErr     *net.DNSError
			verifyErr  *tls.CertificateVerificationError
			recordErr  tls.RecordHeaderError
			unknownCA  x509.UnknownAuthorityError
			wrongHost  x509.HostnameError
			invalidErr x509.CertificateInvalidError
		)
		switch {
		case errors.As(f.err, &verifyErr), errors.As(f.err, &unknownCA), errors.As(f.err, &wrongHost), errors.As(f.err, &invalidErr):
			tlsVerify = true
		case errors.As(f.err, &recordErr), strings.Contains(f.err.Error(), "server gave HTTP response to HTTPS client"):
			plainHTTP = true
		case errors.Is(f.err, syscall.ECONNREFUSED), errors.As(f.err, &dnsErr):
			unreachable++
		case errors.Is(f.err, client.ErrAuth):
			auth = true
		case errors.Is(f.err, client.ErrNotFound):
			notFound++
		case errors.Is(f.err, client.ErrRedirectRefused):
			redirected = true
		case errors.Is(f.err, client.ErrBodyTooLarge):
			if f.paged {
				tooLarge["--api.max-response-bytes"] = true
			} else {
				tooLarge["--api.max-document-bytes"] = true
			}
		}
	}
	if redirected {
		hints = append(hints, "the API redirected outside the origin (scheme, host, port) of --api.url, where the key may not go: set --api.url to the address it redirects to")
	}
	if tlsVerify {
		hints = append(hints, "the API's TLS certificate was not accepted (signed by an authority this machine does not trust, such as a private CA or a TLS-inspecting proxy, issued for another name, or expired): if the API's certificate comes from a private CA, pass that CA's certificate with --api.tls.ca-file")
	}
	if plainHTTP {
		hints = append(hints, "--api.url says https://, but the server answered in plain HTTP: use the port where the API speaks TLS, or http:// for a plain-HTTP proxy on a network you trust")
	}
	if auth {
		hints = append(hints, "the API refused the key (HTTP 401/403): check that --api.key-file or GLOBAL_STABILITY_API_KEY holds a current key for this API")
	}
	if unreachable > 0 && unreachable == len(failures) {
		hints = append(hints, "no endpoint could be reached (connection refused, or a host name that does not resolve): check the host and port of --api.url, and that this machine can reach the API")
	}
	if notFound > 0 && notFound == len(failures) {
		hints = append(hints, "every failed endpoint is HTTP 404: check --api.url, which should be the API's base address; the exporter appends /v1/<endpoint> itself")
	}
	for _, flag := range []string{"--api.max-document-bytes", "--api.max-response-bytes"} {
		if tooLarge[flag] {
			hints = append(hints, "a response was larger than its limit: raise "+flag+" if the API's bodies are really that large")
		}
	}
	return strings.Join(hints, "; ")
}
