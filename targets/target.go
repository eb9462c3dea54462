package targets

import (
	"hash/maphash"
	"net/http"
	"sync"
	"time"

	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	"github.com/prometheus/client_golang/prometheus"
	commonconfig "github.com/prometheus/common/config"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// userAgentName is the exporter's name in the User-Agent of prometheus/
// common's HTTP client.
const userAgentName = "global_stability_exporter"

// Env is what the targets of one process share: the process itself.
type Env struct {
	Logger log.Logger
	// Keys holds every target's keys, from its build to its last probe: the
	// one Redactor of the log, the pages and every text from the API.
	Keys *redact.Redactor
	// API holds the API request counters and quota gauges of every target;
	// with Named, each target's series carry its name in a target label.
	API *collector.APIMetrics
	// Scrapes counts the scrapes served per target (a target label with
	// Named).
	Scrapes *prometheus.CounterVec
	// TimeoutOffset and MaxRequests are --web.timeout-offset and
	// --web.max-requests, applied to each target on its own: a slow
	// target's scrapes never take another's places.
	TimeoutOffset time.Duration
	MaxRequests   int
	// Named is set for the targets of a targets' file: their series and log
	// lines carry their names.
	Named bool
}

// Target is one API account being scraped: its own client, key ring,
// store and collections. Safe for concurrent use; scrapes that hold a
// Target keep using it after a reload replaced it.
type Target struct {
	Name     string
	Settings Settings
	API      string // the API's base address as it may be shown: no credentials, no /v1

	env         Env
	logger      log.Logger
	client      *client.Client
	keys        *redact.Ring
	api         *collector.APIMetrics // this target's view of Env.API
	scrapes     prometheus.Counter
	collections *collector.Collections
	inFlight    chan struct{} // --web.max-requests, this target's own
	probe       http.Handler  // its series only, for /probe

	// use is held for reading by each probe of the target, and for
	// writing by Close, which so waits for the probes in flight; closed
	// then turns later ones to the set's next generation.
	use    sync.RWMutex
	closed bool
}

// New builds a target from its settings: the one place where a target's
// parts are made. It sends nothing; the settings must have been validated.
func New(name string, s Settings, env Env) (*Target, error) {
	t := &Target{Name: name, Settings: s, env: env, logger: env.Logger}
	labels := []string{}
	if env.Named {
		labels = append(labels, name)
		t.logger = log.With(env.Logger, "target", name)
	}
	u, err := parseAPIURL(s.APIURL)
	if err != nil {
		return nil, &FieldError{Field: "api_url", Err: err}
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		level.Warn(t.logger).Log("msg", "the API URL is plain http://: the API key crosses the network unencrypted, readable by anyone on the path; use https:// unless this is a proxy you trust on a network you trust", "api_url", withoutCredentials(u))
	}
	if trimVersion(u) {
		level.Warn(t.logger).Log("msg", "the API URL ends in /v1, which the exporter adds to every path itself; using the address without it", "api_url", withoutCredentials(u))
	}
	t.API = withoutCredentials(u)
	hc, err := newHTTPClient(s, t.logger)
	if err != nil {
		return nil, err
	}
	endpoints := s.Endpoints()
	var endpointLabels []string
	for _, e := range endpoints {
		endpointLabels = append(endpointLabels, e.Label)
	}
	t.api = env.API.Target(labels, endpointLabels)
	t.scrapes = env.Scrapes.WithLabelValues(labels...)
	t.keys = env.Keys.NewRing()
	t.client, err = client.New(client.Config{
		BaseURL:          u.String(),
		APIKey:           announceRotation(s.Key, s.KeyFrom, t.logger),
		HTTPClient:       hc,
		CursorParam:      s.CursorParam,
		PageSizeParam:    s.PageSizeParam,
		PageSize:         s.PageSize,
		MaxPages:         s.MaxPages,
		MaxResponseBytes: int64(s.MaxResponseBytes),
		MaxDocumentBytes: int64(s.MaxDocumentBytes),
		Keys:             t.keys,
		Observe:          t.api.Observer(t.logger),
	})
	if err != nil {
		t.keys.Drop()
		return nil, &FieldError{Field: "api_url", Err: err}
	}
	// Known from now on, not from the first request: another target's API
	// may echo it first.
	if key, err := s.Key(); err == nil {
		t.keys.Remember(key)
	}
	var store *endpoint.Store
	if s.HTTPCache || s.SummaryRefresh > 0 {
		store = endpoint.NewStore(s.HTTPCache)
	}
	t.collections = collector.NewCollections(collector.Config{
		Client:    t.client,
		Logger:    t.logger,
		Endpoints: endpoints,
		Endpoint: endpoint.Config{
			MaxLabelValues: s.MaxLabelValues,
			GridDegrees:    s.GridDegrees,
			Store:          store,
			Refresh:        map[string]time.Duration{endpoint.Summary.Label: s.SummaryRefresh},
		},
		CacheTTL: s.CacheTTL,
		Reused:   t.api.Reused,
	})
	if env.MaxRequests > 0 {
		t.inFlight = make(chan struct{}, env.MaxRequests)
	}
	t.probe = t.Handler(nil)
	if s.CacheTTL > 0 {
		level.Info(t.logger).Log("msg", "cache TTL: a finished collection serves later scrapes for this long, so a value may be exported up to this long after the API stopped calling it fresh", "ttl", s.CacheTTL)
	}
	return t, nil
}

// FieldError is a setting with which a target cannot be built (a TLS file
// that cannot be read, say), named by its field for the caller to render
// as a flag or as the file's field.
type FieldError struct {
	Field string
	Err   error
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *FieldError) Unwrap() error { return e.Err }

// Handler serves the target's scrape: its series, with gatherer's (the
// process's own, for /metrics; nil for a probe, which answers with the
// target's series only).
func (t *Target) Handler(gatherer prometheus.Gatherer) http.Handler {
	h := handler.New(handler.Options{
		Collections:    t.collections,
		Gatherer:       gatherer,
		Logger:         t.logger,
		DefaultTimeout: t.Settings.Timeout,
		TimeoutOffset:  t.env.TimeoutOffset,
		InFlight:       t.inFlight,
		Scrapes:        t.scrapes,
	})
	return h
}

// acquire reserves the target for a probe, unless it was closed (a reload
// replaced it after the probe found it): the probe then looks again.
// Every acquire that succeeds is followed by a release.
func (t *Target) acquire() bool {
	t.use.RLock()
	if t.closed {
		t.use.RUnlock()
		return false
	}
	return true
}

func (t *Target) release() { t.use.RUnlock() }

// Collections are the target's collections, for the landing page.
func (t *Target) Collections() *collector.Collections { return t.collections }

// Redactor holds every target's keys: the landing page's door.
func (t *Target) Redactor() *redact.Redactor { return t.keys.Redactor }

// Describe is what the start-up log says of the target: where the API is
// and where its key comes from (never the key).
func (t *Target) Describe() []any { return []any{"api_url", t.API, "key_from", t.Settings.KeyFrom} }

// Close lets the target's scrapes in flight finish, then gives up its
// connections and its key ring; when forget says so then (a target no
// longer in the file), its series go too (a target replaced by one of the
// same name keeps them: its counters go on).
func (t *Target) Close(forget func() bool) { go t.close(forget) }

// close is Close without its goroutine: it waits for the probes in flight.
func (t *Target) close(forget func() bool) {
	t.use.Lock()
	t.closed = true
	t.use.Unlock()
	t.client.CloseIdleConnections()
	t.keys.Drop()
	if forget() {
		t.env.API.Forget(t.Name)
		t.env.Scrapes.DeleteLabelValues(t.Name)
	}
}

// newHTTPClient builds a target's HTTP client with prometheus/common's
// config, as Prometheus does for its scrapes: TLS files (re-read when they
// change), proxies from HTTP_PROXY/HTTPS_PROXY/NO_PROXY, keep-alive, and
// HTTP/2 where the server offers it. Each target has its own, so that its
// connections are its own.
func newHTTPClient(s Settings, logger log.Logger) (*http.Client, error) {
	cfg := commonconfig.HTTPClientConfig{
		TLSConfig:       s.TLS,
		ProxyConfig:     commonconfig.ProxyConfig{ProxyFromEnvironment: true},
		FollowRedirects: true,
		EnableHTTP2:     true,
	}
	if err := cfg.Validate(); err != nil {
		return nil, &FieldError{Field: "tls_config", Err: err}
	}
	hc, err := commonconfig.NewClientFromConfig(cfg, userAgentName)
	if err != nil {
		return nil, &FieldError{Field: "tls_config", Err: err}
	}
	if s.TLS.InsecureSkipVerify {
		level.Warn(logger).Log("msg", "TLS insecure_skip_verify: the API's certificate is NOT verified; anyone between here and the API can read the API key")
	}
	hc.Timeout = s.Timeout
	return hc, nil
}

// announceRotation logs, once per change, that the key the requests carry
// has changed (never the key): a rotation that went wrong, an old key put
// back or a file caught half-written, then shows in the log beside the 401s
// it causes. It remembers a fingerprint of the last key, not the key.
func announceRotation(key func() (string, error), from string, logger log.Logger) func() (string, error) {
	var (
		mu   sync.Mutex
		last uint64
		seed = maphash.MakeSeed()
	)
	return func() (string, error) {
		k, err := key()
		if err != nil {
			return k, err
		}
		h := maphash.String(seed, k)
		mu.Lock()
		changed := last != 0 && h != last
		last = h
		mu.Unlock()
		if changed {
			level.Info(logger).Log("msg", "the API key changed; the requests from now on carry the new one", "key_from", from)
		}
		return k, nil
	}
}
