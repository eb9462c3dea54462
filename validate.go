package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/global-stability/global_stability_exporter/targets"
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
// to do; all are reported at once, so a user fixes them in one go. The
// targets' settings are checked by targets.Settings, named as flags here.
func (f *flags) validate() []error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	// the flag named with its value and its environment variable
	n := func(name string, value any) string { return flagSource(name, f.envar(name), fmt.Sprint(value)) }

	// Where the targets come from: the demo's simulator, the targets'
	// file, or the flags. Each excludes what belongs to another.
	type setting struct {
		set  bool
		name string
	}
	realAPI := []setting{
		{*f.apiURL != "", n("api.url", "")},
		{*f.keyFile != "", n("api.key-file", "")},
		{os.Getenv(keyEnv) != "", keyEnv},
	}
	switch {
	case *f.demo:
		// Demo mode ignores the real API: a stray GLOBAL_STABILITY_DEMO=true
		// in production would feed made-up data into real alerts.
		for _, real := range append(realAPI, setting{*f.configFile != "", n("config.file", "")}) {
			if real.set {
				bad("%s and %s are both set: --demo scrapes a built-in simulator of made-up data and would ignore the real API; unset one of them", n("demo", ""), real.name)
			}
		}
	case *f.configFile != "":
		for _, real := range realAPI {
			if real.set {
				bad("%s and %s are both set: with a targets' file, each target's URL and key file are in the file; unset %s", n("config.file", *f.configFile), real.name, real.name)
			}
		}
		if _, err := targets.Load(*f.configFile, f.settings()); err != nil {
			for _, e := range unjoin(err) {
				bad("%s: %v", n("config.file", *f.configFile), e)
			}
		}
	default:
		if *f.apiURL == "" {
			bad("%s is required: set it to the API's base address, pass --config.file for several targets, or pass --demo to try the exporter on simulated data", n("api.url", ""))
		}
		// The key is checked with everything else, not on a second run.
		if _, _, err := f.keySource(); err != nil {
			problems = append(problems, err)
		}
	}
	s := f.settings()
	if *f.configFile == "" && !*f.demo {
		s.APIURL = *f.apiURL
	}
	problems = append(problems, s.Validate(f.namer())...)
	if *f.timeoutOffset < 0 {
		bad("%s: want 0 or a positive duration, such as 0.5s", n("web.timeout-offset", *f.timeoutOffset))
	}
	if *f.maxRequests < 0 {
		bad("%s: want 0 (no limit) or a positive number", n("web.max-requests", *f.maxRequests))
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
	return problems
}

// unjoin is the errors an errors.Join holds, or err alone.
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
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
