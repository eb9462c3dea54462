package collector

import (
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
)

// NewAPIRequestsCounter returns the global_stability_api_requests_total
// counter; register it on the long-lived registry and feed it with
// RequestObserver.
func NewAPIRequestsCounter() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace,
		Name:      "api_requests_total",
		Help:      "Requests sent to the Global Stability API over the exporter's life, by endpoint and HTTP status code (\"error\" when no response arrived).",
	}, []string{"endpoint", "code"})
}

// RequestObserver returns a client.Config.Observe that counts every API
// request in requests and logs it at debug: endpoint, page (for a
// paginated endpoint), status, bytes and duration.
func RequestObserver(logger log.Logger, requests *prometheus.CounterVec) func(client.Request) {
	return func(r client.Request) {
		requests.WithLabelValues(r.Endpoint, r.Code).Inc()
		kv := []any{"msg", "API request", "endpoint", r.Endpoint}
		if r.Page > 0 {
			kv = append(kv, "page", r.Page)
		}
		kv = append(kv, "status", r.Code, "bytes", r.Bytes, "duration", r.Duration)
		level.Debug(logger).Log(kv...)
	}
}
