// Package targets is what one exporter process knows of the API accounts
// it scrapes: each target's settings (from the flags, or from the targets'
// file with the flags as defaults), the file itself with its validation,
// the one place where a target's client, store and collections are built,
// and the live set of targets that a reload replaces.
//
// Nothing is shared between targets but the process: each has its own
// HTTP client and connections, key and key ring, store, shared
// collections, back-off, quota gauges and request counters (series of
// process-wide metrics, told apart by a target label). A target's URL and
// key come from its settings only, never from a request.
package targets

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"

	commonconfig "github.com/prometheus/common/config"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Settings are everything one target is built from. The flags give the
// exporter's own defaults (and, without a targets' file, the one target);
// a targets' file overrides them per target.
type Settings struct {
	APIURL string
	// KeyFile is read on every request, so that a rotated key is used
	// without a restart. Key, when set, is used instead (a key from the
	// environment, the demo's). KeyFrom says where the key comes from, for
	// the log (never the key).
	KeyFile string
	Key     func() (string, error)
	KeyFrom string

	Timeout          time.Duration // of each request, and of a scrape without a timeout header
	CursorParam      string
	PageSizeParam    string
	PageSize         int
	MaxPages         int
	MaxResponseBytes int64 // a page of a paged endpoint
	MaxDocumentBytes int64 // any other endpoint
	TLS              commonconfig.TLSConfig

	Collectors     map[string]bool // by endpoint group; a group not listed is on
	HTTPCache      bool
	SummaryRefresh time.Duration
	CacheTTL       time.Duration
	MaxLabelValues int
	GridDegrees    float64
}

// Same reports whether a and b build the same target: a target whose
// settings did not change across a reload keeps what it holds (its store,
// its connections), so a reload costs the API nothing.
func Same(a, b Settings) bool {
	a.Key, b.Key = nil, nil // functions never compare equal; KeyFile says where the key is
	return reflect.DeepEqual(a, b)
}

// Endpoints are the endpoints whose collector is on.
func (s Settings) Endpoints() []*endpoint.Endpoint {
	var out []*endpoint.Endpoint
	for _, e := range endpoint.All() {
		if on, set := s.Collectors[e.Group]; e.Group == "" || !set || on {
			out = append(out, e)
		}
	}
	return out
}

// Groups are the endpoint groups that collectors turn on and off, in the
// descriptions' order.
func Groups() []string {
	var groups []string
	for _, e := range endpoint.All() {
		if e.Group != "" && !slices.Contains(groups, e.Group) {
			groups = append(groups, e.Group)
		}
	}
	return groups
}

// Namer names a setting in a message: a flag with its value and variable
// for the flags, a target and its field for the targets' file.
type Namer func(field string, value any) string

// Fields of Settings as the targets' file spells them, which is also how
// Validate's messages refer to them before a Namer renders them.
const (
	FieldAPIURL           = "api_url"
	FieldKeyFile          = "api_key_file"
	FieldTimeout          = "timeout"
	FieldCursorParam      = "cursor_param"
	FieldPageSizeParam    = "page_size_param"
	FieldPageSize         = "page_size"
	FieldMaxPages         = "max_pages"
	FieldMaxResponseBytes = "max_response_bytes"
	FieldMaxDocumentBytes = "max_document_bytes"
	FieldTLS              = "tls_config"
	FieldTLSCertFile      = "tls_config.cert_file"
	FieldTLSKeyFile       = "tls_config.key_file"
	FieldCollectors       = "collectors"
	FieldSummaryRefresh   = "summary_refresh_interval"
	FieldCacheTTL         = "cache_ttl"
	FieldMaxLabelValues   = "max_label_values"
	FieldGridDegrees      = "grid_degrees"
)

// Validate returns every setting that cannot work, each named by name and
// saying what would be valid; whether a URL and a key are required, and
// where the key may come from, is the caller's to check. All at once, so
// one run shows them all.
func (s Settings) Validate(name Namer) []error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	if s.APIURL != "" { // required or not is the caller's to say: --demo has none
		if _, err := ParseAPIURL(s.APIURL, name); err != nil {
			problems = append(problems, err)
		}
	}
	if s.Timeout <= 0 {
		bad("%s: want a positive duration, such as 10s", name(FieldTimeout, s.Timeout))
	}
	if s.SummaryRefresh < 0 {
		bad("%s: want 0 (off) or a positive duration, like the spec's 15m", name(FieldSummaryRefresh, s.SummaryRefresh))
	}
	if s.CacheTTL < 0 {
		bad("%s: want 0 (share only collections in flight) or a positive duration", name(FieldCacheTTL, s.CacheTTL))
	}
	if s.MaxPages < 1 {
		bad("%s: want at least 1", name(FieldMaxPages, s.MaxPages))
	}
	if s.PageSize < 0 {
		bad("%s: want 0 (off) or a positive number", name(FieldPageSize, s.PageSize))
	}
	switch {
	case s.PageSizeParam != "" && s.PageSize == 0:
		bad("%s needs %s: set the page size to request, or unset the parameter", name(FieldPageSizeParam, fmt.Sprintf("%q", s.PageSizeParam)), name(FieldPageSize, ""))
	case s.PageSizeParam == "" && s.PageSize > 0:
		bad("%s needs %s: the spec names no page size parameter, so say which one your API reads (e.g. limit)", name(FieldPageSize, s.PageSize), name(FieldPageSizeParam, ""))
	}
	if s.CursorParam == "" {
		bad("%s is empty: name the query parameter that passes next_cursor back (default %q)", name(FieldCursorParam, ""), client.DefaultCursorParam)
	}
	if s.MaxResponseBytes < 1 {
		bad("%s: want a positive size, such as 16MiB", name(FieldMaxResponseBytes, s.MaxResponseBytes))
	}
	if s.MaxDocumentBytes < 1 {
		bad("%s: want a positive size, such as 1MiB", name(FieldMaxDocumentBytes, s.MaxDocumentBytes))
	}
	if s.MaxLabelValues < 1 {
		bad("%s: want at least 1 (default %d)", name(FieldMaxLabelValues, s.MaxLabelValues), endpoint.DefaultMaxLabelValues)
	}
	if g := s.GridDegrees; !(g >= 1 && g <= 90) { // written so that NaN fails too
		bad("%s: want a cell size from 1 to 90 degrees (below 1°, the cells on Earth would be too many to count in bounded memory)", name(FieldGridDegrees, g))
	}
	for group := range s.Collectors {
		if !slices.Contains(Groups(), group) {
			bad("%s: no collector %q: want one of %s", name(FieldCollectors, ""), group, strings.Join(Groups(), ", "))
		}
	}
	if (s.TLS.CertFile == "") != (s.TLS.KeyFile == "") {
		bad("%s and %s go together: set both for mutual TLS, or neither", name(FieldTLSCertFile, ""), name(FieldTLSKeyFile, ""))
	}
	if err := s.TLS.Validate(); err != nil {
		bad("%s: %v", name(FieldTLS, ""), err)
	}
	return problems
}

// ParseAPIURL checks a base address (name names it for messages). A
// trailing /v1 is left for TrimVersion: the exporter adds /v1/... itself.
func ParseAPIURL(raw string, name Namer) (*url.URL, error) {
	example := "https://api.example.com"
	src := name(FieldAPIURL, fmt.Sprintf("%q", DisplayURL(raw)))
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "":
		return nil, fmt.Errorf("%s is not an absolute URL: want the API's base address with scheme and host, such as %s%s", src, example, schemeHint(raw))
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("%s: the scheme must be http or https, such as %s", src, example)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("%s: a base address has no query or fragment; the exporter adds its own paths and parameters", src)
	}
	if _, port, err := net.SplitHostPort(u.Host); err == nil && port == "" {
		return nil, fmt.Errorf("%s: the port after the colon is missing", src)
	}
	return u, nil
}

// schemeHint suggests a scheme for an address written without one. Which
// one the API speaks cannot be known from here: https is the usual answer,
// plain http the likely one for a loopback address or a port such as 8080
// (a local proxy, a test server), so both are named, the likelier first.
func schemeHint(raw string) string {
	if strings.Contains(raw, "://") || strings.ContainsAny(raw, " \t") {
		return ""
	}
	addr := strings.TrimLeft(raw, "/")
	host, port, err := net.SplitHostPort(strings.SplitN(addr, "/", 2)[0])
	if err != nil {
		host = strings.SplitN(addr, "/", 2)[0]
	}
	ip := net.ParseIP(host)
	plain := host == "localhost" || (ip != nil && ip.IsLoopback()) || port == "80" || port == "8080" || port == "8000"
	if plain {
		return fmt.Sprintf(" (did you mean http://%s, or https://%s if it speaks TLS?)", addr, addr)
	}
	return fmt.Sprintf(" (did you mean https://%s, or http://%s if it speaks only plain HTTP?)", addr, addr)
}

// TrimVersion removes a trailing /v1 (or /v1/) from an API URL's path and
// reports whether it did: http://host/v1 would ask for /v1/v1/... and get
// 404s that hint at nothing.
func TrimVersion(u *url.URL) bool {
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p, "/v1") {
		return false
	}
	u.Path = strings.TrimSuffix(p, "/v1")
	u.RawPath = ""
	return true
}

// DisplayURL shows a URL as the user wrote it, but without a password:
// url.URL.Redacted's form when it parses with one, else everything up to
// the last @ replaced.
func DisplayURL(raw string) string {
	if !strings.Contains(raw, "@") {
		return raw
	}
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "<redacted>" + raw[strings.LastIndex(raw, "@"):]
}

// WithoutCredentials is the URL as it may be logged: no user, no password.
func WithoutCredentials(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// IsLoopback reports whether host names this machine, where plain HTTP
// never leaves it.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ErrEmptyKey is a key file that holds only whitespace.
var ErrEmptyKey = errors.New("is empty")
