package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/prometheus/exporter-toolkit/web"
)

// namedValue wraps a kingpin flag value so that a value that does not parse
// names its flag, its environment variable and what would parse: kingpin's
// own errors say only `time: missing unit in duration "10"`, which leaves a
// user with twenty flags and an environment to search. The error is kept
// in problems rather than returned, so that parsing goes on and every bad
// value is reported at once, with the other start-up problems.
type namedValue struct {
	kingpin.Value
	name, envar string
	defaults    []string // what kingpin would have set had the flag not been given
	problems    *[]error
}

func (v *namedValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		*v.problems = append(*v.problems, fmt.Errorf("%s: %s", flagSource(v.name, v.envar, fmt.Sprintf("%q", s)), valueHint(v.Value, err)))
		// Some of kingpin's values are changed by a failed Set (a duration
		// becomes 0): put the default in, so that the checks of valid
		// values do not report the same flag again as out of range.
		for _, d := range v.defaults {
			_ = v.Value.Set(d)
		}
	}
	return nil
}

// flagSource names a flag with its value as a user reads it in a message:
// --api.max-pages=0 (GLOBAL_STABILITY_API_MAX_PAGES), so that the value is
// found whether it was given as a flag or in the environment.
func flagSource(name, envar, value string) string {
	s := "--" + name
	if value != "" {
		s += "=" + value
	}
	if envar != "" {
		s += " (" + envar + ")"
	}
	return s
}

// IsBoolFlag and IsCumulative pass on what kingpin asks of the value it
// wraps: whether --flag needs no value (and has --no-flag), whether it may
// repeat.
func (v *namedValue) IsBoolFlag() bool {
	b, ok := v.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

func (v *namedValue) IsCumulative() bool {
	c, ok := v.Value.(interface{ IsCumulative() bool })
	return ok && c.IsCumulative()
}

// valueHint says what a valid value of v's kind looks like. kingpin's value
// types are unexported, so they are told apart by name; a kingpin upgrade
// that renames one loses its hint but keeps the error (and
// TestConfigurationErrorsStopStartUp notices).
func valueHint(v kingpin.Value, err error) string {
	switch fmt.Sprintf("%T", v) {
	case "*kingpin.durationValue":
		return "want a duration with a unit, such as 10s or 1m30s"
	case "*kingpin.bytesValue":
		return "want a size with a unit, such as 16MiB or 512KiB"
	case "*kingpin.boolValue":
		return "want true or false"
	case "*kingpin.intValue":
		return "want a whole number"
	case "*kingpin.float64Value":
		return "want a number"
	}
	return err.Error()
}

// nameFlagErrors wraps every flag registered on app in a namedValue that
// adds the values that do not parse to problems.
func nameFlagErrors(app *kingpin.Application, problems *[]error) {
	for _, m := range app.Model().Flags {
		if m.Name == "help" || m.Name == "version" {
			continue
		}
		app.GetFlag(m.Name).SetValue(&namedValue{Value: m.Value, name: m.Name, envar: m.Envar, defaults: m.Default, problems: problems})
	}
}

// validate checks every flag whose value parsed but makes no sense, and
// the combinations that cannot work. Each problem names its flag and what
// to do; all are reported at once, so a user fixes them in one go.
func (f *flags) validate() []error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	// the flag named with its value and its environment variable
	n := func(name string, value any) string { return flagSource(name, f.envar(name), fmt.Sprint(value)) }

	if *f.demo {
		// Demo mode ignores the real API: a stray GLOBAL_STABILITY_DEMO=true
		// in production would feed made-up data into real alerts.
		for _, real := range []struct {
			set  bool
			name string
		}{
			{*f.apiURL != "", n("api.url", "")},
			{*f.keyFile != "", n("api.key-file", "")},
			{os.Getenv(keyEnv) != "", keyEnv},
		} {
			if real.set {
				bad("%s and %s are both set: --demo scrapes a built-in simulator of made-up data and would ignore the real API; unset one of them", n("demo", ""), real.name)
			}
		}
	} else {
		if *f.apiURL == "" {
			bad("%s is required: set it to the API's base address, or pass --demo to try the exporter on simulated data", n("api.url", ""))
		} else if _, err := parseAPIURL(*f.apiURL, f.envar("api.url")); err != nil {
			problems = append(problems, err)
		}
		// The key is checked with everything else, not on a second run.
		if _, _, err := f.keySource(); err != nil {
			problems = append(problems, err)
		}
	}
	if *f.apiTimeout <= 0 {
		bad("%s: want a positive duration, such as 10s", n("api.timeout", *f.apiTimeout))
	}
	if *f.summaryRefresh < 0 {
		bad("%s: want 0 (off) or a positive duration, like the spec's 15m", n("api.summary-refresh-interval", *f.summaryRefresh))
	}
	if *f.cacheTTL < 0 {
		bad("%s: want 0 (share only collections in flight) or a positive duration", n("api.cache-ttl", *f.cacheTTL))
	}
	if *f.timeoutOffset < 0 {
		bad("%s: want 0 or a positive duration, such as 0.5s", n("web.timeout-offset", *f.timeoutOffset))
	}
	if *f.maxRequests < 0 {
		bad("%s: want 0 (no limit) or a positive number", n("web.max-requests", *f.maxRequests))
	}
	if *f.maxPages < 1 {
		bad("%s: want at least 1", n("api.max-pages", *f.maxPages))
	}
	if *f.pageSize < 0 {
		bad("%s: want 0 (off) or a positive number", n("api.page-size", *f.pageSize))
	}
	switch {
	case *f.pageSizeParam != "" && *f.pageSize == 0:
		bad("%s needs --api.page-size: set the page size to request, or unset the parameter", n("api.page-size-param", fmt.Sprintf("%q", *f.pageSizeParam)))
	case *f.pageSizeParam == "" && *f.pageSize > 0:
		bad("%s needs --api.page-size-param: the spec names no page size parameter, so say which one your API reads (e.g. limit)", n("api.page-size", *f.pageSize))
	}
	if *f.cursorParam == "" {
		bad("%s is empty: name the query parameter that passes next_cursor back (default %q)", n("api.cursor-param", ""), "cursor")
	}
	if *f.maxResponseBytes < 1 {
		bad("%s: want a positive size, such as 16MiB", n("api.max-response-bytes", *f.maxResponseBytes))
	}
	if *f.maxDocumentBytes < 1 {
		bad("%s: want a positive size, such as 1MiB", n("api.max-document-bytes", *f.maxDocumentBytes))
	}
	if *f.maxLabelValues < 1 {
		bad("%s: want at least 1 (default %d)", n("collector.max-label-values", *f.maxLabelValues), endpoint.DefaultMaxLabelValues)
	}
	if g := *f.gridDegrees; !(g >= 1 && g <= 90) { // written so that NaN fails too
		bad("%s: want a cell size from 1 to 90 degrees (below 1°, the cells on Earth would be too many to count in bounded memory)", n("collector.conflict.grid-degrees", g))
	}
	if err := checkTelemetryPath(*f.metricsPath, f.envar("web.telemetry-path")); err != nil {
		problems = append(problems, err)
	}
	for _, addr := range *f.web.WebListenAddresses {
		if err := checkListenAddress(addr, f.envar("web.listen-address")); err != nil {
			problems = append(problems, err)
		}
	}
	if path := *f.web.WebConfigFile; path != "" {
		if err := web.Validate(path); err != nil {
			bad("%s: %v", n("web.config.file", path), err)
		}
	}
	if (*f.tlsCertFile == "") != (*f.tlsKeyFile == "") {
		bad("%s and %s go together: set both for mutual TLS, or neither", n("api.tls.cert-file", ""), n("api.tls.key-file", ""))
	}
	return problems
}

// parseAPIURL checks --api.url (envar names its environment variable, for
// messages). A trailing /v1 is removed by trimVersion: the exporter adds
// /v1/... itself, so http://host/v1 would ask for /v1/v1/global-stability
// and get 404s that hint at nothing.
func parseAPIURL(raw, envar string) (*url.URL, error) {
	example := "https://api.example.com"
	src := flagSource("api.url", envar, fmt.Sprintf("%q", displayURL(raw)))
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

// trimVersion removes a trailing /v1 (or /v1/) from an API URL's path and
// reports whether it did.
func trimVersion(u *url.URL) bool {
	p := strings.TrimSuffix(u.Path, "/")
	if !strings.HasSuffix(p, "/v1") {
		return false
	}
	u.Path = strings.TrimSuffix(p, "/v1")
	u.RawPath = ""
	return true
}

// displayURL shows a URL as the user wrote it, but without a password:
// url.URL.Redacted's form when it parses with one, else everything up to
// the last @ replaced.
func displayURL(raw string) string {
	if !strings.Contains(raw, "@") {
		return raw
	}
	if u, err := url.Parse(raw); err == nil {
		return u.Redacted()
	}
	return "<redacted>" + raw[strings.LastIndex(raw, "@"):]
}

// withoutCredentials is the URL as it may be logged: no user, no password.
func withoutCredentials(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// checkTelemetryPath accepts what http.ServeMux can serve as one exact
// path: it starts with a slash and holds no pattern syntax, query or
// fragment.
func checkTelemetryPath(p, envar string) error {
	u, err := url.Parse(p)
	src := flagSource("web.telemetry-path", envar, fmt.Sprintf("%q", p))
	switch {
	case p == "":
		return fmt.Errorf("%s is empty: want a path such as /metrics", flagSource("web.telemetry-path", envar, ""))
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%s must start with a slash: want a path such as /%s", src, p)
	case err != nil || u.Path != p || strings.ContainsAny(p, "{} \t\r\n"):
		return fmt.Errorf("%s is not a plain URL path: want something such as /metrics", src)
	}
	return nil
}

// checkListenAddress checks a --web.listen-address the way net.Listen will
// read it, so a typo fails before "Listening on" is logged. vsock addresses
// are left to the exporter toolkit.
func checkListenAddress(addr, envar string) error {
	if strings.HasPrefix(addr, "vsock://") {
		return nil
	}
	src := flagSource("web.listen-address", envar, fmt.Sprintf("%q", addr))
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: want host:port or :port, such as :10110 or 127.0.0.1:10110 (%w)", src, err)
	}
	// A service name (":http") is looked up in /etc/services, not the
	// network: no deadline needed.
	if _, err := net.DefaultResolver.LookupPort(context.Background(), "tcp", port); err != nil {
		return fmt.Errorf("%s: %q is not a port: want a number from 0 to 65535, such as :10110", src, port)
	}
	return nil
}
