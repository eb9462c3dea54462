// SPDX-License-Identifier: Apache-2.0

package client

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// recorder counts the bytes read, keeps the first headBytes for messages, and
// the first error but io.EOF: a broken connection or the limit, not bad JSON.
type recorder struct {
	r    io.Reader
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

// decodedBody undoes a gzip Content-Encoding; another but identity fails.
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
		// Through the door before it is cut: a cut could hide a key from it.
		return nil, fmt.Errorf("%w: Content-Encoding %q is not supported (only gzip)", ErrBadContent, sanitize(keys.Readable(raw), 32))
	}
}

// checkContentType accepts what a JSON API plausibly sends: JSON types,
// text/plain (many frameworks' default) or none, with any parameters.
func checkContentType(v string) error {
	mt, _, _ := strings.Cut(v, ";")
	switch mt = strings.ToLower(strings.TrimSpace(mt)); {
	case v == "", mt == "application/json", mt == "text/json", mt == "text/plain",
		strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"):
		return nil
	}
	return ErrBadContent
}
