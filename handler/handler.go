// SPDX-License-Identifier: Apache-2.0

// Package handler serves /metrics: the scrape's deadline from Prometheus'
// timeout header, a bound on concurrent scrapes, and the scrape's share of
// a collection with the long-lived metrics. It knows nothing of the API.
package handler

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/global-stability/global_stability_exporter/collector"
)

// Options configures the /metrics handler.
type Options struct {
	Collections *collector.Collections
	Gatherer    prometheus.Gatherer // the long-lived metrics; nil for a probe of one target
	Logger      log.Logger
	InFlight    chan struct{}      // if set, its capacity bounds the scrapes of every handler sharing it
	Scrapes     prometheus.Counter // if set, counts the scrapes served
	// DefaultTimeout bounds a scrape without a timeout header; TimeoutOffset
	// leaves time to encode and send the answer.
	DefaultTimeout, TimeoutOffset time.Duration
}

// NewScrapesCounter returns global_stability_exporter_scrapes_total.
func NewScrapesCounter(labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "global_stability_exporter_scrapes_total",
		Help: "Scrapes served of the metrics path, or probes of a target: what the API requests of global_stability_api_requests_total were spent on. Not counted: HEAD requests, scrapes refused at --web.max-requests, and probes of a name that is no target.",
	}, labels)
}

// New returns the /metrics handler; upstream failures never change the
// status. It bounds scrapes itself: promhttp's handler is made per request,
// bound to its deadline, so its MaxRequestsInFlight cannot.
func New(o Options) http.Handler {
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: promhttpLogger{level.Error(o.Logger)}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			// A load balancer's health check or curl -I asks whether the
			// endpoint answers, not for a round of API requests.
			w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
			return
		}
		if o.InFlight != nil {
			select {
			case o.InFlight <- struct{}{}:
				defer func() { <-o.InFlight }()
			default:
				http.Error(w, fmt.Sprintf("Limit of concurrent scrapes reached (%d), try again later.", cap(o.InFlight)), http.StatusServiceUnavailable)
				return
			}
		}
		if o.Scrapes != nil {
			o.Scrapes.Inc()
		}
		ctx, cancel := context.WithTimeout(r.Context(), ScrapeTimeout(r.Header, o.DefaultTimeout, o.TimeoutOffset))
		defer cancel()
		// The scrape first: the long-lived request counters then include it.
		gatherer := prometheus.Gatherers{prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return o.Collections.Gather(ctx) })}
		if o.Gatherer != nil {
			gatherer = append(gatherer, o.Gatherer)
		}
		promhttp.HandlerFor(gatherer, opts).ServeHTTP(w, r)
	})
}

// ScrapeTimeout is X-Prometheus-Scrape-Timeout-Seconds (over 0, at most a
// day; else def) minus offset, as blackbox_exporter does. An offset that
// would leave nothing is ignored rather than fail every scrape at once.
func ScrapeTimeout(h http.Header, def, offset time.Duration) time.Duration {
	secs, err := strconv.ParseFloat(h.Get("X-Prometheus-Scrape-Timeout-Seconds"), 64)
	// Written so that NaN fails too: it compares false with everything.
	if err != nil || !(secs > 0 && secs <= 24*3600) {
		return def
	}
	t := time.Duration(secs * float64(time.Second))
	if t > offset {
		return t - offset
	}
	return t
}

type promhttpLogger struct{ log.Logger }

func (l promhttpLogger) Println(v ...any) { _ = l.Log("msg", fmt.Sprint(v...)) }
