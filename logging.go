// SPDX-License-Identifier: Apache-2.0

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
// writes (level, caller, time, msg) to the toolkit's, which gets the
// undecorated logger, so that every line looks alike. What the standard
// library logs on its own (an http.Server's errors, as its ErrorLog is nil;
// net/http's "Unsolicited response") goes to ours at warn, one line a
// message: nothing logs around the keys' redaction.
func newLogger(cfg *promslog.Config, keys *redact.Redactor) (log.Logger, *slog.Logger) {
	base := log.NewLogfmtLogger(log.NewSyncWriter(os.Stderr))
	if cfg.Format.String() == "json" {
		base = log.NewJSONLogger(log.NewSyncWriter(os.Stderr))
	}
	base = redacting(base, keys)
	allow := level.Allow(level.ParseDefault(cfg.Level.String(), level.InfoValue()))
	logger := log.With(level.NewFilter(base, allow), "caller", log.DefaultCaller, "time", log.DefaultTimestampUTC)
	stdlog.SetFlags(0)
	stdlog.SetOutput(stdlibLog{level.Warn(logger)})
	return logger, slog.New(sloggokit.NewGoKitHandler(base, cfg.Level.Level()))
}

// redacting is the last step of every log line, whatever its source:
// each value but a number, printed as text, loses every piece of a key the
// process holds (Redactor.Redact), even in a line nobody thought of.
func redacting(next log.Logger, keys *redact.Redactor) log.Logger {
	return log.LoggerFunc(func(keyvals ...any) error {
		out := make([]any, len(keyvals))
		for i, v := range keyvals {
			out[i] = redacted(keys, v)
		}
		return next.Log(out...)
	})
}

func redacted(keys *redact.Redactor, v any) any {
	switch v := v.(type) {
	case nil, bool, int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64, uintptr, float32, float64:
		return v
	case time.Time:
		// The slog bridge hands the toolkit's time over as a time.Time,
		// whose String form is not ours.
		return v.UTC().Format(time.RFC3339Nano)
	case slog.Value:
		// What the slog bridge hands over is redacted as if logged itself.
		return redacted(keys, v.Resolve().Any())
	}
	// Strings, and bytes as text. fmt recovers a panicking String or Error
	// method (a nil pointer's), so no value crashes the goroutine that logs.
	return keys.Redact(fmt.Sprintf("%s", v))
}

type stdlibLog struct{ log.Logger }

func (w stdlibLog) Write(p []byte) (int, error) {
	_ = w.Log("msg", withoutEchoedBytes(strings.TrimRight(string(p), "\n")), "source", "go standard library")
	return len(p), nil
}

// withoutEchoedBytes drops the bytes net/http quotes from an upstream that
// wrote on an idle connection ("… starting with %q; err=%v").
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
