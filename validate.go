// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/url"
	"os"
	"os/user"
	"regexp"
	"slices"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/global-stability/global_stability_exporter/targets"
)

// parseArgs parses args into app's flags and returns every problem at once
// (parsed: kingpin set the flags). kingpin stops at its first problem, so
// what it would stop at (an unknown flag, a boolean flag given a value, an
// argument) is taken out first, and namedValue notes a value that fails.
func parseArgs(app *kingpin.Application, args []string) (problems []error, parsed bool) {
	flags := map[string]*kingpin.FlagModel{}
	for _, f := range app.Model().Flags {
		flags[f.Name] = f
		if f.Name != "help" && f.Name != "version" {
			app.GetFlag(f.Name).SetValue(namedValue{f, &problems})
		}
	}
	var kept []string
	words := false // after "--", every word is an argument
	for i := 0; i < len(args); i++ {
		arg := args[i]
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		base := strings.TrimPrefix(name, "no-")
		f, known := flags[name]
		if b, ok := flags[base]; !known && ok && b.IsBoolFlag() {
			f, known = b, true
		}
		switch {
		case arg == "--" && !words:
			words = true
		case words || !strings.HasPrefix(arg, "-") || arg == "-":
			problems = append(problems, fmt.Errorf("%s: the exporter takes no arguments, only --flags (a value given after a space belongs to the flag before it; a boolean flag takes none; see --help)", shown(arg)))
		case arg == "-h":
			kept = append(kept, arg)
		case !strings.HasPrefix(arg, "--"):
			problems = append(problems, fmt.Errorf("%s: unknown short flag; the exporter's flags are long ones, such as --api.url (see --help)", shown(arg)))
		case known && f.IsBoolFlag() && hasValue:
			problems = append(problems, fmt.Errorf("--%s=%s: a boolean flag takes no value: write --%s to turn it on or --no-%s to turn it off (in the environment, %s=true or false)",
				name, shown(value), base, base, f.Envar))
		case known:
			kept = append(kept, arg)
			if !f.IsBoolFlag() && !hasValue && i+1 < len(args) {
				i++ // its value
				kept = append(kept, args[i])
			}
		default:
			// The value of an unknown flag is not echoed: it may be a key.
			if !hasValue && i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				i++ // most likely its value, not an argument of its own
			}
			problems = append(problems, unknownFlag(name, flags))
		}
	}
	if _, err := app.Parse(kept); err != nil { // what is left: a flag missing its value
		return append(problems, fmt.Errorf("%w (see --help)", err)), false
	}
	return problems, true
}

// keyFlag matches the flags a user may try for the key itself.
var keyFlag = regexp.MustCompile(`^(api[.-]?)?(key|apikey|api-key|token|secret|bearer|password)$`)

// unknownFlag explains a flag the exporter does not have: a key given as a
// flag, with the two ways that work; anything else, with the nearest flag.
func unknownFlag(name string, flags map[string]*kingpin.FlagModel) error {
	if keyFlag.MatchString(strings.ToLower(name)) {
		return fmt.Errorf("--%s: there is no flag for the API key, on purpose: a flag's value shows in ps, /proc and shell history. Put the key in a file readable only by the exporter and pass --api.key-file=PATH, or set the environment variable %s", name, targets.KeyEnv)
	}
	var names []string
	for candidate, f := range flags {
		if !f.Hidden && candidate != "help" && candidate != "version" {
			names = append(names, candidate)
		}
	}
	if best := targets.Nearest(name, names); best != "" {
		return fmt.Errorf("--%s: unknown flag; did you mean --%s? (see --help)", name, best)
	}
	return fmt.Errorf("--%s: unknown flag (see --help for the flags)", name)
}

// shown is a command-line word as a message may quote it: one the exporter
// does not understand may be a key typed in the wrong place, so a long one
// shows its start only, shorter than a piece of a key (redact.MinPiece).
func shown(word string) string {
	if len(word) < 8 {
		return fmt.Sprintf("%q", word)
	}
	return fmt.Sprintf("%q (%d characters)", word[:4]+"…", len(word))
}

// namedValue wraps a flag's value (its model's) so that a value that does
// not parse goes to problems, named with its flag, variable and what would
// parse, rather than back to kingpin, which would stop.
type namedValue struct {
	*kingpin.FlagModel
	problems *[]error
}

func (v namedValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		*v.problems = append(*v.problems, fmt.Errorf("%s: %s", flagSource(v.Name, fmt.Sprintf("%q", s)), cmp.Or(valueHints[fmt.Sprintf("%T", v.Value)], err.Error())))
		// kingpin took it as given, so it would keep what the failed Set
		// left, and be reported again as out of range.
		for _, d := range v.Default {
			_ = v.Value.Set(d)
		}
	}
	return nil
}

func (v namedValue) IsCumulative() bool {
	c, ok := v.Value.(interface{ IsCumulative() bool })
	return ok && c.IsCumulative()
}

// flagSource names a flag with its value and its variable, where it may
// have been given: --api.max-pages=0 (GLOBAL_STABILITY_API_MAX_PAGES).
func flagSource(name, value string) string {
	if value != "" {
		value = "=" + value
	}
	return "--" + name + value + " (" + envar(name) + ")"
}

// valueHints say what a valid value of the libraries' kinds looks like (a
// target's settings say it in their own errors), by type name: kingpin's
// are unexported (TestConfigurationErrorsStopStartUp notices a rename).
var valueHints = map[string]string{
	"*kingpin.durationValue": "want a duration with a unit, such as 10s or 1m30s",
	"*kingpin.boolValue":     "want true or false",
	"*kingpin.intValue":      "want a whole number",
	"*promslog.Level":        "want debug, info, warn or error",
	"*promslog.Format":       "want logfmt or json",
}

// validate checks the values that parsed but cannot work, alone or
// together; with the flags' one account, it also reads the key.
func validate(c *config) []error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	// The targets come from the demo, the targets' file or the flags: each
	// excludes the others' settings.
	type setting struct {
		set  bool
		name string
	}
	realAPI := []setting{
		{c.defaults.APIURL != "", flagSource("api.url", "")},
		{c.defaults.KeyFile != "", flagSource("api.key-file", "")},
		{os.Getenv(targets.KeyEnv) != "", targets.KeyEnv},
	}
	switch {
	case c.demo:
		// Else a stray GLOBAL_STABILITY_DEMO=true would feed real alerts.
		for _, real := range append(realAPI, setting{c.configFile != "", flagSource("config.file", "")}) {
			if real.set {
				bad("%s and %s are both set: --demo scrapes a built-in simulator of made-up data and would ignore the real API; unset one of them", flagSource("demo", ""), real.name)
			}
		}
	case c.configFile != "":
		for _, real := range realAPI {
			if real.set {
				bad("%s and %s are both set: with a targets' file, each target's URL and key file are in the file; unset %s", flagSource("config.file", c.configFile), real.name, real.name)
			}
		}
		if _, err := targets.Load(c.configFile, c.defaults); err != nil {
			errs := []error{err}
			if j, ok := err.(interface{ Unwrap() []error }); ok {
				errs = j.Unwrap()
			}
			for _, e := range errs {
				bad("%s: %v", flagSource("config.file", c.configFile), e)
			}
		}
	default:
		if c.defaults.APIURL == "" {
			bad("%s is required: set it to the API's base address, pass --config.file for several targets, or pass --demo to try the exporter on simulated data", flagSource("api.url", ""))
		}
		var err error
		c.defaults.Key, c.defaults.KeyFrom, err = keySource(c.defaults.KeyFile)
		problems = append(problems, err)
	}
	problems = append(problems, c.defaults.Validate("", nameFlag)...)
	if c.timeoutOffset < 0 {
		bad("%s: want 0 or a positive duration, such as 0.5s", flagSource("web.timeout-offset", c.timeoutOffset.String()))
	}
	if c.maxRequests < 0 {
		bad("%s: want 0 (no limit) or a positive number", flagSource("web.max-requests", fmt.Sprint(c.maxRequests)))
	}
	problems = append(problems, checkTelemetryPath(c.metricsPath))
	for _, addr := range *c.web.WebListenAddresses {
		problems = append(problems, checkListenAddress(addr))
	}
	if path := *c.web.WebConfigFile; path != "" {
		if err := web.Validate(path); err != nil {
			bad("%s: %v", flagSource("web.config.file", path), err)
		}
	}
	return slices.DeleteFunc(problems, func(err error) bool { return err == nil })
}

// nameFlag names a target's setting by its flag: one without a flag (a
// map of the targets' file) cannot be wrong from the flags.
func nameFlag(st targets.Setting) string {
	v := st.Value.String()
	if strings.ContainsAny(v, " \t") {
		v = fmt.Sprintf("%q", v)
	}
	return flagSource(st.Flag, v)
}

// keySource picks the key from --api.key-file or the environment, checks
// that it can be read now, and says where it comes from (never the key).
func keySource(keyFile string) (key func() (string, error), from string, err error) {
	raw, envSet := os.LookupEnv(targets.KeyEnv)
	flag := flagSource("api.key-file", "")
	switch {
	case keyFile != "" && envSet:
		return nil, "", fmt.Errorf("%s and %s are both set: keep one", flag, targets.KeyEnv)
	case keyFile != "":
		key := targets.FileKey(keyFile)
		if _, err := key(); err != nil {
			return nil, "", fmt.Errorf("%s: %w%s: point it at a file holding the API key, readable by this process", flag, err, whoAmI(err))
		}
		return key, "file " + keyFile, nil
	case envSet:
		envKey := strings.TrimSpace(raw)
		if envKey == "" {
			return nil, "", fmt.Errorf("%s is set but empty: put the key in it, or unset it and set %s to a file holding the key", targets.KeyEnv, flag)
		}
		return func() (string, error) { return envKey, nil }, "environment variable " + targets.KeyEnv, targets.CheckKey(envKey, targets.KeyEnv)
	}
	return nil, "", fmt.Errorf("no API key: set %s to a file holding it, or the %s environment variable", flag, targets.KeyEnv)
}

// whoAmI says which user was refused a file: often another than the one
// who wrote it (a container's nonroot uid, systemd's DynamicUser).
func whoAmI(err error) string {
	if !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	who := fmt.Sprintf("uid %d, gid %d", os.Getuid(), os.Getgid())
	if u, err := user.Current(); err == nil {
		who = u.Username + ", " + who
	}
	return " (this process runs as " + who + ")"
}

// checkTelemetryPath accepts what http.ServeMux can serve as one exact
// path: no pattern syntax, query or fragment.
func checkTelemetryPath(p string) error {
	u, err := url.Parse(p)
	src := flagSource("web.telemetry-path", fmt.Sprintf("%q", p))
	switch {
	case p == "":
		return fmt.Errorf("%s is empty: want a path such as /metrics", flagSource("web.telemetry-path", ""))
	case !strings.HasPrefix(p, "/"):
		return fmt.Errorf("%s must start with a slash: want a path such as /%s", src, p)
	case err != nil || u.Path != p || strings.ContainsAny(p, "{} \t\r\n"):
		return fmt.Errorf("%s is not a plain URL path: want something such as /metrics", src)
	}
	return nil
}

// checkListenAddress checks a --web.listen-address the way net.Listen will
// read it, vsock's left to the toolkit.
func checkListenAddress(addr string) error {
	if strings.HasPrefix(addr, "vsock://") {
		return nil
	}
	src := flagSource("web.listen-address", fmt.Sprintf("%q", addr))
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s: want host:port or :port, such as :10110 or 127.0.0.1:10110 (%w)", src, err)
	}
	// A service name (":http") is looked up in /etc/services: no deadline.
	if _, err := net.DefaultResolver.LookupPort(context.Background(), "tcp", port); err != nil {
		return fmt.Errorf("%s: %q is not a port: want a number from 0 to 65535, such as :10110", src, port)
	}
	return nil
}
