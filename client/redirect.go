package client

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// ErrRedirectRefused is a redirect to another origin (scheme, host or port)
// than the base URL's: following it would send the API key there.
var ErrRedirectRefused = errors.New("redirect refused")

// maxRedirects bounds the same-origin redirects of one request; more is
// taken for a loop.
const maxRedirects = 5

// checkRedirect is the client's redirect policy: follow a redirect only
// within the base URL's origin, where the key may go, and only a few times.
// Anything else fails the request with an error naming the target without
// its query, which may carry tokens of its own.
func (c *Client) checkRedirect(req *http.Request, via []*http.Request) error {
	if !sameOrigin(req.URL, c.base) {
		return fmt.Errorf("%w: the API redirected to %s, which is not the origin of the base URL (%s); the API key goes nowhere else", ErrRedirectRefused, withoutQuery(req.URL), origin(c.base))
	}
	if len(via) > maxRedirects {
		return fmt.Errorf("%w: more than %d redirects (a loop?), the last to %s", ErrRedirectRefused, maxRedirects, withoutQuery(req.URL))
	}
	// What the origin policy accepts gets the key. Go copies a hand-set
	// Authorization header only to a host name that is byte-equal (or a
	// subdomain), so a same-origin redirect to API.example.com, say, would
	// go without it, and its 401 would blame a key that is fine.
	req.Header.Set("Authorization", via[0].Header.Get("Authorization")) //nolint:gosec // G119: only within the base URL's origin, checked above: where the key belongs

	return nil
}

// sameOrigin compares scheme, host and port (RFC 6454), with the scheme's
// default port filled in.
func sameOrigin(a, b *url.URL) bool { return origin(a) == origin(b) }

func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	return scheme + "://" + net.JoinHostPort(strings.ToLower(u.Hostname()), port)
}

// withoutQuery shows a URL as url.URL.Redacted does (no password), and
// without its query or fragment, which may carry tokens of their own.
func withoutQuery(u *url.URL) string {
	v := *u
	v.RawQuery, v.Fragment, v.RawFragment = "", "", ""
	return v.Redacted()
}
