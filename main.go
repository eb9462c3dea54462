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

	"github.com/global-stability/global_stability_exporter/collector"
)

const exporterName = "global_stability_exporter"

func main() {
	os.Exit(run(os.Args[1:]))
}

// run returns the process exit status: 1 for bad configuration or a
// listener that cannot start, 0 after a clean shutdown.
func run(args []string) int {
	app := kingpin.New(exporterName, "Prometheus exporter for the Global Stability Intelligence Service.")
	app.Version(version.Print(exporterName))
	app.HelpFlag.Short('h')
	f := registerFlags(app)
	if _, err := app.Parse(args); err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v; see --help\n", exporterName, err)
		return 1
	}

	logger, slogger, err := newLogger(*f.logLevel, *f.logFormat)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: error: %v\n", exporterName, err)
		return 1
	}
	level.Info(logger).Log("msg", "starting "+exporterName, "version", version.Info(), "build_context", version.BuildContext())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// The demo simulator outlives the signal: scrapes in flight at shutdown
	// still need it. It stops when run returns.
	demoCtx, stopDemo := context.WithCancel(context.Background())
	defer stopDemo()
	apiRequests := collector.NewAPIRequestsCounter()
	cl, err := f.newClient(demoCtx, logger, apiRequests)
	if err != nil {
		level.Error(logger).Log("msg", "bad configuration", "err", err)
		return 1
	}

	// Nothing may log around our logger, or around the key's redaction.
	errorLog := routeStdlibLog(logger, cl.Redact)

	longLived := prometheus.NewRegistry()
	longLived.MustRegister(
		versioncollector.NewCollector(exporterName),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		apiRequests,
	)
	scraper := collector.NewScraper(collector.Config{
		Client:         cl,
		Logger:         logger,
		Pillars:        *f.pillars,
		Conflict:       *f.conflict,
		Briefings:      *f.briefings,
		Summary:        *f.summary,
		MaxLabelValues: *f.maxLabelValues,
		CacheTTL:       *f.cacheTTL,
		GridDegrees:    *f.gridDegrees,
	})

	mux := http.NewServeMux()
	mux.Handle(*f.metricsPath, collector.NewHandler(collector.HandlerOpts{
		Scraper:        scraper,
		Gatherer:       longLived,
		Logger:         logger,
		DefaultTimeout: *f.apiTimeout,
		TimeoutOffset:  *f.timeoutOffset,
		MaxRequests:    *f.maxRequests,
	}))
	if *f.metricsPath != "/" {
		landing, err := web.NewLandingPage(web.LandingConfig{
			Name:        "Global Stability Exporter",
			Description: "Prometheus exporter for the Global Stability Intelligence Service",
			Version:     version.Info(),
			Links:       []web.LandingLinks{{Address: *f.metricsPath, Text: "Metrics"}},
		})
		if err != nil {
			level.Error(logger).Log("msg", "cannot build the landing page", "err", err)
			return 1
		}
		mux.Handle("/", landing)
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
		level.Error(logger).Log("msg", "cannot serve", "err", err)
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
	return 0
}
