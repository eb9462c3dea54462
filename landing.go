package main

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/prometheus/common/version"
	"github.com/prometheus/exporter-toolkit/web"

	"github.com/global-stability/global_stability_exporter/targets"
)

// landingConfig describes the landing page. It links only to what is
// served: no pprof, so none of the toolkit's profiling links. In demo mode
// it says, in the page's first line, that the data is made up.
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
// first: which API the exporter scrapes, and how its last scrape went;
// with several targets, each of them, linked to its probe. It is rendered
// per request (a probe's, a person's: rare and cheap), since the last
// scrape changes.
type landingPage struct {
	config  web.LandingConfig
	scraped scraped
}

func (l *landingPage) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	describe := func(t *targets.Target) string {
		api := t.API
		if l.config.HeaderColor != "" { // the demo's
			api = "the built-in simulator (--demo): made-up data"
		}
		return html.EscapeString(api + ". Last scrape: " + lastScrape(t))
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
	c.ExtraHTML = b.String()
	page, err := web.NewLandingPage(c)
	if err != nil {
		http.Error(w, "cannot render the landing page", http.StatusInternalServerError)
		return
	}
	page.ServeHTTP(w, r)
}

// lastScrape says how a target's last scrape went: through the door
// again, since a key loaded after the text was made may be in it (another
// target's, echoed by this one's API).
func lastScrape(t *targets.Target) string { return t.Redactor().Upstream(scrapeText(t)) }

func scrapeText(t *targets.Target) string {
	st, ok := t.Collections().LastScrape()
	if !ok {
		return "none yet"
	}
	at := st.At.UTC().Format(time.RFC3339)
	if len(st.Failed) == 0 {
		return fmt.Sprintf("%s, every endpoint answered (%d)", at, st.Endpoints)
	}
	return fmt.Sprintf("%s, %d of %d endpoints failed: %s. Why: %s", at, len(st.Failed), st.Endpoints, strings.Join(st.Failed, ", "), st.Why)
}
