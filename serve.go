// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/simulator"
	"github.com/global-stability/global_stability_exporter/targets"
)

var demoTargets = []string{"demo-a", "demo-b", "demo-c"}

// build builds what the exporter scrapes: a targets' file's targets on
// /probe; the demo's accounts on /probe (simulator.Demo: the last one's
// quota runs out), the first on /metrics too, so that either way can be
// tried; or the flags' one account on /metrics. The demo's simulator
// serves until the process ends: scrapes in flight at shutdown need it.
func build(c *config, env targets.Env) (set *targets.Set, metrics *targets.Target, err error) {
	switch {
	case c.configFile != "":
		if set, err = targets.NewSet(c.configFile, c.defaults, c.targets, env); err != nil {
			err = fmt.Errorf("%s: %w", flagSource("config.file", c.configFile), err)
		}
		return set, nil, err
	case c.demo:
		// Accounts with a random key and a world each, answering as a good
		// API would, so that every page and gauge shows what it is for.
		ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", "127.0.0.1:0")
		if err != nil {
			return nil, nil, fmt.Errorf("--demo: %w", err)
		}
		url := "http://" + ln.Addr().String()
		keys := make([]string, len(demoTargets))
		var named []targets.Named
		for i, name := range demoTargets {
			keys[i] = rand.Text()
			s := c.defaults
			s.APIURL, s.Key, s.KeyFrom = url, client.StaticKey(keys[i]), "the demo's simulator"
			named = append(named, targets.Named{Name: name, Settings: s})
		}
		srv := &http.Server{Handler: simulator.Demo(keys...), ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		level.Warn(env.Logger).Log("msg", "--demo: scraping a built-in simulator; every value exported is made up", "simulator", url, "targets", fmt.Sprint(demoTargets))
		if set, err = targets.NewSet("", targets.Settings{}, named, env); err != nil {
			return nil, nil, fmt.Errorf("--demo: %w", err)
		}
		metrics, _ = set.Get(demoTargets[0])
		return set, metrics, nil
	}
	// validate set the key and checked the API URL as the client does: the
	// TLS files are what is left to fail.
	if metrics, err = targets.New("", c.defaults, env); err != nil {
		err = fmt.Errorf("--api.tls.ca-file, --api.tls.cert-file, --api.tls.key-file: %w", errors.Unwrap(err))
	}
	return nil, metrics, err
}

// routes are the exporter's HTTP paths: the metrics path (the exporter's
// own series, with a target's unless from a targets' file), /probe and
// /-/reload, and the landing page.
func routes(c *config, set *targets.Set, metrics *targets.Target, own *prometheus.Registry, keys *redact.Redactor) *http.ServeMux {
	mux := http.NewServeMux()
	noFile := func(w http.ResponseWriter, _ *http.Request) { // the request's mistake
		http.Error(w, "no targets' file: /probe?target=NAME and /-/reload need one (--config.file); without it, the exporter serves one API account on "+c.metricsPath+", or --demo's", http.StatusBadRequest)
	}
	probe := noFile
	if set != nil {
		probe = set.ServeProbe
	}
	mux.HandleFunc("/probe", probe)
	if c.configFile != "" { // the metrics path holds the exporter's own series only
		mux.Handle(c.metricsPath, promhttp.HandlerFor(own, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
		mux.HandleFunc("POST /-/reload", set.ServeReload) // another method: 405, by the mux
		mux.HandleFunc("PUT /-/reload", set.ServeReload)
	} else {
		mux.Handle(c.metricsPath, metrics.Handler(own))
		mux.HandleFunc("/-/reload", noFile)
	}
	if c.metricsPath != "/" {
		mux.HandleFunc("/{$}", landingPage(c, set, metrics, keys))
	}
	return mux
}

// landingPage is the toolkit's landing page, linking only to what is
// served (no pprof), with which API each target scrapes and how its last
// scrape went: rendered per request (rare and cheap), as that changes.
func landingPage(c *config, set *targets.Set, metrics *targets.Target, keys *redact.Redactor) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		lc := web.LandingConfig{
			Name:        "Global Stability Exporter",
			Description: "Prometheus exporter for the Global Stability Intelligence Service",
			Version:     version.Info(),
			Links:       []web.LandingLinks{{Address: c.metricsPath, Text: "Metrics"}},
			Profiling:   "false",
		}
		if c.demo {
			lc.Name += " (DEMO)"
			lc.Description = "DEMO MODE (--demo): every value is made up by a built-in simulator of the API. Never point alerts at this instance."
			lc.HeaderColor = "#c0392b"
		}
		describe := func(t *targets.Target) string {
			last := "none yet"
			if st, n := t.Collections.LastScrape(), len(t.Collections.Endpoints); st != nil {
				last = fmt.Sprintf("%s, every endpoint answered (%d)", st.At.UTC().Format(time.RFC3339), n)
				if len(st.Failed) > 0 {
					last = fmt.Sprintf("%s, %d of %d endpoints failed: %s. Why: %s", st.At.UTC().Format(time.RFC3339), len(st.Failed), n, strings.Join(st.Failed, ", "), st.Why)
				}
			}
			// The last scrape's text passed Readable; redacted again, as a
			// key held since may be in it. The API's address is quoted.
			return html.EscapeString(keys.Readable(t.API) + ". Last scrape: " + keys.Redact(last))
		}
		var b strings.Builder
		if set == nil {
			fmt.Fprintf(&b, "<div>API: %s</div>", describe(metrics))
		} else {
			b.WriteString("<div>Targets (Prometheus scrapes each as /probe?target=NAME):</div><ul>")
			for _, t := range set.Targets() {
				name := keys.Readable(t.Name) // quoted, in the link too
				fmt.Fprintf(&b, `<li><a href="probe?target=%s">%s</a>: %s</li>`, url.QueryEscape(name), html.EscapeString(name), describe(t))
			}
			b.WriteString("</ul>")
		}
		lc.ExtraHTML = b.String()
		page, _ := web.NewLandingPage(lc) // fails only if the toolkit's own templates do
		page.ServeHTTP(w, r)
	}
}
