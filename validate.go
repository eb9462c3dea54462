package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/global-stability/global_stability_exporter/collector"
)

// namedValue wraps a kingpin flag value so that a value that does not parse
// names its flag, its environment variable and what would parse: kingpin's
// own errors say only `time: missing unit in duration "10"`, which leaves a
// user with twenty flags and an environment to search.
type namedValue struct {
	kingpin.Value
	name, envar string
}

func (v *namedValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		source := "--" + v.name
		if v.envar != "" {
			source += " (or " + v.envar + ")"
		}
		return fmt.Errorf("%s=%q: %s", source, s, valueHint(v.Value, err))
	}
	return nil
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

// nameFlagErrors wraps every flag registered on app in a namedValue.
func nameFlagErrors(app *kingpin.Application) {
	for _, m := range app.Model().Flags {
		if m.Name == "help" || m.Name == "version" {
			continue
		}
		app.GetFlag(m.Name).SetValue(&namedValue{Value: m.Value, name: m.Name, envar: m.Envar})
	}
}

// validate checks every flag whose value parsed but makes no sense, and
// the combinations that cannot work. Each problem names its flag and what
// to do; all are reported at once, so a user fixes them in one go.
func (f *flags) validate() []error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }

	if *f.demo {
		// Demo mode ignores the real API: a stray GLOBAL_STABILITY_DEMO=true
		// in production would feed made-up data into real alerts.
		for _, real := range []struct {
			set  bool
			name string
		}{
			{*f.apiURL != "", "--api.url (or GLOBAL_STABILITY_API_URL)"},
			{*f.keyFile != "", "--api.key-file (or GLOBAL_STABILITY_API_KEY_FILE)"},
			{os.Getenv(keyEnv) != "", keyEnv},
		} {
			if real.set {
				bad("--demo (or GLOBAL_STABILITY_DEMO) and %s are both set: --demo scrapes a built-in simulator of made-up data and would ignore the real API; unset one of them", real.name)
			}
		}
	} else if *f.apiURL == "" {
		bad("--api.url is required: set it (or GLOBAL_STABILITY_API_URL) to the API's base address, or pass --demo to try the exporter on simulated data")
	} else if _, err := parseAPIURL(*f.apiURL); err != nil {
		problems = append(problems, err)
	}
	if *f.apiTimeout <= 0 {
		bad("--api.timeout=%s: want a positive duration, such as 10s", *f.apiTimeout)
	}
	if *f.cacheTTL < 0 {
		bad("--api.cache-ttl=%s: want 0 (share only collections in flight) or a positive duration", *f.cacheTTL)
	}
	if *f.timeoutOffset < 0 {
		bad("--web.timeout-offset=%s: want 0 or a positive duration, such as 0.5s", *f.timeoutOffset)
	}
	if *f.maxRequests < 0 {
		bad("--web.max-requests=%d: want 0 (no limit) or a positive number", *f.maxRequests)
	}
	if *f.maxPages < 1 {
		bad("--api.max-pages=%d: want at least 1", *f.maxPages)
	}
	if *f.pageSize < 0 {
		bad("--api.page-size=%d: want 0 (off) or a positive number", *f.pageSize)
	}
	switch {
	case *f.pageSizeParam != "" && *f.pageSize == 0:
		bad("--api.page-size-param=%q needs --api.page-size: set the page size to request, or unset the parameter", *f.pageSizeParam)
	case *f.pageSizeParam == "" && *f.pageSize > 0:
		bad("--api.page-size=%d needs --api.page-size-param: the spec names no page size parameter, so say which one your API reads (e.g. limit)", *f.pageSize)
	}
	if *f.cursorParam == "" {
		bad("--api.cursor-param is empty: name the query parameter that passes next_cursor back (default %q)", "cursor")
	}
	if *f.maxResponseBytes < 1 {
		bad("--api.max-response-bytes=%s: want a positive size, such as 16MiB", *f.maxResponseBytes)
	}
	if *f.maxDocumentBytes < 1 {
		bad("--api.max-document-bytes=%s: want a positive size, such as 1MiB", *f.maxDocumentBytes)
	}
	if *f.maxLabelValues < 1 {
		bad("--collector.max-label-values=%d: want at least 1 (default %d)", *f.maxLabelValues, collector.DefaultMaxLabelValues)
	}
	if g := *f.gridDegrees; !(g >= 1 && g <= 90) { // written so that NaN fails too
		bad("--collector.conflict.grid-degrees=%g: want a cell size from 1 to 90 degrees (below 1°, the cells on Earth would be too many to count in bounded memory)", g)
	}
	if err := checkTelemetryPath(*f.metricsPath); err != nil {
		problems = append(problems, err)
	}
	for _, addr := range *f.web.WebListenAddresses {
		if err := checkListenAddress(addr); err != nil {
			problems = append(problems, err)
		}
	}
	if path := *f.web.WebConfigFile; path != "" {
		if err := web.Validate(path); err != nil {
			bad("--web.config.file=%s: %v", path, err)
		}
	}
	if (*f.tlsCertFile == "") != (*f.tlsKeyFile == "") {
		bad("--api.tls.cert-file and --api.tls.key-file go together: set both for mutual TLS, or neither")
	}
	return problems
}

// parseAPIURL checks --api.url and returns it with a trailing /v1 removed:
// the exporter adds /v1/... itself, so http://host/v1 would ask for
// /v1/v1/global-stability and get 404s that hint at nothing.
func parseAPIURL(raw string) (*url.URL, error) {
	example := "https://api.example.com"
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "":
		hint := ""
		if !strings.Contains(raw, "://") && !strings.ContainsAny(raw, " \t") {
			hint = fmt.Sprintf(" (did you mean https://%s?)", strings.TrimLeft(raw, "/"))
		}
		return nil, fmt.Errorf("--api.url=%q is not an absolute URL: want the API's base address with scheme and host, such as %s%s", displayURL(raw), example, hint)
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("--api.url=%q: the scheme must be http or https, such as %s", displayURL(raw), example)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, fmt.Errorf("--api.url=%q: a base address has no query or fragment; the exporter adds its own paths and parameters", displayURL(raw))
	}
	if _, port, err := net.SplitHostPort(u.Host); err == nil && port == "" {
		return nil, fmt.Errorf("--api.url=%q: the port after the colon is missing", displayURL(raw))
	}
	return u, nil
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
func checkTelemetryPath(p string) error {
	u, err := url.Parse(p)
	switch {
	case p == "":
		return errors.New("--web.telemetry-path is empty: want a path such as /metrics")
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("--web.telemetry-path=%q must start with a slash: want a path such as /%s", p, p)
	case err != nil || u.Path != p || strings.ContainsAny(p, "{} \t\r\n"):
		return fmt.Errorf("--web.telemetry-path=%q is not a plain URL path: want something such as /metrics", p)
	}
	return nil
}

// checkListenAddress checks a --web.listen-address the way net.Listen will
// read it, so a typo fails before "Listening on" is logged. vsock addresses
// are left to the exporter toolkit.
func checkListenAddress(addr string) error {
	if strings.HasPrefix(addr, "vsock://") {
		return nil
	}
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--web.listen-address=%q: want host:port or :port, such as :10110 or 127.0.0.1:10110 (%w)", addr, err)
	}
	// A service name (":http") is looked up in /etc/services, not the
	// network: no deadline needed.
	if _, err := net.DefaultResolver.LookupPort(context.Background(), "tcp", port); err != nil {
		return fmt.Errorf("--web.listen-address=%q: %q is not a port: want a number from 0 to 65535, such as :10110", addr, port)
	}
	return nil
}

// explainParseError names the flag behind kingpin's "unexpected VALUE":
// a boolean flag takes no =value, so kingpin reads the value as a
// positional argument, which this exporter has none of.
func explainParseError(app *kingpin.Application, args []string, err error) error {
	word, ok := strings.CutPrefix(err.Error(), "unexpected ")
	if !ok {
		return err
	}
	for _, arg := range args {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if !hasValue || value != word || !strings.HasPrefix(arg, "--") {
			continue
		}
		if fl := app.GetFlag(name); fl != nil {
			return fmt.Errorf("--%s=%s: a boolean flag takes no value: write --%s to turn it on or --no-%s to turn it off", name, value, name, name)
		}
	}
	return fmt.Errorf("%w: the exporter takes no arguments, only --flags", err)
}
