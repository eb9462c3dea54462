package client

import (
	"compress/gzip"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// What a response body goes through before a decoder reads it: its
// Content-Type checked, gzip undone, its size limited and counted.

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// decodedBody undoes a Content-Encoding of gzip; identity or none passes
// through, and anything else is named in the error.
func decodedBody(resp *http.Response, keys *redact.Redactor) (io.Reader, error) {
	raw := resp.Header.Get("Content-Encoding")
	switch strings.ToLower(strings.TrimSpace(raw)) {
	case "", "identity":
		return resp.Body, nil
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("%w: Content-Encoding gzip, but the body is not gzip: %w", ErrBadContent, err)
		}
		return zr, nil
	default:
		// As received, through the door before it is cut or changed in any
		// way: transforming first could hide a key from it.
		return nil, fmt.Errorf("%w: Content-Encoding %q is not supported (only gzip)", ErrBadContent, sanitize(keys.Upstream(raw), 32))
	}
}

// checkContentType accepts what a JSON API plausibly sends: JSON types,
// text/plain (the default of many frameworks) and no header at all, with
// any parameters, even malformed ones.
func checkContentType(v string) error {
	if v == "" {
		return nil
	}
	mt, _, err := mime.ParseMediaType(v)
	if err != nil {
		// A bad parameter ("application/json; charset") spoils only the
		// parameters; the media type before it still says what the body is.
		mt = strings.ToLower(strings.TrimSpace(strings.SplitN(v, ";", 2)[0]))
	}
	switch {
	case mt == "application/json", mt == "text/json", mt == "text/plain",
		strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"):
		return nil
	}
	return ErrBadContent
}

// limitedBody reads at most left bytes and then fails with ErrBodyTooLarge,
// so an oversize body is never read whole. It keeps the first bytes for
// error messages and remembers the first read error, which tells a broken
// connection apart from malformed JSON.
type limitedBody struct {
	r    io.Reader
	left int64
	head []byte
	err  error
}

const headBytes = 128

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if b.left <= 0 {
		// Over the limit only if there is more to read.
		var one [1]byte
		n, err := b.r.Read(one[:])
		if n > 0 {
			b.err = ErrBodyTooLarge
			return 0, b.err
		}
		if err != nil && err != io.EOF {
			b.err = err
		}
		return 0, err
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	if len(b.head) < headBytes {
		b.head = append(b.head, p[:min(n, headBytes-len(b.head))]...)
	}
	if err != nil && err != io.EOF {
		b.err = err
	}
	return n, err
}
