// SPDX-License-Identifier: Apache-2.0

package collector

import (
	"slices"
	"sync"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// APIMetrics are the long-lived series about the use of the API. Register
// Collectors on the long-lived registry, give Observer to the client and
// Reused to Collections.
type APIMetrics struct {
	requests, bytes, Reused *prometheus.CounterVec
	quota                   []*prometheus.GaugeVec // one per quotas
	mu                      sync.RWMutex           // a target's view records less once let go (see Release)
	released, gone          bool
}

// quotas are the gauges of the quota the API announces.
var quotas = []struct {
	name, help string
	value      func(client.RateLimit) (float64, bool)
}{
	{"api_rate_limit_limit", "Requests the API's quota allows per window, from its latest response of the endpoint (X-RateLimit-Limit, RateLimit-Limit, RateLimit or RateLimit-Policy). Absent when the API sends none.",
		func(q client.RateLimit) (float64, bool) { return q.Limit, q.Limit >= 0 }},
	{"api_rate_limit_remaining", "Requests left in the API's current quota window, from its latest response of the endpoint (X-RateLimit-Remaining, RateLimit-Remaining or RateLimit). Absent when the API sends none.",
		func(q client.RateLimit) (float64, bool) { return q.Remaining, q.Remaining >= 0 }},
	// Unix seconds and nanoseconds apart: UnixNano overflows after 2262,
	// and a reset in the year 9999 is a date the API may send.
	{"api_rate_limit_reset_timestamp_seconds", "When the API's quota window resets, as Unix seconds, from its latest response of the endpoint (X-RateLimit-Reset, RateLimit-Reset or RateLimit). Absent when the API sends none.",
		func(q client.RateLimit) (float64, bool) {
			return float64(q.Reset.Unix()) + float64(q.Reset.Nanosecond())/1e9, !q.Reset.IsZero()
		}},
	{"api_rate_limit_window_seconds", "Length of the API's quota window, from its latest response of the endpoint (a w= parameter). Absent when the API sends none.",
		func(q client.RateLimit) (float64, bool) { return q.Window.Seconds(), q.Window > 0 }},
}

// NewAPIMetrics returns the metrics of the API accounts, by target
// (byTarget "target") or of the one account (none).
func NewAPIMetrics(byTarget ...string) *APIMetrics {
	labels := func(names ...string) []string { return append(slices.Clone(byTarget), names...) }
	counter := func(name, help string, names ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: namespace, Name: name, Help: help}, labels(names...))
	}
	m := &APIMetrics{
		requests: counter("api_requests_total", "Requests sent to the Global Stability API over the exporter's life, by endpoint and HTTP status code (304: the API confirmed what was stored; \"error\" when no response arrived). Not counted: answers reused without a request, and scrapes that asked nothing (HEAD, refused).", "endpoint", "code"),
		bytes:    counter("api_received_bytes_total", "Body bytes received from the Global Stability API, as sent (compressed if gzip), by endpoint. Not counted: headers, answers reused without a request or confirmed by a 304, and a body refused unread for its Content-Length.", "endpoint"),
		Reused:   counter("api_responses_reused_total", "Collections of an endpoint that reused its stored answer instead of a new body, by reason: fresh (the API's Cache-Control or Expires allowed it; no request), not_modified (the API answered 304), refresh_interval (the spec's refresh interval had not passed since its as_of; no request). Not counted: collections that read a new body; a collection that several scrapes share counts once.", "endpoint", "reason"),
	}
	for _, q := range quotas {
		m.quota = append(m.quota, prometheus.NewGaugeVec(prometheus.GaugeOpts{Namespace: namespace, Name: q.name, Help: q.help}, labels("endpoint")))
	}
	return m
}

// Target returns one target's view of m (values: none for the one
// account), with a zero for each endpoint and reason of reuse, so that
// rate() sees the first.
func (m *APIMetrics) Target(values []string, endpoints []string) *APIMetrics {
	v := m
	if len(values) > 0 {
		curry := prometheus.Labels{"target": values[0]}
		v = &APIMetrics{requests: m.requests.MustCurryWith(curry), bytes: m.bytes.MustCurryWith(curry), Reused: m.Reused.MustCurryWith(curry)}
		for _, g := range m.quota {
			v.quota = append(v.quota, g.MustCurryWith(curry))
		}
	}
	for _, l := range endpoints {
		v.bytes.WithLabelValues(l)
		for _, r := range endpoint.Reasons {
			v.Reused.WithLabelValues(l, string(r))
		}
	}
	return v
}

// Release lets go of a target's view v: every series of the target goes
// when it is gone, else the quota of the endpoints it turned off. From then
// on v records no quota, and nothing once gone, so that a request still
// being read when a reload lets go of the target brings back nothing.
func (m *APIMetrics) Release(v *APIMetrics, target string, gone bool, off []string) {
	v.mu.Lock()
	v.released, v.gone = true, gone
	v.mu.Unlock()
	if gone {
		for _, c := range m.Collectors() {
			c.(*prometheus.MetricVec).DeletePartialMatch(prometheus.Labels{"target": target})
		}
	}
	for _, e := range off {
		for _, g := range m.quota {
			g.DeletePartialMatch(prometheus.Labels{"target": target, "endpoint": e})
		}
	}
}

// Collectors returns every metric, to register.
func (m *APIMetrics) Collectors() []prometheus.Collector {
	out := []prometheus.Collector{m.requests.MetricVec, m.bytes.MetricVec, m.Reused.MetricVec}
	for _, g := range m.quota {
		out = append(out, g.MetricVec)
	}
	return out
}

// Observer returns a client.Config.Observe that counts each request and
// its bytes, keeps the quota it announced, and logs it at debug.
func (m *APIMetrics) Observer(logger log.Logger) func(client.Request) {
	return func(r client.Request) {
		m.mu.RLock()
		defer m.mu.RUnlock()
		if m.gone {
			return
		}
		m.requests.WithLabelValues(r.Endpoint, r.Code).Inc()
		m.bytes.WithLabelValues(r.Endpoint).Add(float64(r.Bytes))
		for i, q := range quotas {
			switch v, ok := q.value(r.RateLimit); {
			case r.Code == "error" || m.released: // no response, or the quota is the target's successor's to say
			case ok:
				m.quota[i].WithLabelValues(r.Endpoint).Set(v)
			default: // a quota the API stopped sending is not left standing
				m.quota[i].DeleteLabelValues(r.Endpoint)
			}
		}
		kv := []any{"msg", "API request", "endpoint", r.Endpoint}
		if r.Page > 0 {
			kv = append(kv, "page", r.Page)
		}
		level.Debug(logger).Log(append(kv, "status", r.Code, "bytes", r.Bytes, "duration", r.Duration)...)
	}
}
