package main

import (
	"fmt"
	stdlog "log"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/common/promslog"
	sloggokit "github.com/tjhop/slog-gokit"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// newLogger gives our lines the keys, in the order, that the slog bridge
// writes (level, caller, time, msg), so every line, the toolkit's included,
// looks alike; the toolkit gets the undecorated logger through the bridge,
// which adds them itself. Every line, whatever its source and level, is
// redacted of every key keys holds on its way out (see redactingLogger).
func newLogger(cfg *promslog.Config, keys *redact.Redactor) (log.Logger, *slog.Logger) {
	base := log.NewLogfmtLogger(log.NewSyncWriter(os.Stderr))
	if cfg.Format.String() == "json" {
		base = log.NewJSONLogger(log.NewSyncWriter(os.Stderr))
	}
	base = redactingLogger{next: base, keys: keys}
	allow := level.Allow(level.ParseDefault(cfg.Level.String(), level.InfoValue()))
	logger := log.With(level.NewFilter(base, allow), "caller", log.DefaultCaller, "time", log.DefaultTimestampUTC)
	return logger, slog.New(sloggokit.NewGoKitHandler(base, cfg.Level.Level()))
}

// redactingLogger is the last step of every log line: each value but a
// number is printed as text (bytes as text, anything else as fmt's %s
// prints it, bytes inside a value as text too) and loses every piece of a
// key the process holds, as our own code writes it (Redactor.Plain; text
// from the API went through the door where it entered). Redacting here
// makes the guarantee hold for lines nobody thought of: a new debug line, a
// library's message.
type redactingLogger struct {
	next log.Logger
	keys *redact.Redactor
}

func (l redactingLogger) Log(keyvals ...any) error {
	out := make([]any, len(keyvals))
	for i, v := range keyvals {
		out[i] = l.redacted(v)
	}
	return l.next.Log(out...)
}

func (l redactingLogger) redacted(v any) any {
	switch v := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr, float32, float64:
		return v
	case time.Time:
		// The slog bridge hands the toolkit's time over as a time.Time,
		// whose String form ("2026-11-25 03:05:02.98 +0000 UTC m=+0.004")
		// differs from ours: every line's time reads alike, RFC 3339.
		return v.UTC().Format(time.RFC3339Nano)
	case slog.Value:
		// The slog bridge hands over what is not a string as it is: what
		// it holds is redacted as if it had been logged itself.
		return l.redacted(v.Resolve().Any())
	case string:
		return l.keys.Plain(v)
	case []byte:
		return l.keys.Plain(string(v))
	}
	// fmt recovers a panicking String or Error method (a nil pointer's),
	// so no value crashes the goroutine that logs.
	return l.keys.Plain(fmt.Sprintf("%s", v))
}

// routeStdlibLog sends what the standard library logs on its own (an
// http.Server's errors, which go to the standard logger when its ErrorLog
// is nil; net/http's "Unsolicited response received on idle HTTP channel")
// into our logger at warn, one line a message.
func routeStdlibLog(logger log.Logger) {
	stdlog.SetFlags(0)
	stdlog.SetPrefix("")
	stdlog.SetOutput(stdlibLog{level.Warn(logger)})
}

type stdlibLog struct{ log.Logger }

func (w stdlibLog) Write(p []byte) (int, error) {
	_ = w.Log("msg", withoutEchoedBytes(strings.TrimRight(string(p), "\n")), "source", "go standard library")
	return len(p), nil
}

// withoutEchoedBytes drops the bytes net/http quotes from an upstream that
// wrote on an idle connection ("… starting with %q; err=%v"): whatever it
// sent, so the line says that it happened and why, not what was sent.
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
