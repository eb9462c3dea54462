// Command global_stability_exporter exports the Global Stability
// Intelligence Service's scores, drilldowns, conflict events, briefings and
// summary freshness as Prometheus metrics, fetched fresh on every scrape.
package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/targets"
)

const exporterName = "global_stability_exporter"

func main() {
	fillInVersion()
	os.Exit(run(os.Args[1:]))
}

// run returns the process exit status: 1 for bad configuration or a
// listener that cannot start, 0 after a clean shutdown.
func run(args []string) int {
	app := kingpin.New(exporterName, "Prometheus exporter for the Global Stability Intelligence Service.")
	// Asked-for output goes to stdout, as Prometheus' own --help does, so
	// that --help | less works; errors go to stderr.
	app.UsageWriter(os.Stdout)
	app.ErrorWriter(os.Stderr)
	app.Version(version.Print(exporterName))
	app.HelpFlag.Short('h')
	f := registerFlags(app)
	var problems []error
	nameFlagErrors(app, &problems)
	args, argProblems := screenArgs(app, args)
	problems = append(problems, argProblems...)
	_, parseErr := app.Parse(args)

	// Every target's keys, from its build to its last probe: every log
	// line, page and text from the API is redacted of each of them.
	keys := redact.New()
	logger, slogger, err := newLogger(*f.logLevel, *f.logFormat, keys)
	if err != nil {
		problems = append(problems, err)
		logger, slogger, _ = newLogger("info", "logfmt", keys) // to say so
	}
	if parseErr != nil {
		// What kingpin still refuses after screenArgs (a flag missing its
		// value at the end): what follows it was not read.
		problems = append(problems, fmt.Errorf("%w (see --help)", parseErr))
	} else {
		problems = append(problems, f.validate()...)
	}
	// Every problem at once, each on a line of its own in the log's format.
	if len(problems) > 0 {
		for _, err := range problems {
			level.Error(logger).Log("msg", "bad configuration; see --help", "err", err)
		}
		return 1
	}
	level.Info(logger).Log("msg", "starting "+exporterName, "version", version.Info(), "build_context", version.BuildContext())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The demo simulator outlives the signal: scrapes in flight at shutdown
	// still need it. It stops when run returns.
	demoCtx, stopDemo := context.WithCancel(context.Background())
	defer stopDemo()
	// Nothing may log around our logger, and so around the key's redaction.
	errorLog := routeStdlibLog(logger)

	env := f.newEnv(targets.Env{Logger: logger, Keys: keys})
	sc, err := f.scrape(demoCtx, env)
	if err != nil {
		level.Error(logger).Log("msg", "bad configuration", "err", err)
		return 1
	}
	longLived := prometheus.NewRegistry()
	longLived.MustRegister(
		versioncollector.NewCollector(exporterName),
		demoGauge(*f.demo),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		env.Scrapes,
	)
	longLived.MustRegister(env.API.Collectors()...)
	mux, err := f.routes(sc, longLived)
	if err != nil {
		level.Error(logger).Log("msg", "cannot build the landing page", "err", err)
		return 1
	}
	if sc.set != nil && *f.configFile != "" {
		longLived.MustRegister(sc.set.Collectors()...)
		reloadOnHangUp(ctx, sc.set)
	}

	srv := &http.Server{
		Handler:           mux,
		ErrorLog:          errorLog,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- web.ListenAndServe(srv, f.web, slogger) }()

	select {
	case err := <-serveErr:
		level.Error(logger).Log("msg", "cannot serve", "err", err, "hint", serveHint(err, f.envar))
		return 1
	case <-ctx.Done():
	}
	// Let scrapes in flight finish; they are bounded by their own deadlines.
	level.Info(logger).Log("msg", "shutting down, finishing scrapes in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), *f.apiTimeout+5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		level.Error(logger).Log("msg", "shutdown did not finish cleanly", "err", err)
		return 1
	}
	if err := <-serveErr; err != nil && !errors.Is(err, http.ErrServerClosed) {
		level.Error(logger).Log("msg", "server stopped", "err", err)
	}
	level.Info(logger).Log("msg", "shut down cleanly")
	return 0
}

// demoGauge exports global_stability_exporter_demo: 1 when --demo feeds
// made-up data, 0 against a real API, so a query or alert can tell.
func demoGauge(demo bool) prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "global_stability_exporter_demo",
		Help: "1 when the exporter runs with --demo: every global_stability_* value then comes from a built-in simulator and is made up. 0 against a real API.",
	})
	if demo {
		g.Set(1)
	}
	return g
}

// serveHint names the setting behind a listener that cannot start: an
// address in use or not ours to take is --web.listen-address's; anything
// else comes from --web.config.file (TLS files, basic auth).
func serveHint(err error, envar func(string) string) string {
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "another process listens on that address (another exporter?): stop it, or choose another port with " + flagSource("web.listen-address", envar("web.listen-address"), "")
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EADDRNOTAVAIL):
		return "this process may not listen there (a port below 1024, or an address not on this machine): choose another with " + flagSource("web.listen-address", envar("web.listen-address"), "")
	}
	return "check " + flagSource("web.config.file", envar("web.config.file"), "") + " and the files it names, and " + flagSource("web.listen-address", envar("web.listen-address"), "")
}
