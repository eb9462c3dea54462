package main

import (
	"fmt"
	stdlog "log"
	"log/slog"
	"os"
	"strings"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	sloggokit "github.com/tjhop/slog-gokit"
)

// newLogger gives our lines the keys, in the order, that the slog bridge
// writes (level, caller, time, msg), so every line, the toolkit's included,
// looks alike.
func newLogger(lvl, format string) (log.Logger, *slog.Logger, error) {
	var base log.Logger
	switch format {
	case "logfmt":
		base = log.NewLogfmtLogger(log.NewSyncWriter(os.Stderr))
	case "json":
		base = log.NewJSONLogger(log.NewSyncWriter(os.Stderr))
	default:
		return nil, nil, fmt.Errorf("--log.format=%q: want logfmt or json", format)
	}
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
	return nil, 0, fmt.Errorf("--log.level=%q: want debug, info, warn or error", s)
}

// newSlogLogger hands the exporter toolkit the undecorated go-kit logger
// through the slog-gokit bridge, which adds level, caller and time itself.
func newSlogLogger(base log.Logger, lvl slog.Level) *slog.Logger {
	return slog.New(sloggokit.NewGoKitHandler(base, lvl))
}

// stdlibLog carries what the standard library logs on its own (net/http's
// "Unsolicited response received on idle HTTP channel", which quotes bytes
// an upstream sent; an http.Server's errors) into our logger at warn, one
// line per message, with every API key the client has sent redacted.
type stdlibLog struct {
	logger log.Logger
	redact func(string) string
}

func (w stdlibLog) Write(p []byte) (int, error) {
	msg := w.redact(strings.TrimRight(string(p), "\n"))
	_ = level.Warn(w.logger).Log("msg", msg, "source", "go standard library")
	return len(p), nil
}

// routeStdlibLog sends the standard library's global logger through
// stdlibLog and returns a *log.Logger that does the same, for
// http.Server.ErrorLog.
func routeStdlibLog(logger log.Logger, redact func(string) string) *stdlog.Logger {
	w := stdlibLog{logger: logger, redact: redact}
	stdlog.SetFlags(0)
	stdlog.SetPrefix("")
	stdlog.SetOutput(w)
	return stdlog.New(w, "", 0)
}
