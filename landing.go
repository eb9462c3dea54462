package main

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/targets"
)

// landingConfig links only to what is served: no pprof, so none of the
// toolkit's profiling links. In demo mode the page's first line says that
// the data is made up.
func landingConfig(metricsPath string, demo bool) web.LandingConfig {
	c := web.LandingConfig{
		Name:        "Global Stability Exporter",
		Description: "Prometheus exporter for the Global Stability Intelligence Service",
		Version:     version.Info(),
		Links:       []web.LandingLinks{{Address: metricsPath, Text: "Metrics"}},
		Profiling:   "false",
	}
	if demo {
		c.Name += " (DEMO)"
		c.Description = "DEMO MODE (--demo): every value is made up by a built-in simulator of the API. Never point alerts at this instance."
		c.HeaderColor = "#c0392b"
	}
	return c
}

// landingPage is the toolkit's landing page with what a user checks
// first: which API each target scrapes, and how its last scrape went,
// linked to its probe where there are several. It is rendered per request
// (rare and cheap), since the last scrape changes.
type landingPage struct {
	config  web.LandingConfig
	scraped scraped
	keys    *redact.Redactor
}

func (l *landingPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	describe := func(t *targets.Target) string {
		api := t.API
		if l.config.HeaderColor != "" { // the demo's
			api = "the built-in simulator (--demo): made-up data"
		}
		// Through the door again: a key loaded after the text was made (another
		// target's, echoed by this one's API) may be in it.
		return html.EscapeString(api + ". Last scrape: " + l.keys.Upstream(lastScrape(t)))
	}
	var b strings.Builder
	if l.scraped.set == nil {
		fmt.Fprintf(&b, "<div>API: %s</div>", describe(l.scraped.metrics))
	} else {
		b.WriteString("<div>Targets (Prometheus scrapes each as /probe?target=NAME):</div><ul>")
		for _, t := range l.scraped.set.Targets() {
			fmt.Fprintf(&b, `<li><a href="probe?target=%s">%s</a>: %s</li>`, url.QueryEscape(t.Name), html.EscapeString(t.Name), describe(t))
		}
		b.WriteString("</ul>")
	}
	c := l.config
	c.ExtraHTML, c.Links = b.String(), slices.Clone(c.Links) // the toolkit rewrites the links it is given

	page, err := web.NewLandingPage(c)
	if err != nil {
		http.Error(w, "cannot render the landing page", http.StatusInternalServerError)
		return
	}
	page.ServeHTTP(w, r)
}

func lastScrape(t *targets.Target) string {
	st, ok := t.Collections.LastScrape()
	if !ok {
		return "none yet"
	}
	at := st.At.UTC().Format(time.RFC3339)
	if len(st.Failed) == 0 {
		return fmt.Sprintf("%s, every endpoint answered (%d)", at, st.Endpoints)
	}
	return fmt.Sprintf("%s, %d of %d endpoints failed: %s. Why: %s", at, len(st.Failed), st.Endpoints, strings.Join(st.Failed, ", "), st.Why)
}
