// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/common/promslog"

	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/internal/testutil/leakcheck"
)

type stringer string

func (s stringer) String() string { return string(s) }

// decimalBytes is a byte slice as fmt prints it: [123 34 107 …].
var decimalBytes = regexp.MustCompile(`\[\d{1,3}(?: \d{1,3})+\]`)

// bytesFromDecimals is every byte slice fmt printed in s, as the bytes.
func bytesFromDecimals(s string) string {
	var out []byte
	for _, list := range decimalBytes.FindAllString(s, -1) {
		for _, d := range strings.Fields(strings.Trim(list, "[]")) {
			n, _ := strconv.Atoi(d)
			out = append(out, byte(n))
		}
		out = append(out, 0)
	}
	return string(out)
}

// upstreamReply is what a debug line might log whole.
type upstreamReply struct {
	Status int
	Body   []byte
}

type rawBody []byte

type namedString string

// textOnly is text only through encoding.TextMarshaler, as logfmt and
// encoding/json print it.
type textOnly string

func (s textOnly) MarshalText() ([]byte, error) { return []byte(s), nil }

// redactingLoggerTo is the redacting logger over go-kit's logger of format,
// writing to out.
func redactingLoggerTo(out *bytes.Buffer, format string, keys *redact.Redactor) log.Logger {
	if format == "json" {
		return redacting(log.NewJSONLogger(out), keys)
	}
	return redacting(log.NewLogfmtLogger(out), keys)
}

// TestEveryLogLineIsRedacted: whatever a line carries a key in (a string,
// an error, a Stringer, bytes, a header, a map, a struct, a TextMarshaler,
// an slog value), and in whichever form our own code writes it (as it is,
// in either case, Go-quoted, JSON-escaped), in either format, every key
// the process holds is gone on the way out, another target's as well as
// the logging target's; numbers pass unchanged.
func TestEveryLogLineIsRedacted(t *testing.T) {
	const key, other = "Zq8LmN3pR5sT7vW9xY2aB4cD6eF", `Ot"h\er-kéy/0123+<&>`
	keys := redact.New()
	keys.NewRing().Remember(key)
	keys.NewRing().Remember(other)
	otherJSON, _ := json.Marshal(other)
	for _, format := range []string{"logfmt", "json"} {
		var out bytes.Buffer
		logger := redactingLoggerTo(&out, format, keys)
		_ = logger.Log(
			"msg", "lower "+strings.ToLower(key),
			"err", errors.New("401: "+key[3:20]),
			"stringer", stringer("x"+key+"y"),
			"bytes", []byte(key),
			"header", http.Header{"Authorization": {"Bearer " + key}},
			"map", map[string]any{"key": key},
			"struct", struct{ Key string }{key},
			"pointer", &struct{ Key string }{key},
			"text", textOnly(key),
			// Bytes inside a value: fmt would print them as decimal
			// numbers, which nothing reads back.
			"reply", upstreamReply{Status: 401, Body: []byte(`{"error":"bad key ` + key + `"}`)},
			"raw", json.RawMessage(`{"key":"`+key+`"}`),
			"named", rawBody(key),
			"namedString", namedString(key),
			"bodies", map[string][]byte{"a": []byte(key)},
			"slog", slog.AnyValue([]byte(key)),
			"slogStruct", slog.AnyValue(upstreamReply{Body: []byte(key)}),
			"quoted", fmt.Sprintf("%q and %+q", other, other),
			"json", `{"key":`+string(otherJSON)+`}`,
			"stdlib", "Unsolicited response received on idle HTTP channel starting with \"Bearer "+key[:20],
			"key_"+key, "a key in a name",
			"count", 42,
		)
		for _, k := range []string{key, other} {
			if piece := leakcheck.Find(out.String(), k); piece != "" {
				t.Errorf("%s: the line shows %q: %s", format, piece, out.String())
			}
		}
		if piece := leakcheck.Find(bytesFromDecimals(out.String()), key); piece != "" {
			t.Errorf("%s: the line shows %q as decimal bytes: %s", format, piece, out.String())
		}
		if !strings.Contains(out.String(), "42") {
			t.Errorf("%s: a number was lost: %s", format, out.String())
		}
		if format == "json" {
			var line map[string]any
			if err := json.Unmarshal(out.Bytes(), &line); err != nil {
				t.Fatal(err)
			}
			// Named text types print as text, not as a JSON string or base64.
			for _, k := range []string{"named", "namedString", "raw"} {
				if s, _ := line[k].(string); !strings.HasPrefix(s, "<redacted>") && !strings.HasPrefix(s, `{"key":"<redacted>`) {
					t.Errorf("%s printed as %q", k, line[k])
				}
			}
		}
	}
}

// TestEveryLoggerOfTheProcessRedacts: each way a line reaches the log (our
// logger, the toolkit's slog logger, the standard library's log package)
// ends in the redacting step, in either format: a line nobody thought of,
// quoting a key, shows none of it.
func TestEveryLoggerOfTheProcessRedacts(t *testing.T) {
	const key = "Zq8LmN3pR5sT7vW9xY2aB4cD6eF"
	keys := redact.New()
	keys.NewRing().Remember(key)
	t.Cleanup(func() { stdlog.SetOutput(os.Stderr); stdlog.SetFlags(stdlog.LstdFlags) })
	for _, format := range []string{"logfmt", "json"} {
		cfg := promslog.Config{Level: promslog.NewLevel(), Format: promslog.NewFormat()}
		if err := cfg.Format.Set(format); err != nil {
			t.Fatal(err)
		}
		r, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		stderr := os.Stderr
		os.Stderr = w // where newLogger writes
		logger, slogger := newLogger(&cfg, keys)
		os.Stderr = stderr
		sources := map[string]func(msg string){
			"go-kit": func(msg string) { _ = level.Info(logger).Log("msg", msg, "echo", "bad key "+key) },
			"slog":   func(msg string) { slogger.Info(msg, "echo", "bad key "+key) },
			"stdlib": func(msg string) { stdlog.Print(msg + ": bad key " + key) },
		}
		for name, logLine := range sources {
			logLine("a line from " + name)
		}
		_ = w.Close()
		out, err := io.ReadAll(r)
		if err != nil {
			t.Fatal(err)
		}
		for name := range sources {
			if !strings.Contains(string(out), "a line from "+name) {
				t.Errorf("%s: the line from %s was not written: %s", format, name, out)
			}
		}
		if piece := leakcheck.Find(string(out), key); piece != "" {
			t.Errorf("%s: the log shows %q: %s", format, piece, out)
		}
	}
}

type textPointer struct{ text string }

func (p *textPointer) MarshalText() ([]byte, error) { return []byte(p.text), nil }

type errPointer struct{ msg string }

func (e *errPointer) Error() string { return e.msg }

// TestNoValueCrashesALogLine: a nil pointer whose String, Error or
// MarshalText method dereferences it is logged, as go-kit's own logfmt
// would log it, rather than panicking the goroutine that logs (a scrape's).
func TestNoValueCrashesALogLine(t *testing.T) {
	keys := redact.New()
	keys.NewRing().Remember("Zq8LmN3pR5sT7vW9xY2aB4cD6eF")
	for _, format := range []string{"logfmt", "json"} {
		var out bytes.Buffer
		logger := redactingLoggerTo(&out, format, keys)
		var nilURL *url.URL
		var nilErr *errPointer
		var nilText *textPointer
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Fatalf("%s: logging nil values panicked: %v", format, r)
				}
			}()
			if err := logger.Log("url", nilURL, "err", nilErr, "text", nilText, "msg", "after"); err != nil {
				t.Fatalf("%s: %v", format, err)
			}
		}()
		if !strings.Contains(out.String(), "after") {
			t.Errorf("%s: the line was not written: %q", format, out.String())
		}
	}
}

func TestUnsolicitedResponseBytesAreNotLogged(t *testing.T) {
	line := fmt.Sprintf("Unsolicited response received on idle HTTP channel starting with %q; err=<nil>", "HTTP/1.1 200 OK\r\nX-Secret: abc")
	got := withoutEchoedBytes(line)
	if strings.Contains(got, "X-Secret") || !strings.Contains(got, "Unsolicited response received on idle HTTP channel") || !strings.HasSuffix(got, "; err=<nil>") {
		t.Errorf("withoutEchoedBytes(%q) = %q", line, got)
	}
	if other := "http: TLS handshake error from 1.2.3.4:5: EOF"; withoutEchoedBytes(other) != other {
		t.Errorf("another line changed: %q", withoutEchoedBytes(other))
	}
}
