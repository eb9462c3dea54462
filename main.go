// SPDX-License-Identifier: Apache-2.0

// Command global_stability_exporter exports the Global Stability
// Intelligence Service's data, each endpoint as package endpoint describes
// it, as Prometheus metrics: each scrape collects every endpoint, reusing
// an answer only while the API allows.
package main

import (
	"context"
	"errors"
	"net/http"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/common/promslog"
	promslogflag "github.com/prometheus/common/promslog/flag"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/targets"
)

const exporterName = "global_stability_exporter"

// config is what the command line says, as plain values.
type config struct {
	defaults      targets.Settings // the one account's, or every target's defaults
	metricsPath   string
	maxRequests   int
	timeoutOffset time.Duration
	log           promslog.Config
	demo          bool
	configFile    string
	targets       []targets.Named // the file's, as validate read it: served as checked
	web           *web.FlagConfig
}

// envar is the environment variable every flag also reads.
func envar(flag string) string {
	return "GLOBAL_STABILITY_" + strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(flag))
}

// registerFlags declares the flags, a target's settings from Settings.List.
func registerFlags(app *kingpin.Application) *config {
	c := &config{}
	for _, st := range c.defaults.List() {
		if st.Flag != "" {
			f := app.Flag(st.Flag, st.Help)
			if st.Default != "" {
				f.Default(st.Default)
			}
			f.SetValue(st.Value)
		}
	}
	app.Flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").StringVar(&c.metricsPath)
	app.Flag("web.max-requests", "Most scrapes served at once (per target with --config.file); 0 is no limit.").Default("40").SetValue(targets.Integer(&c.maxRequests, 0, "0 (no limit) or a positive number"))
	app.Flag("web.timeout-offset", "Subtracted from Prometheus' scrape timeout to leave time to answer.").Default("0.5s").SetValue(targets.Duration(&c.timeoutOffset, 0, "0 or a positive duration, such as 0.5s"))
	app.Flag("demo", "Scrape a built-in simulator of the API instead of the real one, as three made-up accounts (/probe?target=demo-a, demo-b, demo-c, whose quota runs out in minutes; /metrics serves demo-a). The data is made up.").SetValue(targets.Boolean(&c.demo))
	app.Flag("config.file", "Targets' file (YAML): several API accounts by name, each scraped as /probe?target=NAME, with the flags as defaults for what a target leaves out. Reloaded on SIGHUP and POST /-/reload. Without it, the flags' one account is scraped on the metrics path.").PlaceHolder("PATH").StringVar(&c.configFile)
	promslogflag.AddFlags(app, &c.log)
	c.web = kingpinflag.AddFlags(app, ":10110")
	// The toolkit's help gives node_exporter's port as its example.
	app.GetFlag("web.listen-address").Help("Addresses on which to expose metrics and the landing page. Repeatable for multiple addresses. Examples: `:10110` or `[::1]:10110` for http, `vsock://:10110` for vsock.")
	// Every flag reads a variable too, the libraries' whichever they add (the
	// toolkit's --web.systemd-socket exists on Linux only); kingpin's own aside.
	for _, f := range app.Model().Flags {
		if f.Name != "help" && f.Name != "version" && !f.Hidden {
			app.GetFlag(f.Name).Envar(envar(f.Name))
		}
	}
	return c
}

func main() {
	if bi, ok := debug.ReadBuildInfo(); ok && version.Version == "" { // ok for every module build
		version.Version = fallbackVersion(bi.Main.Version, versionFile)
	}
	os.Exit(run(os.Args[1:]))
}

// run returns the process exit status: 1 for bad configuration or a
// listener that cannot start, 0 after the shutdown a signal asked for.
func run(args []string) int {
	app := kingpin.New(exporterName, "Prometheus exporter for the Global Stability Intelligence Service.")
	app.UsageWriter(os.Stdout) // as Prometheus' --help, so that --help | less works
	app.Version(version.Print(exporterName))
	app.HelpFlag.Short('h')
	c := registerFlags(app)
	problems, parsed := parseArgs(app, args)
	keys := redact.New() // every target's, redacted from every log line, page and text from the API
	logger, slogger := newLogger(&c.log, keys)
	if parsed {
		problems = append(problems, validate(c)...)
	}
	if len(problems) > 0 { // each on a line of its own, in the log's format
		for _, err := range problems {
			level.Error(logger).Log("msg", "bad configuration; see --help", "err", err)
		}
		return 1
	}
	level.Info(logger).Log("msg", "starting "+exporterName, "version", version.Info(), "build_context", version.BuildContext())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Several targets (a file's, the demo's) carry their names in their
	// series and log lines.
	env := targets.Env{Logger: logger, Keys: keys, TimeoutOffset: c.timeoutOffset, MaxRequests: c.maxRequests, LabelByTarget: c.configFile != "" || c.demo,
		// As many as Go's CPUs: more at once would wait for one, each holding a compressor.
		Renderings: make(chan struct{}, runtime.GOMAXPROCS(0))}
	var byTarget []string
	if env.LabelByTarget {
		byTarget = []string{"target"}
	}
	env.API, env.Scrapes = collector.NewAPIMetrics(byTarget...), handler.NewScrapesCounter(byTarget...)
	set, metrics, err := build(c, env)
	if err != nil {
		level.Error(logger).Log("msg", "bad configuration", "err", err)
		return 1
	}
	demo := prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "global_stability_exporter_demo",
		Help: "1 when the exporter runs with --demo: every global_stability_* value then comes from a built-in simulator and is made up. 0 against a real API.",
	})
	if c.demo {
		demo.Set(1)
	}
	own := prometheus.NewRegistry()
	own.MustRegister(versioncollector.NewCollector(exporterName), demo,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), env.Scrapes)
	own.MustRegister(env.API.Collectors()...)
	mux := routes(c, set, metrics, own, keys)
	if c.configFile != "" { // reloaded on SIGHUP, as by Prometheus and blackbox_exporter
		own.MustRegister(set.Collectors()...)
		hup := make(chan os.Signal, 1)
		signal.Notify(hup, syscall.SIGHUP)
		context.AfterFunc(ctx, func() { signal.Stop(hup); close(hup) }) // Stop: no signal is sent after it
		go func() {
			for range hup {
				_ = set.Reload()
			}
		}()
	}

	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- web.ListenAndServe(srv, c.web, slogger) }()
	select {
	case err := <-serveErr:
		level.Error(logger).Log("msg", "cannot serve", "err", err, "hint", serveHint(err))
		return 1
	case <-ctx.Done():
	}
	// Scrapes in flight get an API request's timeout and 5 s more to finish
	// (a header may grant one a day); a stop asked for is no failure.
	level.Info(logger).Log("msg", "shutting down, finishing scrapes in flight")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), c.defaults.Timeout+5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil {
		level.Warn(logger).Log("msg", "shut down, cutting short the scrapes still in flight", "err", err)
	} else {
		level.Info(logger).Log("msg", "shut down cleanly")
	}
	return 0
}

// serveHint names the setting behind a listener that cannot start.
func serveHint(err error) string {
	listen := flagSource("web.listen-address", "")
	switch {
	case errors.Is(err, syscall.EADDRINUSE):
		return "another process listens on that address (another exporter?): stop it, or choose another port with " + listen
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.EADDRNOTAVAIL):
		return "this process may not listen there (a port below 1024, or an address not on this machine): choose another with " + listen
	}
	return "check " + flagSource("web.config.file", "") + " and the files it names, and " + listen
}
