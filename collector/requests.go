package collector

import (
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// APIMetrics are the exporter's long-lived series about its use of the
// API: what it sent and received, what it reused instead, and the quota
// the API announces. Register Collectors on the long-lived registry, give
// Observer to the client and Reused to Collections.
//
// For several targets, make them with NewTargetsAPIMetrics and give each
// target its view (Target): every series then carries the target's name.
type APIMetrics struct {
	Requests *prometheus.CounterVec
	Bytes    *prometheus.CounterVec
	Reused   *prometheus.CounterVec

	limit, remaining, reset, window *prometheus.GaugeVec
}

// NewAPIMetrics returns the metrics of one API account, with a zero for
// each endpoint of labels and reason, so that rate() sees the first reuse.
func NewAPIMetrics(labels []string) *APIMetrics {
	m := newAPIMetrics()
	return m.Target(nil, labels)
}

// NewTargetsAPIMetrics returns the metrics of several API accounts: each
// series has a target label first. Take each target's view with Target.
func NewTargetsAPIMetrics() *APIMetrics { return newAPIMetrics("target") }

func newAPIMetrics(first ...string) *APIMetrics {
	labels := func(names ...string) []string { return append(append([]string{}, first...), names...) }
	gauge := func(name, help string) *prometheus.GaugeVec {
		return prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: name, Help: help}, labels("endpoint"))
	}
	return &APIMetrics{
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "api_requests_total",
			Help:      "Requests sent to the Global Stability API over the exporter's life, by endpoint and HTTP status code (304: the API confirmed what was stored; \"error\" when no response arrived).",
		}, labels("endpoint", "code")),
		Bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "api_received_bytes_total",
			Help:      "Body bytes received from the Global Stability API, as sent (compressed if gzip), by endpoint.",
		}, labels("endpoint")),
		Reused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "api_responses_reused_total",
			Help:      "Collections of an endpoint that reused its stored answer instead of a new body, by reason: fresh (the API's Cache-Control or Expires allowed it; no request), not_modified (the API answered 304), refresh_interval (the spec's refresh interval had not passed since its as_of; no request).",
		}, labels("endpoint", "reason")),
		limit:     gauge("api_rate_limit_limit", "Requests the API's quota allows per window, from its latest response of the endpoint (X-RateLimit-Limit, RateLimit-Limit, RateLimit or RateLimit-Policy). Absent when the API sends none."),
		remaining: gauge("api_rate_limit_remaining", "Requests left in the API's current quota window, from its latest response of the endpoint (X-RateLimit-Remaining, RateLimit-Remaining or RateLimit). Absent when the API sends none."),
		reset:     gauge("api_rate_limit_reset_timestamp_seconds", "When the API's quota window resets, as Unix seconds, from its latest response of the endpoint (X-RateLimit-Reset, RateLimit-Reset or RateLimit). Absent when the API sends none."),
		window:    gauge("api_rate_limit_window_seconds", "Length of the API's quota window, from its latest response of the endpoint (a w= parameter). Absent when the API sends none."),
	}
}

// Target returns the view of one target (its values of the labels m was
// made with, none for NewAPIMetrics), with a zero for each endpoint of
// endpoints and each reason of reuse. Its Collectors are m's.
func (m *APIMetrics) Target(values []string, endpoints []string) *APIMetrics {
	v := m
	if len(values) > 0 {
		curry := prometheus.Labels{"target": values[0]}
		v = &APIMetrics{
			Requests: m.Requests.MustCurryWith(curry), Bytes: m.Bytes.MustCurryWith(curry), Reused: m.Reused.MustCurryWith(curry),
			limit: m.limit.MustCurryWith(curry), remaining: m.remaining.MustCurryWith(curry),
			reset: m.reset.MustCurryWith(curry), window: m.window.MustCurryWith(curry),
		}
	}
	for _, l := range endpoints {
		v.Bytes.WithLabelValues(l)
		for _, r := range endpoint.Reasons {
			v.Reused.WithLabelValues(l, string(r))
		}
	}
	return v
}

// Forget removes every series of a target that is gone.
func (m *APIMetrics) Forget(target string) {
	match := prometheus.Labels{"target": target}
	for _, vec := range []interface {
		DeletePartialMatch(prometheus.Labels) int
	}{m.Requests, m.Bytes, m.Reused, m.limit, m.remaining, m.reset, m.window} {
		vec.DeletePartialMatch(match)
	}
}

// Collectors returns every metric, to register.
func (m *APIMetrics) Collectors() []prometheus.Collector {
	return []prometheus.Collector{m.Requests, m.Bytes, m.Reused, m.limit, m.remaining, m.reset, m.window}
}

// Observer returns a client.Config.Observe that counts every API request
// and its bytes, keeps the quota it announced, and logs it at debug:
// endpoint, page (for a paginated endpoint), status, bytes and duration.
func (m *APIMetrics) Observer(logger log.Logger) func(client.Request) {
	return func(r client.Request) {
		m.Requests.WithLabelValues(r.Endpoint, r.Code).Inc()
		m.Bytes.WithLabelValues(r.Endpoint).Add(float64(r.Bytes))
		if r.Code != "error" {
			m.setQuota(r.Endpoint, r.RateLimit)
		}
		kv := []any{"msg", "API request", "endpoint", r.Endpoint}
		if r.Page > 0 {
			kv = append(kv, "page", r.Page)
		}
		kv = append(kv, "status", r.Code, "bytes", r.Bytes, "duration", r.Duration)
		level.Debug(logger).Log(kv...)
	}
}

// setQuota exports what the response announced and removes what it did
// not: a quota the API stopped sending is not left standing.
func (m *APIMetrics) setQuota(label string, q client.RateLimit) {
	set := func(g *prometheus.GaugeVec, v float64, ok bool) {
		if ok {
			g.WithLabelValues(label).Set(v)
		} else {
			g.DeleteLabelValues(label)
		}
	}
	set(m.limit, q.Limit, q.Limit >= 0)
	set(m.remaining, q.Remaining, q.Remaining >= 0)
	// Unix seconds and nanoseconds apart: UnixNano overflows after 2262,
	// and a reset in the year 9999 is a date the API may send.
	set(m.reset, float64(q.Reset.Unix())+float64(q.Reset.Nanosecond())/1e9, !q.Reset.IsZero())
	set(m.window, q.Window.Seconds(), q.Window > 0)
}
