// SPDX-License-Identifier: Apache-2.0

package client

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// recorder counts the bytes read, keeps the first headBytes for messages, and
// the first error but io.EOF: a broken connection or the limit, not bad JSON.
type recorder struct {
	r    io.ReadCloser
	n    int64
	head []byte
	err  error
}

const headBytes = 128

func (b *recorder) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	b.head = append(b.head, p[:min(n, max(headBytes-len(b.head), 0))]...)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *recorder) Close() error { return b.r.Close() }

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
