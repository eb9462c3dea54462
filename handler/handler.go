// Package handler serves /metrics: per request, the scrape's deadline from
// Prometheus' timeout header, a bound on concurrent scrapes, the scrape's
// share of a collection gathered with the long-lived metrics, and
// promhttp's encoding and compression. It knows nothing of the API.
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
	// Gatherer holds the long-lived metrics: build info, Go and process
	// collectors, API request counters. Nil serves the scrape's series
	// only (a probe of one target).
	Gatherer prometheus.Gatherer
	Logger   log.Logger
	// DefaultTimeout bounds a scrape that carries no
	// X-Prometheus-Scrape-Timeout-Seconds header (--api.timeout).
	DefaultTimeout time.Duration
	// TimeoutOffset is subtracted from the header's value, leaving time to
	// encode and send the answer (--web.timeout-offset).
	TimeoutOffset time.Duration
	// InFlight, if set, bounds concurrent scrapes (--web.max-requests): a
	// channel whose capacity is the limit, shared by the handlers of one
	// target (its /metrics and its probes).
	InFlight chan struct{}
	// Scrapes, if set, counts the scrapes served (GET, whatever the API
	// did): the other side of the API requests they cost.
	Scrapes prometheus.Counter
}

// NewScrapesCounter returns global_stability_exporter_scrapes_total, to
// register on the long-lived registry: Options.Scrapes is its counter of
// one target (WithLabelValues of its labels, none for a single account,
// the target's name when there are several).
func NewScrapesCounter(labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "global_stability_exporter_scrapes_total",
		Help: "Scrapes served of the metrics path, or probes of a target (refused ones not counted): what the API requests of global_stability_api_requests_total were spent on.",
	}, labels)
}

// New returns the /metrics handler: per request, the scrape's share of a
// collection bound to its deadline, gathered with the long-lived metrics.
// Upstream failures never change the HTTP status.
//
// promhttp's own MaxRequestsInFlight cannot bound scrapes here: the
// promhttp handler is made per request, to bind its gatherer to that
// request's deadline, so the bound is this handler's.
func New(o Options) http.Handler {
	inFlight := o.InFlight
	errorLog := promhttpLogger{level.Error(o.Logger)}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			// A load balancer's health check or curl -I asks whether the
			// endpoint answers, not for a round of API requests.
			w.Header().Set("Content-Type", string(expfmt.NewFormat(expfmt.TypeTextPlain)))
			w.WriteHeader(http.StatusOK)
			return
		}
		if inFlight != nil {
			select {
			case inFlight <- struct{}{}:
				defer func() { <-inFlight }()
			default:
				http.Error(w, fmt.Sprintf("Limit of concurrent scrapes reached (%d), try again later.", cap(inFlight)), http.StatusServiceUnavailable)
				return
			}
		}
		if o.Scrapes != nil {
			o.Scrapes.Inc()
		}
		timeout := ScrapeTimeout(r.Header, o.DefaultTimeout, o.TimeoutOffset)
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()

		// The scrape first: its collection is what moves the long-lived
		// request counters, which then include it.
		gatherer := prometheus.Gatherers{prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return o.Collections.Gather(ctx) })}
		if o.Gatherer != nil {
			gatherer = append(gatherer, o.Gatherer)
		}
		promhttp.HandlerFor(gatherer, promhttp.HandlerOpts{
			ErrorHandling: promhttp.ContinueOnError,
			ErrorLog:      errorLog,
		}).ServeHTTP(w, r)
	})
}

// ScrapeTimeout is how long a scrape may wait for the API: Prometheus'
// X-Prometheus-Scrape-Timeout-Seconds minus offset, as blackbox_exporter
// does, or def when the header is absent or unusable (not a number of
// seconds above 0 and at most a day: NaN, Inf, negative). An offset that would
// leave nothing is ignored rather than failing every scrape at once.
func ScrapeTimeout(h http.Header, def, offset time.Duration) time.Duration {
	v := h.Get("X-Prometheus-Scrape-Timeout-Seconds")
	if v == "" {
		return def
	}
	secs, err := strconv.ParseFloat(v, 64)
	// Written so that NaN fails too: it compares false with everything.
	if err != nil || !(secs > 0 && secs <= 24*3600) {
		return def
	}
	t := time.Duration(secs * float64(time.Second))
	if t-offset > 0 {
		return t - offset
	}
	return t
}

type promhttpLogger struct{ log.Logger }

func (l promhttpLogger) Println(v ...any) {
	_ = l.Log("msg", fmt.Sprint(v...))
}
