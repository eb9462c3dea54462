// SPDX-License-Identifier: Apache-2.0

// Package targets is the API accounts one exporter process scrapes: their
// settings (the flags', or the targets' file's with the flags' defaults),
// where a target is built, and the live set that a reload replaces. A
// target's URL and key come from its settings only, never from a request.
package targets

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/units"
	commonconfig "github.com/prometheus/common/config"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Settings are everything one target is built from. Each is declared once,
// in Settings.List: the flags, the targets' file, their messages, the
// docs' table and Same all follow from that list.
type Settings struct {
	APIURL           string
	KeyFile          string // read on every request, so a rotated key is used without a restart
	Timeout          time.Duration
	CursorParam      string
	PageSizeParam    string
	PageSize         int
	MaxPages         int
	MaxResponseBytes units.Base2Bytes
	MaxDocumentBytes units.Base2Bytes
	TLS              commonconfig.TLSConfig
	Collectors       map[string]bool // by endpoint group; a group not listed is on
	HTTPCache        bool
	SummaryRefresh   time.Duration
	CacheTTL         time.Duration
	MaxLabelValues   int
	MaxSeries        int
	GridDegrees      float64

	// Key is the key's source, KeyFrom says where it reads, for the log.
	// Neither is a setting of the file.
	Key     func() (string, error)
	KeyFrom string
}

// Setting is one setting of a target, bound to one Settings. Field is ""
// for a flag of a part of a field (--api.tls.ca-file), Flag "" for a field
// without a flag of its own.
type Setting struct {
	Field, Flag, Default, Help string
	Value                      Value
}

// Value is a setting's value inside one Settings: Set parses a flag's or
// the file's text, Check says what would make the value work.
type Value interface {
	Set(text string) error
	String() string
	Check() error
}

// List declares every setting of a target, bound to s. Adding a setting
// is a field of Settings, a line here and the code that uses it.
func (s *Settings) List() []Setting {
	list := []Setting{
		{"api_url", "api.url", "", "Base address of the Global Stability API, e.g. https://api.example.com. Required unless --demo or --config.file.", apiURL{text(&s.APIURL, checkAPIURL)}},
		{"api_key_file", "api.key-file", "", "File holding the API key (surrounding whitespace is trimmed; re-read when it changes). Or set " + KeyEnv + ".", text(&s.KeyFile, always)},
		{"timeout", "api.timeout", "10s", "Timeout of each API request (each page of a paged endpoint is one), and of a scrape that carries no X-Prometheus-Scrape-Timeout-Seconds header.", duration(&s.Timeout, 1, "a positive duration, such as 10s")},
		{"cursor_param", "api.cursor-param", "cursor", "Query parameter that passes next_cursor back (the spec leaves it open).", text(&s.CursorParam, notEmpty)},
		{"page_size_param", "api.page-size-param", "", "Query parameter that sets the page size; off when empty.", text(&s.PageSizeParam, always)},
		{"page_size", "api.page-size", "0", "Page size to request with --api.page-size-param; 0 is off.", whole(&s.PageSize, 0, "0 (off) or a positive number")},
		{"max_pages", "api.max-pages", "10", "Most pages fetched per paginated endpoint per scrape; more fails the endpoint.", whole(&s.MaxPages, 1, "at least 1")},
		{"max_response_bytes", "api.max-response-bytes", "16MiB", "Largest body of one page of " + paths(func(e *endpoint.Endpoint) bool { return e.Limit == client.PageLimit }) + ", after gzip is undone; a larger one fails its endpoint.", size(&s.MaxResponseBytes, "a positive size, such as 16MiB")},
		{"max_document_bytes", "api.max-document-bytes", "1MiB", "Largest body of " + paths(func(e *endpoint.Endpoint) bool { return e.Limit == client.DocumentLimit }) + ", after gzip is undone; a larger one fails its endpoint.", size(&s.MaxDocumentBytes, "a positive size, such as 1MiB")},
		{"tls_config", "", "", "TLS to the API, as prometheus/common's tls_config (ca_file, cert_file, key_file, server_name, insecure_skip_verify, min_version); replaces the flags' TLS settings whole.", &tlsValue{&s.TLS}},
		{"", "api.tls.ca-file", "", "CA certificate file to verify the API's TLS certificate with, instead of the system's roots.", text(&s.TLS.CAFile, always)},
		{"", "api.tls.cert-file", "", "Client certificate file for mutual TLS with the API (with --api.tls.key-file).", text(&s.TLS.CertFile, always)},
		{"", "api.tls.key-file", "", "Client private key file for mutual TLS with the API (with --api.tls.cert-file).", text(&s.TLS.KeyFile, always)},
		{"", "api.tls.insecure-skip-verify", "false", "Do not verify the API's TLS certificate. Anyone on the path can then read the API key; for tests only.", flag(&s.TLS.InsecureSkipVerify)},
		{"collectors", "", "", "Endpoint groups on or off, such as {briefings: false}; the groups it leaves out follow the flags.", &collectors{s}},
		{"http_cache", "api.http-cache", "true", "Honour the API's caching headers: reuse an answer while its Cache-Control or Expires says it is fresh, and ask with its ETag or Last-Modified whether it changed (304 Not Modified). --no-api.http-cache downloads every body on every collection.", flag(&s.HTTPCache)},
		{"summary_refresh_interval", "api.summary-refresh-interval", "15m", "The spec refreshes /v1/summaries this often: a summary with as_of T is not fetched again before T plus this (nor more than this after it was fetched). 0 turns this off.", duration(&s.SummaryRefresh, 0, "0 (off) or a positive duration, like the spec's 15m")},
		{"cache_ttl", "api.cache-ttl", "0s", "How long a finished collection also serves later scrapes; 0 shares only collections in flight.", duration(&s.CacheTTL, 0, "0 (share only collections in flight) or a positive duration")},
		{"max_label_values", "collector.max-label-values", fmt.Sprint(endpoint.DefaultMaxLabelValues), "Most series one metric may carry per endpoint and scrape when its labels come from upstream data: " + endpoint.Kept() + ". Within --collector.max-series.", whole(&s.MaxLabelValues, 1, "at least 1")},
		{"max_series", "collector.max-series", fmt.Sprint(endpoint.DefaultMaxSeries), "Most series of the API's data one scrape of the target exports: those whose labels come from upstream data share what the others (a few dozen) leave, each an equal share, one needing less leaving the rest to the others; what is left out is counted in global_stability_label_values_dropped.", whole(&s.MaxSeries, 1, "at least 1")},
		{"grid_degrees", "collector.conflict.grid-degrees", fmt.Sprint(endpoint.DefaultGridDegrees), "Cell size, in degrees, of the conflict event grid (1 to 90: finer cells would be too many to count in bounded memory).", degrees(&s.GridDegrees)},
	}
	for _, g := range groups() {
		list = append(list, Setting{"", "collector." + g, "true", "Collect " + paths(func(e *endpoint.Endpoint) bool { return e.Group == g }) + ".", collectorFlag{s, g}})
	}
	return list
}

// Same reports whether a and b build the same target, which a reload then
// keeps whole. Every field counts, so that no setting can be forgotten
// here; Key is a function, and KeyFile or KeyFrom says where it reads.
func Same(a, b Settings) bool {
	a.Key, b.Key = nil, nil
	return reflect.DeepEqual(a, b)
}

// Validate returns every setting that cannot work, each named by name and
// saying what would be valid, all at once. Whether a URL and a key are
// required is the caller's to say.
func (s *Settings) Validate(prefix string, name func(Setting) string) []error {
	var problems []error
	byFlag := map[string]Setting{}
	for _, st := range s.List() {
		byFlag[st.Flag] = st
		if err := st.Value.Check(); err != nil {
			problems = append(problems, fmt.Errorf("%s%s: %w", prefix, name(st), err))
		}
	}
	off := func(flag string) bool { v := byFlag[flag].Value.String(); return v == "" || v == "0" }
	together := func(a, b, why string) {
		if off(a) != off(b) {
			problems = append(problems, fmt.Errorf("%s%s and %s go together: %s", prefix, name(byFlag[a]), name(byFlag[b]), why))
		}
	}
	together("api.page-size-param", "api.page-size", "the spec names no page size parameter, so name the one your API reads (e.g. limit) and the size to ask for, or neither")
	if s.TLS.Cert == "" && s.TLS.Key == "" { // inline, they are tls_config's own to check
		together("api.tls.cert-file", "api.tls.key-file", "set both for mutual TLS, or neither")
	}
	return problems
}

// Endpoints are the endpoints whose collector is on.
func (s Settings) Endpoints() []*endpoint.Endpoint {
	return slices.DeleteFunc(endpoint.All(), func(e *endpoint.Endpoint) bool { on, set := s.Collectors[e.Group]; return e.Group != "" && set && !on })
}

// groups are the endpoint groups that collectors turn on and off.
func groups() []string {
	var groups []string
	for _, e := range endpoint.All() {
		if e.Group != "" && !slices.Contains(groups, e.Group) {
			groups = append(groups, e.Group)
		}
	}
	return groups
}

// paths names the paths of the endpoints that match, for a help text.
func paths(match func(*endpoint.Endpoint) bool) string {
	var out []string
	for _, e := range endpoint.All() {
		if match(e) {
			out = append(out, "/v1/"+e.Label)
		}
	}
	return strings.Join(out, ", ")
}
