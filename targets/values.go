// SPDX-License-Identifier: Apache-2.0

package targets

import (
	"errors"
	"flag"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/alecthomas/units"
	"github.com/prometheus/common/model"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// kind is a value of type T at p, read by parse, its kind's one reader of
// text whoever gives it (Load hands it the file's text as written, never
// YAML's reading of it: 020 as 16, ~ as nothing); what says what parse
// reads, and check, if any, refuses a value that cannot work.
type kind[T any] struct {
	p     *T
	parse func(string) (T, error)
	what  string
	check func(T) error
}

func (k kind[T]) Set(text string) error {
	v, err := k.parse(text)
	if err != nil {
		return errors.New("want " + k.what)
	} else if k.check != nil && k.check(v) != nil {
		return k.check(v)
	}
	*k.p = v // a refused value leaves the one before
	return nil
}

func (k kind[T]) String() string { return fmt.Sprint(*k.p) }

// IsBoolFlag tells kingpin that a boolean flag needs no value.
func (k kind[T]) IsBoolFlag() bool { _, ok := any(k.p).(*bool); return ok }

// Integer reads a whole number in decimal: 020 is twenty; 0x10, 1_000,
// 5.0 and 1e3 are refused.
func Integer(p *int, least int, want string) flag.Value {
	return kind[int]{p, strconv.Atoi, "a whole number, such as 10", within(least, math.MaxInt, want)}
}

// Duration reads a duration with its unit, as Go (1m30s) or Prometheus
// (1d) writes one.
func Duration(p *time.Duration, least time.Duration, want string) flag.Value {
	return kind[time.Duration]{p, func(s string) (time.Duration, error) {
		d, err := model.ParseDuration(s)
		if goDuration, goErr := time.ParseDuration(s); goErr == nil {
			return goDuration, nil
		}
		return time.Duration(d), err
	}, "a duration with a unit, such as 10s or 1m30s", within(least, math.MaxInt64, want)}
}

func size(p *units.Base2Bytes, want string) flag.Value {
	return kind[units.Base2Bytes]{p, units.ParseBase2Bytes, "a size with a unit, such as 16MiB or 512KiB", within[units.Base2Bytes](1, math.MaxInt64, want)}
}

// Boolean reads true or false as Go does (strconv.ParseBool: 1 and 0, t
// and f too), as kingpin reads the toolkit's boolean flags.
func Boolean(p *bool) flag.Value {
	return kind[bool]{p: p, parse: strconv.ParseBool, what: "true or false"}
}

func degrees(p *float64) flag.Value {
	return kind[float64]{p, func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }, "a number of degrees, such as 5",
		within(1.0, 90, "a cell size from 1 to 90 degrees (below 1°, the cells on Earth would be too many to count in bounded memory)")}
}

// within refuses a value below least or above most, and NaN.
func within[T int | float64 | time.Duration | units.Base2Bytes](least, most T, want string) func(T) error {
	return func(v T) error {
		if v >= least && v <= most { // NaN is neither
			return nil
		}
		return errors.New("want " + want)
	}
}

// text is a name, a path or a URL, as written.
func text(p *string, check func(string) error) flag.Value {
	return kind[string]{p, func(s string) (string, error) { return s, nil }, "", check}
}

func notEmpty(s string) error {
	if s == "" {
		return errors.New("is empty: want a name, such as the default")
	}
	return nil
}

// collectorFlag is one --collector.<group> flag, and that group in the
// file's collectors map.
type collectorFlag struct {
	s     *Settings
	group string
}

func (v collectorFlag) Set(text string) error {
	var on bool
	err := Boolean(&on).Set(text)
	if v.s.Collectors == nil {
		v.s.Collectors = map[string]bool{}
	}
	v.s.Collectors[v.group] = on
	return err
}

func (v collectorFlag) String() string   { return strconv.FormatBool(v.s.Collectors[v.group]) }
func (v collectorFlag) IsBoolFlag() bool { return true }

// parseAPIURL reads a base address, leaving a trailing /v1 to New.
func parseAPIURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https":
		return nil, errors.New("want the API's base address: http:// or https:// and a host, such as https://api.example.com")
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(u.Path, " \t"):
		return nil, errors.New("want a base address without a query, a fragment or a space; the exporter adds its own paths and parameters")
	}
	if n, err := strconv.Atoi(u.Port()); strings.HasSuffix(u.Host, ":") || u.Port() != "" && (err != nil || n < 1 || n > 65535) {
		return nil, errors.New("want a port from 1 to 65535 after the colon")
	}
	return u, nil
}

// Quote is a value as a message shows it: quoted, without what comes
// before an @ (a URL's password), withheld where it may be a key.
func Quote(text string) string {
	if i := strings.LastIndex(text, "@"); i >= 0 {
		text = "<redacted>" + text[i:]
	}
	return strconv.Quote(redact.Readable(text))
}
