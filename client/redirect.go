// SPDX-License-Identifier: Apache-2.0

package client

import (
	"cmp"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

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
