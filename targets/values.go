// SPDX-License-Identifier: Apache-2.0

package targets

import (
	"errors"
	"fmt"
	"math"
	"net"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/units"
	commonconfig "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"
)

// scalar is a setting of one value of type T at p. A flag and the targets'
// file both give it text, so that both say the same of a bad one: want,
// what would parse. check says whether the value can work.
type scalar[T any] struct {
	p     *T
	parse func(string) (T, error)
	want  string
	check func(T) error
}

func (v scalar[T]) Set(s string) error {
	x, err := v.parse(s)
	if err != nil {
		return errors.New(v.want)
	}
	*v.p = x
	return nil
}

func (v scalar[T]) String() string { return fmt.Sprint(*v.p) }

func (v scalar[T]) Check() error { return v.check(*v.p) }

func always[T any](T) error { return nil }

// IsBoolFlag tells kingpin that a boolean flag needs no value.
func (v scalar[T]) IsBoolFlag() bool { _, ok := any(v.p).(*bool); return ok }

func text(p *string, check func(string) error) scalar[string] {
	return scalar[string]{p, func(s string) (string, error) { return s, nil }, "", check}
}

func notEmpty(s string) error {
	if s == "" {
		return errors.New("is empty: want a name, such as the default")
	}
	return nil
}

func duration(p *time.Duration, least time.Duration, want string) Value {
	return scalar[time.Duration]{p, parseDuration, "want a duration with a unit, such as 10s or 1m30s", atLeast(least, want)}
}

func parseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	d, err := model.ParseDuration(s) // Prometheus' own: 1d, 2w
	return time.Duration(d), err
}

func whole(p *int, least int, want string) Value {
	return scalar[int]{p, strconv.Atoi, "want a whole number", atLeast(least, want)}
}

func size(p *units.Base2Bytes, want string) Value {
	return scalar[units.Base2Bytes]{p, units.ParseBase2Bytes, "want a size with a unit, such as 16MiB or 512KiB", atLeast[units.Base2Bytes](1, want)}
}

func degrees(p *float64) Value {
	return scalar[float64]{p, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }, "want a number", func(g float64) error {
		if !(g >= 1 && g <= 90) { // written so that NaN fails too
			return errors.New("want a cell size from 1 to 90 degrees (below 1°, the cells on Earth would be too many to count in bounded memory)")
		}
		return nil
	}}
}

func flag(p *bool) Value { return scalar[bool]{p, parseBool, "want true or false", always[bool]} }

// parseBool reads what a flag and YAML 1.1 call true and false.
func parseBool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, strconv.ErrSyntax
}

func atLeast[T int | time.Duration | units.Base2Bytes](least T, want string) func(T) error {
	return func(v T) error {
		if v < least {
			return errors.New("want " + want)
		}
		return nil
	}
}

// apiURL is a base address; it shows without a password.
type apiURL struct{ scalar[string] }

func (v apiURL) String() string { return displayURL(*v.p) }

func checkAPIURL(u string) error {
	if u == "" { // required or not is the caller's to say: --demo has none
		return nil
	}
	_, err := parseAPIURL(u)
	return err
}

// collectorFlag is one --collector.<group> flag.
type collectorFlag struct {
	s     *Settings
	group string
}

func (v collectorFlag) Set(s string) error {
	var on bool
	if err := flag(&on).Set(s); err != nil {
		return err
	}
	if v.s.Collectors == nil {
		v.s.Collectors = map[string]bool{}
	}
	v.s.Collectors[v.group] = on
	return nil
}

func (v collectorFlag) String() string   { return strconv.FormatBool(v.s.Collectors[v.group]) }
func (v collectorFlag) Check() error     { return nil }
func (v collectorFlag) IsBoolFlag() bool { return true }

// collectors is the file's map of groups: it overrides the groups it
// names and leaves the others as the flags set them. Like tlsValue, it has
// no flag, and decode gives it the file's map, never a text.
type collectors struct{ s *Settings }

func (*collectors) Set(string) error { return errors.New("want a map") }
func (*collectors) String() string   { return "" }

func (v *collectors) Check() error {
	for g := range v.s.Collectors {
		if !slices.Contains(groups(), g) {
			return fmt.Errorf("no collector %q: want one of %s%s", g, strings.Join(groups(), ", "), nearest(g, groups()))
		}
	}
	return nil
}

func (v *collectors) UnmarshalYAML(unmarshal func(any) error) error {
	var m map[string]bool
	if err := unmarshal(&m); err != nil {
		return errors.New("want a map of collectors to true or false, such as {briefings: false}")
	}
	for g, on := range m {
		_ = collectorFlag{v.s, g}.Set(strconv.FormatBool(on)) // a bool's text always parses
	}
	return nil
}

// tlsValue is prometheus/common's tls_config, as Prometheus reads it.
type tlsValue struct{ p *commonconfig.TLSConfig }

func (*tlsValue) Set(string) error { return errors.New("want a map") }
func (*tlsValue) String() string   { return "" }

func (v *tlsValue) Check() error {
	if (v.p.CertFile == "") != (v.p.KeyFile == "") && v.p.Cert == "" && v.p.Key == "" {
		return nil // Settings.Validate says which flags or fields go together
	}
	return v.p.Validate()
}

// UnmarshalYAML replaces the TLS settings whole (never mixed with the
// flags'), naming an unknown field with its nearest known one.
func (v *tlsValue) UnmarshalYAML(unmarshal func(any) error) error {
	var fields map[string]any
	if err := unmarshal(&fields); err != nil {
		return errors.New("want a map of TLS settings, such as {ca_file: ca.pem}")
	}
	var known []string
	for f := range reflect.TypeFor[commonconfig.TLSConfig]().Fields() {
		if n, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); n != "" && n != "-" {
			known = append(known, n)
		}
	}
	for f := range fields {
		if !slices.Contains(known, f) {
			return fmt.Errorf("unknown field %q%s", f, nearest(f, known))
		}
	}
	var c commonconfig.TLSConfig // the flags' stay whole should it not decode
	if err := unmarshal(&c); err != nil {
		return err
	}
	*v.p = c
	return nil
}

// parseAPIURL checks a base address as the flags and the file take it,
// leaving a trailing /v1 to New.
func parseAPIURL(raw string) (*url.URL, error) {
	const example = "https://api.example.com"
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Scheme == "" || u.Host == "" || u.Opaque != "":
		return nil, fmt.Errorf("not an absolute URL: want the API's base address with scheme and host, such as %s%s", example, schemeHint(raw))
	case u.Scheme != "http" && u.Scheme != "https":
		return nil, fmt.Errorf("the scheme must be http or https, such as %s", example)
	case u.RawQuery != "" || u.Fragment != "":
		return nil, errors.New("a base address has no query or fragment; the exporter adds its own paths and parameters")
	case strings.ContainsAny(u.Path, " \t"):
		return nil, errors.New("a space in the path: write it as %20 if the API's path really holds one")
	case strings.HasSuffix(u.Host, ":"):
		return nil, errors.New("the port after the colon is missing")
	}
	if n, err := strconv.Atoi(u.Port()); u.Port() != "" && (err != nil || n < 1 || n > math.MaxUint16) {
		return nil, fmt.Errorf("port %q: want a number from 1 to 65535", u.Port())
	}
	return u, nil
}

// schemeHint suggests a scheme for an address written without one: https,
// or first plain http for a loopback address or a port such as 8080. An
// address with a user and password gets none: it would repeat the password.
func schemeHint(raw string) string {
	if strings.Contains(raw, "://") || strings.ContainsAny(raw, " \t@") {
		return ""
	}
	addr := strings.TrimLeft(raw, "/")
	if u, err := url.Parse("http://" + addr); err == nil && (isLoopback(u.Hostname()) || slices.Contains([]string{"80", "8080", "8000"}, u.Port())) {
		return fmt.Sprintf(" (did you mean http://%s, or https://%s if it speaks TLS?)", addr, addr)
	}
	return fmt.Sprintf(" (did you mean https://%s, or http://%s if it speaks only plain HTTP?)", addr, addr)
}

// displayURL shows a URL as written but without a password: Redacted's
// form, or, when it does not parse with a user, nothing up to the last @
// (user:password@host without a scheme parses the user as its scheme).
func displayURL(raw string) string {
	if !strings.Contains(raw, "@") {
		return raw
	}
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		return u.Redacted()
	}
	return "<redacted>" + raw[strings.LastIndex(raw, "@"):]
}

// isLoopback reports whether host names this machine.
func isLoopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
}
