// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"slices"
	"strings"

	"github.com/alecthomas/kingpin/v2"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/targets"
)

// parseArgs parses args into app's flags and returns every problem at once
// (parsed: kingpin set the flags). kingpin stops at the first word it
// cannot take (an unknown flag, an argument), so each such word is noted
// and left out in turn; namedValue notes a value that does not parse. A
// boolean flag's --flag=value is read as its variable's value is.
func parseArgs(app *kingpin.Application, args []string) (problems []error, parsed bool) {
	for _, f := range app.Model().Flags {
		if _, repeatable := f.Value.(interface{ IsCumulative() bool }); !repeatable && f.Name != "help" && f.Name != "version" {
			app.GetFlag(f.Name).SetValue(namedValue{f, &problems})
		}
	}
	words := slices.Clone(args)
	for i, arg := range words {
		name, value, hasValue := strings.Cut(strings.TrimPrefix(arg, "--"), "=")
		if f := app.GetFlag(name); hasValue && f != nil && f.Model().IsBoolFlag() && strings.HasPrefix(arg, "--") {
			_ = f.Model().Value.Set(value) // as kingpin would set --flag or --no-flag, a problem noted
			if words[i] = "--no-" + name; f.Model().Value.String() == "true" {
				words[i] = "--" + name
			}
		}
	}
	for {
		ctx, err := app.ParseContext(words)
		if err == nil {
			break
		}
		// kingpin's message (unknown long flag '--api.timout'), and the word it stopped at
		msg, i := redact.Readable(err.Error()), ctx.Peek().Index-1
		if strings.HasPrefix(err.Error(), "unexpected ") && i < len(words) {
			msg = fmt.Sprintf("%q: the exporter takes no arguments, only flags (a value after a space belongs to the flag before it; --no-… takes none)", redact.Readable(words[i]))
		}
		problems = append(problems, fmt.Errorf("%s (see --help)", msg))
		if i >= len(words) || strings.HasPrefix(msg, "expected argument") { // the words after a flag missing its value are not what they seem
			return problems, false
		}
		words = slices.Delete(words, i, i+1)
	}
	if _, err := app.Parse(words); err != nil {
		return append(problems, fmt.Errorf("%s (see --help)", redact.Readable(err.Error()))), false
	}
	return problems, true
}

// namedValue wraps a flag's value (its model's) so that a value that does
// not parse goes to problems, named with its flag and variable, rather
// than back to kingpin, which would stop.
type namedValue struct {
	*kingpin.FlagModel
	problems *[]error
}

func (v namedValue) Set(s string) error {
	if err := v.Value.Set(s); err != nil {
		*v.problems = append(*v.problems, fmt.Errorf("%s: %s", flagSource(v.Name, s), redact.Readable(err.Error())))
	}
	return nil
}

// flagSource names a flag, with its value if any, and its variable:
// --api.max-pages="0" (GLOBAL_STABILITY_API_MAX_PAGES).
func flagSource(name, value string) string {
	return "--" + strings.TrimSuffix(name+"="+targets.Quote(value), `=""`) + " (" + envar(name) + ")"
}

func nameFlag(st targets.Setting) string { return flagSource(st.Flag, st.Value.String()) }

// validate checks what parsed but cannot work, alone or together; it also
// reads the flags' one account's key (--api.key-file or the environment),
// or keeps the targets' file's targets as read, to be served as checked.
func validate(c *config) []error {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	// The targets come from the demo, a targets' file or the flags: a stray
	// GLOBAL_STABILITY_DEMO=true must not feed real alerts made-up data.
	account := c.defaults.APIURL != "" || c.defaults.KeyFile != "" || os.Getenv(targets.KeyEnv) != ""
	if c.demo && (account || c.configFile != "") || c.configFile != "" && account {
		bad("%s, %s and the flags' account (%s, %s, %s) exclude one another: --demo scrapes made-up data, and a targets' file holds each target's URL and key file; keep one",
			flagSource("demo", ""), flagSource("config.file", ""), flagSource("api.url", ""), flagSource("api.key-file", ""), targets.KeyEnv)
	}
	switch {
	case c.configFile != "":
		var err error
		if c.targets, err = targets.Load(c.configFile, c.defaults); err != nil {
			for _, err := range err.(interface{ Unwrap() []error }).Unwrap() {
				bad("%s: %v", flagSource("config.file", c.configFile), err)
			}
		}
	case !c.demo:
		if c.defaults.APIURL == "" {
			bad("%s is required: the API's base address; or --config.file for several accounts, or --demo to try the exporter on made-up data", flagSource("api.url", ""))
		}
		_, envSet := os.LookupEnv(targets.KeyEnv)
		key, from, err := targets.KeySource(c.defaults.KeyFile)
		switch keyFile := flagSource("api.key-file", ""); {
		case c.defaults.KeyFile != "" == envSet:
			bad("%s or %s: want one of them, a file holding the API key or the key itself", keyFile, targets.KeyEnv)
		case err != nil && c.defaults.KeyFile != "":
			bad("%s: %v", keyFile, err)
		default:
			c.defaults.Key, c.defaults.KeyFrom = key, from
			problems = append(problems, err)
		}
	}
	problems = append(problems, c.defaults.Validate(nameFlag)...)
	if !strings.HasPrefix(c.metricsPath, "/") || strings.ContainsAny(c.metricsPath, "{}?# \t\r\n") { // http.ServeMux's one path
		bad("%s: want a plain URL path, such as /metrics", flagSource("web.telemetry-path", c.metricsPath))
	}
	for _, addr := range *c.web.WebListenAddresses { // as net.Listen reads it (a service name from /etc/services), vsock's the toolkit's
		_, port, err := net.SplitHostPort(addr)
		if _, e := net.DefaultResolver.LookupPort(context.Background(), "tcp", port); !strings.HasPrefix(addr, "vsock://") && (err != nil || e != nil) {
			bad("%s: want host:port or :port, the port a number from 0 to 65535, such as :10110", flagSource("web.listen-address", addr))
		}
	}
	if path := *c.web.WebConfigFile; path != "" {
		if err := web.Validate(path); err != nil {
			bad("%s: %s", flagSource("web.config.file", path), redact.Readable(err.Error()))
		}
	}
	return slices.DeleteFunc(problems, func(err error) bool { return err == nil })
}
