// SPDX-License-Identifier: Apache-2.0

// Package targets is the API accounts one exporter process scrapes: their
// settings (the flags', or the targets' file's with the flags' defaults),
// where a target is built, and the live set that a reload replaces. A
// target's URL and key come from its settings only, never from a request.
package targets

import (
	"flag"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/units"
	commonconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Settings are everything one target is built from, each declared once:
// its field here, and its name in the targets' file, flag, default, kind
// and help in List, from which everything else follows.
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

// Setting is one setting of a target, bound to one Settings. Field is its
// name in the file (a.b: b of the map a), "" for a flag of a part of one
// (--api.tls.ca-file); Flag is "" for a field without a flag of its own.
// Value reads a flag's, a variable's or the file's text, refusing what
// cannot work, saying why.
type Setting struct {
	Field, Flag, Default, Help string
	Value                      flag.Value
}

// List declares every setting of a target, bound to s. Adding a setting
// is a field of Settings, a line here and the code that uses it.
func (s *Settings) List() []Setting {
	list := []Setting{
		{Field: "api_url", Flag: "api.url", Help: "Base address of the Global Stability API, e.g. https://api.example.com. Required unless --demo or --config.file.", Value: text(&s.APIURL, func(u string) error { _, err := parseAPIURL(u); return err })},
		{Field: "api_key_file", Flag: "api.key-file", Help: "File holding the API key (surrounding whitespace is trimmed; read on every request, so a rotated key needs no restart). Or set " + KeyEnv + ".", Value: text(&s.KeyFile, nil)},
		{Field: "timeout", Flag: "api.timeout", Default: "10s", Help: "Timeout of each API request (each page of a paged endpoint is one), and of a scrape that carries no X-Prometheus-Scrape-Timeout-Seconds header.", Value: Duration(&s.Timeout, 1, "a positive duration, such as 10s")},
		{Field: "cursor_param", Flag: "api.cursor-param", Default: "cursor", Help: "Query parameter that passes next_cursor back (the spec leaves it open).", Value: text(&s.CursorParam, notEmpty)},
		{Field: "page_size_param", Flag: "api.page-size-param", Help: "Query parameter that sets the page size; off when empty.", Value: text(&s.PageSizeParam, nil)},
		{Field: "page_size", Flag: "api.page-size", Default: "0", Help: "Page size to request with --api.page-size-param; 0 is off.", Value: Integer(&s.PageSize, 0, "0 (off) or a positive number")},
		{Field: "max_pages", Flag: "api.max-pages", Default: fmt.Sprint(client.DefaultMaxPages), Help: "Most pages of one walk of a paginated endpoint; more fails the endpoint. A walk whose pages changed under it starts again once, so a scrape asks for at most twice this.", Value: Integer(&s.MaxPages, 1, "at least 1")},
		{Field: "max_response_bytes", Flag: "api.max-response-bytes", Default: units.Base2Bytes(client.DefaultMaxResponseBytes).String(), Help: "Largest body of one page of " + paths(func(e *endpoint.Endpoint) bool { return e.Limit == client.PageLimit }) + ", after gzip is undone; a larger one fails its endpoint.", Value: size(&s.MaxResponseBytes, "a positive size, such as 16MiB")},
		{Field: "max_document_bytes", Flag: "api.max-document-bytes", Default: units.Base2Bytes(client.DefaultMaxDocumentBytes).String(), Help: "Largest body of " + paths(func(e *endpoint.Endpoint) bool { return e.Limit == client.DocumentLimit }) + ", after gzip is undone; a larger one fails its endpoint.", Value: size(&s.MaxDocumentBytes, "a positive size, such as 1MiB")},
		{Field: "tls_config", Help: "TLS to the API, as prometheus/common's tls_config (ca_file, cert_file, key_file, server_name, insecure_skip_verify, min_version); replaces the flags' TLS settings whole.", Value: tlsValue{&s.TLS}},
		{Flag: "api.tls.ca-file", Help: "CA certificate file to verify the API's TLS certificate with, instead of the system's roots.", Value: text(&s.TLS.CAFile, nil)},
		{Flag: "api.tls.cert-file", Help: "Client certificate file for mutual TLS with the API (with --api.tls.key-file).", Value: text(&s.TLS.CertFile, nil)},
		{Flag: "api.tls.key-file", Help: "Client private key file for mutual TLS with the API (with --api.tls.cert-file).", Value: text(&s.TLS.KeyFile, nil)},
		{Flag: "api.tls.insecure-skip-verify", Default: "false", Help: "Do not verify the API's TLS certificate. Anyone on the path can then read the API key; for tests only.", Value: Boolean(&s.TLS.InsecureSkipVerify)},
		{Field: "http_cache", Flag: "api.http-cache", Default: "true", Help: "Honour the API's caching headers: reuse an answer while its Cache-Control or Expires says it is fresh, and ask with its ETag or Last-Modified whether it changed (304 Not Modified). --no-api.http-cache downloads every body on every collection, but for what --api.summary-refresh-interval reuses.", Value: Boolean(&s.HTTPCache)},
		{Field: "summary_refresh_interval", Flag: "api.summary-refresh-interval", Default: model.Duration(endpoint.Summary.Refresh).String(), Help: "The spec refreshes " + paths(func(e *endpoint.Endpoint) bool { return e.Refresh > 0 }) + " this often: an answer with as_of T is not fetched again before T plus this (nor more than this after it was fetched). 0 turns this off.", Value: Duration(&s.SummaryRefresh, 0, "0 (off) or a positive duration, like the spec's "+model.Duration(endpoint.Summary.Refresh).String())},
		{Field: "cache_ttl", Flag: "api.cache-ttl", Default: "0s", Help: "How long a finished collection also serves later scrapes; 0 shares only collections in flight.", Value: Duration(&s.CacheTTL, 0, "0 (share only collections in flight) or a positive duration")},
		{Field: "max_label_values", Flag: "collector.max-label-values", Default: fmt.Sprint(endpoint.DefaultMaxLabelValues), Help: "Most series one metric may carry per endpoint and scrape when its labels come from upstream data: " + endpoint.CapsKeep() + ". Within --collector.max-series.", Value: Integer(&s.MaxLabelValues, 1, "at least 1")},
		{Field: "max_series", Flag: "collector.max-series", Default: fmt.Sprint(endpoint.DefaultMaxSeries), Help: "Most series of the API's data one scrape of the target exports: those whose labels come from upstream data share what the others (a few dozen) leave, each an equal share, one needing less leaving the rest to the others; what is left out is counted in global_stability_label_values_dropped.", Value: Integer(&s.MaxSeries, 1, "at least 1")},
		{Field: "grid_degrees", Flag: "collector.conflict.grid-degrees", Default: fmt.Sprint(endpoint.DefaultGridDegrees), Help: "Cell size, in degrees, of the conflict event grid (1 to 90: finer cells would be too many to count in bounded memory).", Value: degrees(&s.GridDegrees)},
	}
	for _, e := range endpoint.All() { // a setting per group, once
		if g := e.Group; g != "" && !slices.ContainsFunc(list, func(st Setting) bool { return st.Field == "collectors."+g }) {
			list = append(list, Setting{Field: "collectors." + g, Flag: "collector." + g, Default: "true", Help: "Collect " + paths(func(e *endpoint.Endpoint) bool { return e.Group == g }) + ".", Value: collectorFlag{s, g}})
		}
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

// Validate returns the settings that cannot work together, each named by
// name, all at once (each alone was checked as it was read).
func (s *Settings) Validate(name func(Setting) string) []error {
	var problems []error
	byFlag := map[string]Setting{}
	for _, st := range s.List() {
		byFlag[st.Flag] = st
	}
	off := func(flag string) bool { v := byFlag[flag].Value.String(); return v == "" || v == "0" }
	together := func(a, b, why string) {
		if off(a) != off(b) {
			problems = append(problems, fmt.Errorf("%s and %s go together: %s", name(byFlag[a]), name(byFlag[b]), why))
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
