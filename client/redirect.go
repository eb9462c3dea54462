package client

import (
	"cmp"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrRedirectRefused is a redirect to another origin (scheme, host or port)
// than the base URL's, where the key must not go, refused before anything is
// sent there; or more than maxRedirects within it, a loop.
var ErrRedirectRefused = errors.New("redirect refused")

const maxRedirects = 5

// checkRedirect is the client's redirect policy. Its errors name the target
// without its query, which may carry tokens of its own.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	to := *req.URL
	to.RawQuery, to.Fragment, to.RawFragment = "", "", ""
	if origin(req.URL) != origin(c.base) {
		return fmt.Errorf("%w: the API redirected to %s, which is not the origin of the base URL (%s); the API key goes nowhere else", ErrRedirectRefused, to.Redacted(), origin(c.base))
	}
	if len(via) > maxRedirects {
		return fmt.Errorf("%w: more than %d redirects (a loop?), the last to %s", ErrRedirectRefused, maxRedirects, to.Redacted())
	}
	// Go copies a hand-set Authorization header only to a byte-equal host
	// name (or a subdomain): a same-origin redirect to API.example.com would
	// go without it, and its 401 blame a key that is fine.
	req.Header.Set("Authorization", via[0].Header.Get("Authorization")) //nolint:gosec // G119: only within the base URL's origin, checked above: where the key belongs
	return nil
}

// origin is scheme (url.Parse lowers its case), host and port (RFC 6454),
// the scheme's default port filled in.
func origin(u *url.URL) string {
	port := cmp.Or(u.Port(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	return u.Scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}
