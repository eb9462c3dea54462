// SPDX-License-Identifier: Apache-2.0

// Package handler serves scrapes, of /metrics and of every /probe: the
// scrape's deadline from Prometheus' timeout header, bounds on concurrent
// scrapes and renderings, and the scrape's share of a collection with the
// long-lived metrics. It knows nothing of the API.
package handler

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"

	"github.com/global-stability/global_stability_exporter/collector"
)

// Options configures the handler of /metrics or of a target's /probe.
type Options struct {
	Collections *collector.Collections
	Gatherer    prometheus.Gatherer // the long-lived metrics; nil for a probe of one target
	Logger      log.Logger
	InFlight    chan struct{} // if set, its capacity bounds the scrapes of every handler sharing it
	// Renderings, if set, bounds the responses being encoded and compressed
	// at once by every handler sharing it, each with a compressor of about
	// 1 MiB: a scrape waits for a place until its deadline. Nil: no bound.
	Renderings chan struct{}
	Scrapes    prometheus.Counter // if set, counts the scrapes served
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

// New returns the handler of /metrics or a target's /probe; upstream failures
// never change the status. It bounds scrapes itself: promhttp's handler is
// made per request, bound to its deadline, so its MaxRequestsInFlight cannot.
func New(o Options) http.Handler {
	if o.Renderings == nil {
		o.Renderings = make(chan struct{}, math.MaxInt32) // no bound; its places take no memory
	}
	opts := promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError, ErrorLog: promhttpLogger{level.Error(o.Logger)}}
	var last responses // of the last rendering shared whole
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
		fams, shared, err := o.Collections.Gather(ctx)
		gatherer := prometheus.Gatherers{prometheus.GathererFunc(func() ([]*dto.MetricFamily, error) { return fams, err })}
		if o.Gatherer != nil {
			gatherer = append(gatherer, o.Gatherer)
		}
		// promhttp encodes and compresses into a buffer, within a place, so
		// that a slow reader holds none; sent from there.
		encode := func() *response {
			if !take(ctx, o.Renderings) {
				return nil
			}
			defer func() { <-o.Renderings }()
			resp := &response{header: http.Header{}}
			promhttp.HandlerFor(gatherer, opts).ServeHTTP(resp, r)
			return resp
		}
		var resp *response
		if shared != nil && err == nil && o.Gatherer == nil && !r.URL.Query().Has("name[]") {
			// promhttp does not export the compression it negotiates: the
			// header it negotiates from keys it instead.
			key := string(expfmt.NegotiateAccept(r.Header, expfmt.DefaultAcceptedFormats()...)) + "; " + r.Header.Get("Accept-Encoding")
			resp = last.get(ctx, shared, key, encode)
		} else {
			resp = encode()
		}
		if resp == nil {
			http.Error(w, fmt.Sprintf("Limit of concurrent renderings reached (%d) until the scrape's deadline, try again later.", cap(o.Renderings)), http.StatusServiceUnavailable)
			return
		}
		resp.send(w)
	})
}

// take takes a place of places, free now or until ctx ends.
func take(ctx context.Context, places chan struct{}) bool {
	select {
	case places <- struct{}{}: // a scrape whose deadline has passed still takes a free one
		return true
	default:
	}
	select {
	case places <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// responses are the responses of one rendering a probe exports whole, by
// what the scrape negotiated: encoded and compressed once for the scrapes
// that take it, where each would compress a copy of its own (memory that
// grows with the probes at once).
type responses struct {
	mu        sync.Mutex
	rendering *collector.Rendering
	by        map[string]*sharedResponse
}

type sharedResponse struct {
	turn chan struct{} // held by the scrape encoding it, or finding it encoded
	resp *response
}

// get returns rendering's response for key, encoding it if no scrape has
// (or none found a place in time).
func (c *responses) get(ctx context.Context, rendering *collector.Rendering, key string, encode func() *response) *response {
	c.mu.Lock()
	if c.rendering != rendering {
		c.rendering, c.by = rendering, map[string]*sharedResponse{}
	}
	s := c.by[key]
	if s == nil {
		s = &sharedResponse{turn: make(chan struct{}, 1)}
		c.by[key] = s
	}
	c.mu.Unlock()
	if !take(ctx, s.turn) {
		return encode()
	}
	defer func() { <-s.turn }()
	if s.resp == nil {
		s.resp = encode()
	}
	return s.resp
}

// response is a response promhttp wrote, kept to be sent, by one scrape or
// by each that shares it.
type response struct {
	header http.Header
	code   int
	bytes.Buffer
}

func (r *response) Header() http.Header  { return r.header }
func (r *response) WriteHeader(code int) { r.code = cmp.Or(r.code, code) }

// send writes r to w, its headers copied: w may change them, r is shared.
func (r *response) send(w http.ResponseWriter) {
	maps.Copy(w.Header(), r.header.Clone())
	w.Header().Set("Content-Length", strconv.Itoa(r.Len()))
	w.WriteHeader(cmp.Or(r.code, http.StatusOK))
	_, _ = w.Write(r.Bytes())
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
