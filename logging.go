package main

import (
	"encoding"
	"encoding/json"
	"fmt"
	stdlog "log"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	sloggokit "github.com/tjhop/slog-gokit"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// newLogger gives our lines the keys, in the order, that the slog bridge
// writes (level, caller, time, msg), so every line, the toolkit's included,
// looks alike. Every line, whatever its source and level, is redacted of
// the keys in keys on its way out (see redactingLogger).
func newLogger(lvl, format string, keys redactor) (log.Logger, *slog.Logger, error) {
	var base log.Logger
	switch format {
	case "logfmt":
		base = log.NewLogfmtLogger(log.NewSyncWriter(os.Stderr))
	case "json":
		base = log.NewJSONLogger(log.NewSyncWriter(os.Stderr))
	default:
		return nil, nil, fmt.Errorf("--log.format=%q (GLOBAL_STABILITY_LOG_FORMAT): want logfmt or json", format)
	}
	base = redactingLogger{next: base, keys: keys}
	allow, slogLevel, err := parseLevel(lvl)
	if err != nil {
		return nil, nil, err
	}
	logger := log.With(level.NewFilter(base, allow), "caller", log.DefaultCaller, "time", log.DefaultTimestampUTC)
	return logger, newSlogLogger(base, slogLevel), nil
}

func parseLevel(s string) (level.Option, slog.Level, error) {
	switch s {
	case "debug":
		return level.AllowDebug(), slog.LevelDebug, nil
	case "info":
		return level.AllowInfo(), slog.LevelInfo, nil
	case "warn":
		return level.AllowWarn(), slog.LevelWarn, nil
	case "error":
		return level.AllowError(), slog.LevelError, nil
	}
	return nil, 0, fmt.Errorf("--log.level=%q (GLOBAL_STABILITY_LOG_LEVEL): want debug, info, warn or error", s)
}

// newSlogLogger hands the exporter toolkit the undecorated go-kit logger
// through the slog-gokit bridge, which adds level, caller and time itself.
func newSlogLogger(base log.Logger, lvl slog.Level) *slog.Logger {
	return slog.New(sloggokit.NewGoKitHandler(base, lvl))
}

// redactingLogger is the last step of every log line: each value but a
// number (a string, an error, anything with a String or MarshalText
// method, bytes, and anything else as JSON) loses every piece of an API
// key the process has sent before it is written.
// Redacting here rather than at each call site makes the guarantee hold for
// lines nobody thought of: a new debug line, a library's message.
type redactingLogger struct {
	next log.Logger
	keys redactor
}

// redactor removes keys from a text: a *redact.Rings of every target's
// key ring, or one *redact.Keyring.
type redactor interface{ Redact(string) string }

var (
	_ redactor = (*redact.Rings)(nil)
	_ redactor = (*redact.Keyring)(nil)
)

func (l redactingLogger) Log(keyvals ...any) error {
	out := make([]any, len(keyvals))
	for i, v := range keyvals {
		out[i] = l.redacted(v)
	}
	return l.next.Log(out...)
}

// redacted is v as the line prints it, without any piece of a key.
func (l redactingLogger) redacted(v any) any {
	switch v := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr, float32, float64:
		return v
	case string:
		return l.keys.Redact(v)
	case time.Time:
		// The slog bridge hands the toolkit's time over as a time.Time,
		// whose String form ("2026-11-25 03:05:02.98 +0000 UTC m=+0.004")
		// differs from ours: every line's time reads alike, RFC 3339.
		return v.UTC().Format(time.RFC3339Nano)
	case slog.Value:
		// The slog bridge hands over what is not a string as it is: what
		// it holds is redacted as if it had been logged itself.
		return l.redacted(v.Resolve().Any())
	case []byte:
		return l.keys.Redact(string(v))
	case error:
		return l.keys.Redact(fmt.Sprint(v)) // as v.Error(), but a nil pointer reads "<nil>", not a panic
	case fmt.Stringer:
		return l.keys.Redact(fmt.Sprint(v)) // as v.String(), as safely as an error
	case encoding.TextMarshaler:
		return l.keys.Redact(marshalText(v))
	}
	switch rv := reflect.ValueOf(v); rv.Kind() {
	case reflect.String: // a named string type: text, not a JSON string
		return l.keys.Redact(rv.String())
	case reflect.Slice:
		if rv.Type().Elem().Kind() == reflect.Uint8 { // named bytes (json.RawMessage): text, not base64
			return l.keys.Redact(string(rv.Bytes()))
		}
		return l.keys.Redact(marshalJSON(v))
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return v // a named number type
	default:
		// A header, a map, a struct: printed here, as JSON, and redacted
		// like text. fmt would print a []byte field as decimal numbers,
		// which no redaction reads; JSON writes it in base64, which it does.
		return l.keys.Redact(marshalJSON(v))
	}
}

// marshalJSON is v as encoding/json writes it (byte slices in base64, a
// cycle an error rather than a stack overflow), or what went wrong.
func marshalJSON(v any) (text string) {
	defer func() {
		if r := recover(); r != nil {
			text = fmt.Sprintf("%T: could not be printed", v)
		}
	}()
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a log line, not a page: & < > as they are
	if err := enc.Encode(v); err != nil {
		return fmt.Sprintf("%T: %v", v, err)
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// marshalText is v's text as logfmt prints it, or what went wrong: a nil
// pointer whose MarshalText dereferences it panics no logging goroutine.
func marshalText(v encoding.TextMarshaler) (text string) {
	defer func() {
		if r := recover(); r != nil {
			text = fmt.Sprintf("%T: MarshalText panicked", v)
		}
	}()
	b, err := v.MarshalText()
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// stdlibLog carries what the standard library logs on its own (an
// http.Server's errors; net/http's "Unsolicited response received on idle
// HTTP channel") into our logger at warn, one line per message.
type stdlibLog struct {
	logger log.Logger
}

func (w stdlibLog) Write(p []byte) (int, error) {
	msg := withoutEchoedBytes(strings.TrimRight(string(p), "\n"))
	_ = level.Warn(w.logger).Log("msg", msg, "source", "go standard library")
	return len(p), nil
}

// withoutEchoedBytes drops the bytes net/http quotes from an upstream that
// wrote on an idle connection ("… starting with %q; err=%v"): they are
// whatever the upstream sent, so the line says that it happened and why,
// not what was sent.
func withoutEchoedBytes(msg string) string {
	head, rest, found := strings.Cut(msg, " starting with ")
	if !found {
		return msg
	}
	msg = head + " (the bytes received are not logged)"
	if i := strings.LastIndex(rest, "; err="); i >= 0 {
		msg += rest[i:]
	}
	return msg
}

// routeStdlibLog sends the standard library's global logger through
// stdlibLog and returns a *log.Logger that does the same, for
// http.Server.ErrorLog.
func routeStdlibLog(logger log.Logger) *stdlog.Logger {
	w := stdlibLog{logger: logger}
	stdlog.SetFlags(0)
	stdlog.SetPrefix("")
	stdlog.SetOutput(w)
	return stdlog.New(w, "", 0)
}
