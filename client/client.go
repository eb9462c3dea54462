package client

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
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
	DefaultCursorParam      = "cursor"
	DefaultMaxPages         = 10
	DefaultMaxResponseBytes = 16 << 20 // a page of a paged endpoint
	DefaultMaxDocumentBytes = 1 << 20  // an endpoint whose body is one object
)

// Limit says which body limit applies to an endpoint.
type Limit int

const (
	// DocumentLimit is Config.MaxDocumentBytes: an endpoint whose body is
	// one small object.
	DocumentLimit Limit = iota
	// PageLimit is Config.MaxResponseBytes: one page of a paged endpoint.
	PageLimit
)

// Config configures a Client. Only BaseURL and APIKey are required.
type Config struct {
	// BaseURL is the service's base address ({base_url} in the spec); a path
	// prefix is kept, so "https://proxy/gsis" requests "https://proxy/gsis/v1/...".
	BaseURL string
	// APIKey is called once per request, so a key read from a file can be
	// rotated without restarting (see FileKey). Use StaticKey for a fixed key.
	APIKey func() (string, error)
	// HTTPClient carries TLS, proxy and timeout settings. Nil means a client
	// on a clone of http.DefaultTransport, which honours HTTP(S)_PROXY.
	HTTPClient *http.Client
	// UserAgent defaults to global_stability_exporter/<version>.
	UserAgent string
	// CursorParam names the query parameter that passes next_cursor back;
	// the spec leaves it open. Default "cursor".
	CursorParam string
	// PageSizeParam and PageSize add a page-size parameter to paginated
	// requests when both are set. Off by default.
	PageSizeParam string
	PageSize      int
	// MaxPages bounds the pages of one walk. Default 10.
	MaxPages int
	// MaxResponseBytes cuts off the body of a page (PageLimit) at this
	// size, after gzip is undone, with ErrBodyTooLarge. Default 16 MiB.
	MaxResponseBytes int64
	// MaxDocumentBytes does the same for DocumentLimit. Default 1 MiB.
	MaxDocumentBytes int64
	// Observe, if set, is called after every request, once its body has
	// been read or abandoned.
	Observe func(Request)
	// Keyring remembers every key the client sends, so that text from the
	// wire is redacted of it. Share it with the logger (main does) so that
	// every log line is redacted too. Nil: the client keeps its own.
	Keyring *redact.Keyring
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
	// NotModified: the API answered 304 to the validators sent, so what
	// was stored with them still holds. There was no body.
	NotModified bool
	// Validators revalidate the response next time.
	Validators Validators
	// Freshness is how long it may be reused without asking.
	Freshness Freshness
}

// Client calls the Global Stability Intelligence Service. It is safe for
// concurrent use.
type Client struct {
	base          *url.URL
	apiKey        func() (string, error)
	http          *http.Client
	userAgent     string
	cursorParam   string
	pageSizeParam string
	pageSize      int
	maxPages      int
	maxBytes      int64 // of a page
	maxDocBytes   int64 // of the other endpoints
	observe       func(Request)
	keys          *redact.Keyring // every key sent, to redact it from text off the wire
}

// New checks cfg and returns a client. It sends no request.
func New(cfg Config) (*Client, error) {
	base, err := url.Parse(cfg.BaseURL)
	if err != nil {
		// url.Parse quotes the input, which may hold user:password.
		return nil, errors.New("base URL is not a valid URL")
	}
	if (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("base URL %q must be absolute, with scheme http or https", base.Redacted())
	}
	if cfg.APIKey == nil {
		return nil, errors.New("no API key source")
	}
	c := &Client{
		base:          base,
		apiKey:        cfg.APIKey,
		http:          cfg.HTTPClient,
		userAgent:     cfg.UserAgent,
		cursorParam:   cmp.Or(cfg.CursorParam, DefaultCursorParam),
		pageSizeParam: cfg.PageSizeParam,
		pageSize:      cfg.PageSize,
		maxPages:      cfg.MaxPages,
		maxBytes:      cmp.Or(max(cfg.MaxResponseBytes, 0), DefaultMaxResponseBytes),
		maxDocBytes:   cmp.Or(max(cfg.MaxDocumentBytes, 0), DefaultMaxDocumentBytes),
		observe:       cfg.Observe,
		keys:          cfg.Keyring,
	}
	if c.http == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		// A scrape sends up to eight requests to one host at once; Go's
		// default of two idle connections per host would redial six each time.
		t.MaxIdleConnsPerHost = 16
		c.http = &http.Client{Transport: t}
	}
	// Our own redirect policy on a copy, whatever the caller's client does:
	// Go resends a hand-set Authorization header to the same host name on
	// any scheme or port, and to its subdomains.
	hc := *c.http
	hc.CheckRedirect = c.checkRedirect
	c.http = &hc
	if c.userAgent == "" {
		c.userAgent = "global_stability_exporter/" + cmp.Or(version.Version, "dev")
	}
	if c.maxPages <= 0 {
		c.maxPages = DefaultMaxPages
	}
	if c.observe == nil {
		c.observe = func(Request) {}
	}
	if c.keys == nil {
		c.keys = &redact.Keyring{}
	}
	return c, nil
}

// CloseIdleConnections closes the client's idle connections, for a client
// no longer used.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// String shows only the redacted base URL, whatever the verb.
func (c *Client) String() string { return "client.Client{" + c.base.Redacted() + "}" }

// GoString keeps %#v from printing internals.
func (c *Client) GoString() string { return c.String() }

// Get sends GET {base}/v1/{endpoint} and hands the body, cut at limit's
// size, to read, which must consume all of it. With validators, it asks
// the API to answer 304 Not Modified if they still hold: read is then not
// called and Meta.NotModified is set. It returns *StatusError,
// *TransportError or *DecodeError, none of whose texts holds the API key,
// whatever the upstream sent.
func (c *Client) Get(ctx context.Context, endpoint string, limit Limit, v Validators, read func(io.Reader) error) (Meta, error) {
	return c.get(ctx, endpoint, 0, nil, c.limit(limit), v, read)
}

func (c *Client) limit(l Limit) int64 {
	if l == PageLimit {
		return c.maxBytes
	}
	return c.maxDocBytes
}

// get sends one GET for endpoint (page is 0 for unpaginated endpoints) and
// hands the size-limited body to decode.
func (c *Client) get(ctx context.Context, endpoint string, page int, query url.Values, limit int64, v Validators, decode func(io.Reader) error) (Meta, error) {
	where := endpoint
	if page > 0 {
		where = fmt.Sprintf("%s page %d", endpoint, page)
	}
	key, err := c.apiKey()
	if err != nil {
		return Meta{}, &TransportError{Endpoint: where, Err: fmt.Errorf("API key: %w", err)}
	}
	c.keys.Remember(key)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.url(endpoint, query), nil)
	if err != nil {
		return Meta{}, &TransportError{Endpoint: where, Err: errors.New("cannot build request")}
	}
	if v.ETag != "" {
		req.Header.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		req.Header.Set("If-Modified-Since", v.LastModified)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("User-Agent", c.userAgent)
	req.Header.Set("Accept", "application/json")
	// Set by hand, so that Go's transport does not ask for gzip behind our
	// back and leave it to us when the caller's transport disables that
	// (prometheus/common's does): decodeBody handles gzip either way.
	req.Header.Set("Accept-Encoding", "gzip")

	start := time.Now()
	resp, err := c.http.Do(req)
	if err != nil {
		code := "error"
		if resp != nil { // a redirect we refused: the response arrived
			code = strconv.Itoa(resp.StatusCode)
		}
		c.observe(Request{Endpoint: endpoint, Page: page, Code: code, Duration: time.Since(start)})
		return Meta{}, &TransportError{Endpoint: where, Err: c.redactError(withoutURL(err))}
	}
	received := time.Now()
	counted := &countingReader{r: resp.Body}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{counted, resp.Body}
	defer func() {
		// Drain a little so the connection can be reused, then close.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		_ = resp.Body.Close()
		c.observe(Request{Endpoint: endpoint, Page: page, Code: strconv.Itoa(resp.StatusCode), Duration: time.Since(start), Bytes: counted.n,
			RateLimit: rateLimit(resp.Header, received)})
	}()

	meta := Meta{Validators: validators(resp.Header), Freshness: freshness(resp.Header, start, received)}
	if resp.StatusCode == http.StatusNotModified && !v.Empty() {
		// RFC 9110 asks a 304 to repeat the validators and caching
		// headers; what it leaves out stays as stored.
		h := updated(resp.Header, v)
		meta = Meta{NotModified: true, Validators: validators(h), Freshness: freshness(h, start, received)}
		if meta.Validators.ETag == "" && meta.Validators.LastModified == "" {
			meta.Validators.ETag, meta.Validators.LastModified = v.ETag, v.LastModified
		}
		return meta, nil
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return Meta{}, c.statusError(where, resp)
	}
	if err := checkContentType(resp.Header.Get("Content-Type")); err != nil {
		return Meta{}, &DecodeError{Endpoint: where, Err: fmt.Errorf("%w: Content-Type %q", err, c.excerpt(resp.Header.Get("Content-Type"), 64))}
	}
	if resp.ContentLength > limit && resp.Header.Get("Content-Encoding") == "" {
		// Known to fail before a byte is read: not a byte of it is decoded.
		return Meta{}, &DecodeError{Endpoint: where, Err: fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, limit)}
	}
	raw, err := decodedBody(resp, c.keys)
	if err != nil {
		return Meta{}, &DecodeError{Endpoint: where, Err: c.redactError(err)}
	}
	body := &limitedBody{r: raw, left: limit}
	if err = decode(body); err == nil {
		return meta, nil
	}
	return Meta{}, c.classify(where, body, limit, err)
}

// url joins the base address, the endpoint path and the query.
func (c *Client) url(endpoint string, query url.Values) string {
	u := *c.base
	u.Path = strings.TrimSuffix(u.Path, "/") + "/v1/" + endpoint
	u.RawPath = ""
	if len(query) > 0 {
		q := u.Query()
		for k, v := range query {
			q[k] = v
		}
		u.RawQuery = q.Encode()
	}
	return u.String()
}

func (c *Client) statusError(where string, resp *http.Response) error {
	buf := make([]byte, excerptBytes)
	n, _ := io.ReadFull(resp.Body, buf)
	se := &StatusError{
		Endpoint:   where,
		StatusCode: resp.StatusCode,
		Excerpt:    c.excerpt(string(buf[:n]), excerptBytes),
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		se.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return se
}

// classify turns what went wrong while reading a 2xx body into a typed
// error: the connection (or the limit) first, since a reader that failed
// makes any decoder fail; then what the decoder said, with the start of the
// body when it was not JSON.
func (c *Client) classify(where string, body *limitedBody, limit int64, err error) error {
	switch {
	case errors.Is(body.err, ErrBodyTooLarge):
		return &DecodeError{Endpoint: where, Err: fmt.Errorf("%w: more than %d bytes", ErrBodyTooLarge, limit)}
	case body.err != nil:
		// The connection failed mid-body: reset, deadline, or cut short.
		return &TransportError{Endpoint: where, Err: c.redactError(fmt.Errorf("reading body: %w", body.err))}
	}
	de := &DecodeError{}
	if errors.As(err, &de) {
		return &DecodeError{Endpoint: where, Field: de.Field, Err: c.redactError(de.Err)}
	}
	if errors.Is(err, ErrNotJSON) {
		msg := err.Error()
		if head := c.excerpt(string(body.head), 80); head != "" {
			msg += fmt.Sprintf(" (body starts %q)", head)
		}
		return &DecodeError{Endpoint: where, Err: c.redactError(errors.New(msg))}
	}
	return &DecodeError{Endpoint: where, Err: c.redactError(err)}
}

// excerpt makes text from the wire fit for a log line: without the key
// (whole, or cut by the excerpt's ends), then sanitised to at most max bytes.
func (c *Client) excerpt(s string, max int) string { return sanitize(c.keys.Redact(s), max) }

// withoutURL strips *url.Error, whose text carries the whole request URL.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
