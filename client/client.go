// SPDX-License-Identifier: Apache-2.0

// Package client is the transport to the Global Stability Intelligence
// Service (docs/api.md): authenticated GETs of {base}/v1/{endpoint} and
// walks over cursor pages. It knows URLs, bytes and statuses, never a
// body's fields; it returns typed errors and never logs.
// The key goes only to the base URL's origin, and every text from the wire
// goes through redact's Readable before anything cuts it.
package client

import (
	"cmp"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/common/version"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// Defaults of Config.
const (
	DefaultMaxPages         = 10
	DefaultMaxResponseBytes = 16 << 20 // a page of a paged endpoint
	DefaultMaxDocumentBytes = 1 << 20  // an endpoint whose body is one object
)

// Limit says which body limit applies to an endpoint.
type Limit int

const (
	DocumentLimit Limit = iota // Config.MaxDocumentBytes: a body that is one small object
	PageLimit                  // Config.MaxResponseBytes: one page of a paged endpoint
)

// Config configures a Client. Only BaseURL and APIKey are required.
type Config struct {
	// BaseURL is {base_url} in the spec; a path prefix is kept, so
	// "https://proxy/gsis" requests "https://proxy/gsis/v1/...", a query not.
	BaseURL string
	// APIKey is called per request, so that a key file can rotate.
	APIKey func() (string, error)
	// HTTPClient carries TLS, proxy and timeout settings; its redirect
	// policy is replaced. Nil: a clone of http.DefaultTransport.
	HTTPClient    *http.Client
	CursorParam   string // passes next_cursor back (the spec leaves it open); default "cursor"
	PageSizeParam string // with PageSize, adds a page size to each page's request
	PageSize      int
	MaxPages      int // of one walk; default 10
	// MaxResponseBytes (PageLimit) and MaxDocumentBytes (DocumentLimit) cut
	// a body, counted after gzip, with ErrBodyTooLarge: never read whole.
	MaxResponseBytes int64
	MaxDocumentBytes int64
	Observe          func(Request) // called once a request's body is read or abandoned
	Keys             *redact.Ring  // the client's keys in the process's Redactor; nil: one of its own
}

// Request describes one request sent, for Config.Observe.
type Request struct {
	Endpoint  string        // endpoint label, e.g. "conflict"
	Page      int           // 1, 2, ... on a paginated endpoint; 0 elsewhere
	Code      string        // HTTP status code, or "error" when no response arrived
	Duration  time.Duration // from sending to the body's end
	Bytes     int64         // body bytes received, as sent (compressed if gzip)
	RateLimit RateLimit     // the quota the response announced, if any
}

// Meta is what a response said beyond its body.
type Meta struct {
	NotModified bool       // a 304 to the validators sent: what was stored with them holds
	Validators  Validators // to revalidate the response next time
	Freshness   Freshness  // how long it may be reused without asking
}

// Client calls the Global Stability Intelligence Service; safe for concurrent use.
type Client struct {
	cfg  Config // with the defaults filled in
	base *url.URL
	http *http.Client
}

// StaticKey returns a key source for a fixed key.
func StaticKey(key string) func() (string, error) { return func() (string, error) { return key, nil } }

// New checks cfg and returns a client. It sends no request.
func New(cfg Config) (*Client, error) {
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, errors.New("base URL is not a valid URL") // url.Parse's error quotes it, user:password included
	}
	if (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("base URL %q must be absolute, with scheme http or https", redact.Readable(base.Redacted())) // a key pasted there is not echoed
	}
	if cfg.APIKey == nil {
		return nil, errors.New("no API key source")
	}
	cfg.CursorParam = cmp.Or(cfg.CursorParam, "cursor")
	cfg.MaxPages = cmp.Or(max(cfg.MaxPages, 0), DefaultMaxPages)
	cfg.MaxResponseBytes = cmp.Or(max(cfg.MaxResponseBytes, 0), DefaultMaxResponseBytes)
	cfg.MaxDocumentBytes = cmp.Or(max(cfg.MaxDocumentBytes, 0), DefaultMaxDocumentBytes)
	if cfg.Observe == nil {
		cfg.Observe = func(Request) {}
	}
	cfg.Keys = cmp.Or(cfg.Keys, redact.New().NewRing())
	hc := *cmp.Or(cfg.HTTPClient, &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()})
	c := &Client{cfg: cfg, base: base, http: &hc}
	// Our own redirect policy: Go resends a hand-set Authorization header to
	// the same host name on any scheme or port, and to its subdomains.
	hc.CheckRedirect = c.checkRedirect
	return c, nil
}

const maxRedirects = 5

// checkRedirect's errors name the target without its query, which may hold tokens.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	to := *req.URL
	to.RawQuery, to.Fragment, to.RawFragment = "", "", ""
	if origin(req.URL) != origin(c.base) {
		return fmt.Errorf("%w: the API redirected to %s, which is not the origin of the base URL (%s); the API key goes nowhere else", ErrRedirectRefused, to.Redacted(), origin(c.base))
	}
	if len(via) > maxRedirects {
		return fmt.Errorf("%w: more than %d redirects (a loop?), the last to %s", ErrRedirectRefused, maxRedirects, to.Redacted())
	}
	// Go copies a hand-set Authorization only to a byte-equal host name: a
	// same-origin redirect to API.example.com would get a 401 blaming the key.
	req.Header.Set("Authorization", via[0].Header.Get("Authorization")) //nolint:gosec // G119: only within the base URL's origin, checked above: where the key belongs
	return nil
}

// origin is scheme (url.Parse lowers it), host and port (RFC 6454).
func origin(u *url.URL) string {
	port := cmp.Or(u.Port(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// String and GoString show only the redacted base URL, never the internals.
func (c Client) String() string   { return "client.Client{" + c.base.Redacted() + "}" }
func (c Client) GoString() string { return c.String() }

// Redactor holds the client's keys with every other of the process.
func (c *Client) Redactor() *redact.Redactor { return c.cfg.Keys.Redactor }

// Get sends GET {base}/v1/{endpoint} and hands the body, cut at limit, to
// read, which must consume it; after a 304 to v, read is not called. Its
// errors are *StatusError, *TransportError or *DecodeError.
func (c *Client) Get(ctx context.Context, endpoint string, limit Limit, v Validators, read func(io.Reader) error) (Meta, error) {
	return c.get(ctx, endpoint, endpoint, 0, nil, limit, v, read)
}

// get sends one GET for endpoint (page 0 if unpaged; where names it in errors).
func (c *Client) get(ctx context.Context, endpoint, where string, page int, query url.Values, l Limit, v Validators, read func(io.Reader) error) (Meta, error) {
	key, err := c.cfg.APIKey()
	if err != nil {
		return Meta{}, &TransportError{Endpoint: where, Err: fmt.Errorf("API key: %w", err)}
	}
	c.cfg.Keys.Remember(key)
	u := *c.base
	u.Path, u.RawPath, u.RawQuery = strings.TrimSuffix(u.Path, "/")+"/v1/"+endpoint, "", query.Encode()
	req := (&http.Request{Method: http.MethodGet, URL: &u, Header: http.Header{}}).WithContext(ctx)
	// Accept-Encoding by hand: gzip is asked for and undone (decodedBody)
	// whatever the caller's transport does (prometheus/common's disables Go's).
	for name, value := range map[string]string{"Authorization": "Bearer " + key, "User-Agent": version.ComponentUserAgent("global_stability_exporter"), "Accept": "application/json",
		"Accept-Encoding": "gzip", "If-None-Match": v.ETag, "If-Modified-Since": v.LastModified} {
		if value != "" {
			req.Header.Set(name, value)
		}
	}

	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		r := Request{Endpoint: endpoint, Page: page, Code: "error", Duration: time.Since(start), RateLimit: rateLimit(nil, start)}
		if resp != nil { // a redirect refused: its response arrived, with the quota it announced
			r.Code, r.RateLimit = strconv.Itoa(resp.StatusCode), rateLimit(resp.Header, time.Now())
		}
		c.cfg.Observe(r)
		// Do's *url.Error quotes the request URL: only what it wraps.
		return Meta{}, &TransportError{Endpoint: where, Err: c.redactError(errors.Unwrap(err))}
	}
	received := time.Now()
	counted := &recorder{ReadCloser: resp.Body}
	resp.Body = counted
	defer func() {
		// Drain a little so the connection can be reused, then close.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		c.cfg.Observe(Request{Endpoint: endpoint, Page: page, Code: strconv.Itoa(resp.StatusCode), Duration: time.Since(start), Bytes: counted.n,
			RateLimit: rateLimit(resp.Header, received)})
	}()

	h, notModified := resp.Header, resp.StatusCode == http.StatusNotModified && v.ETag+v.LastModified != ""
	if notModified { // RFC 9111 4.3.4: a header a 304 leaves out stays as stored
		h = h.Clone()
		for name, stored := range map[string][]string{"Etag": {v.ETag}, "Last-Modified": {v.LastModified}, "Cache-Control": v.CacheControl, "Expires": {v.Expires}} {
			if len(h[name]) == 0 {
				h[name] = stored
			}
		}
	}
	meta := Meta{NotModified: notModified, Validators: validators(h), Freshness: freshness(h, start, received)}
	switch {
	case notModified:
		return meta, nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, excerptBytes))
		se := &StatusError{Endpoint: where, StatusCode: resp.StatusCode, Excerpt: c.excerpt(string(excerpt), excerptBytes)}
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
		return Meta{}, se
	}
	raw, err := c.decodedBody(resp) // reads nothing of a body without an encoding
	if err != nil {
		return Meta{}, &DecodeError{Endpoint: where, Err: err}
	}
	limit := map[Limit]int64{DocumentLimit: c.cfg.MaxDocumentBytes, PageLimit: c.cfg.MaxResponseBytes}[l]
	body := &recorder{ReadCloser: http.MaxBytesReader(nil, io.NopCloser(raw), limit)}
	if resp.ContentLength > limit && resp.Header.Get("Content-Encoding") == "" {
		// Known to fail before a byte is read: closed unread, so that
		// neither the drain below nor a slow sender holds the endpoint.
		_ = resp.Body.Close()
		body.err = &http.MaxBytesError{Limit: limit}
	} else if err = read(body); err == nil {
		return meta, nil
	}
	return Meta{}, c.classify(where, body, err)
}

// classify types why a 2xx body was not read: the connection or the limit
// first, since a reader that failed makes any decoder fail.
func (c *Client) classify(where string, body *recorder, err error) error {
	if tooLarge, ok := errors.AsType[*http.MaxBytesError](body.err); ok {
		return &DecodeError{Endpoint: where, Err: fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, tooLarge.Limit)}
	} else if body.err != nil { // reset, deadline, or cut short
		return &TransportError{Endpoint: where, Err: c.redactError(fmt.Errorf("reading body: %w", body.err))}
	}
	if de, ok := errors.AsType[*DecodeError](err); ok {
		return &DecodeError{Endpoint: where, Field: de.Field, Err: c.redactError(de.Err)}
	}
	msg := c.cfg.Keys.Readable(err.Error())
	if head := c.excerpt(string(body.head), 80); head != "" && errors.Is(err, ErrNotJSON) {
		msg += fmt.Sprintf(" (body starts %q)", head)
	}
	return &DecodeError{Endpoint: where, Err: &redactedError{msg: msg, orig: err}}
}

// recorder counts the bytes read, keeps the first headBytes for messages, and
// the first error but io.EOF: a broken connection or the limit, not bad JSON.
type recorder struct {
	io.ReadCloser // closed as it is
	n             int64
	head          []byte
	err           error
}

const headBytes = 128

func (b *recorder) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n += int64(n)
	b.head = append(b.head, p[:min(n, max(headBytes-len(b.head), 0))]...)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

// decodedBody accepts what a JSON API plausibly sends: JSON types,
// text/plain (many frameworks' default) or none, with any parameters; and
// undoes a gzip Content-Encoding, failing any other but identity.
func (c *Client) decodedBody(resp *http.Response) (io.Reader, error) {
	contentType, encoding := resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding")
	mt, _, _ := strings.Cut(contentType, ";")
	switch mt = strings.ToLower(strings.TrimSpace(mt)); {
	case contentType == "", mt == "application/json", mt == "text/json", mt == "text/plain",
		strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"):
	default:
		return nil, fmt.Errorf("%w: Content-Type %q", ErrBadContent, c.excerpt(contentType, 64))
	}
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return resp.Body, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("%w: Content-Encoding gzip, but the body is not gzip: %w", ErrBadContent, err)
		}
		return zr, nil
	default:
		return nil, fmt.Errorf("%w: Content-Encoding %q is not supported (only gzip)", ErrBadContent, c.excerpt(encoding, 32))
	}
}
