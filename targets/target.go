// SPDX-License-Identifier: Apache-2.0

package targets

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
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

// Env is what the targets of one process share. MaxRequests applies to
// each target on its own, so that a slow target never takes another's
// places; LabelByTarget puts each target's name on its series and logs.
type Env struct {
	Logger        log.Logger
	Keys          *redact.Redactor // every target's keys, from its build to its last probe
	API           *collector.APIMetrics
	Scrapes       *prometheus.CounterVec
	TimeoutOffset time.Duration
	MaxRequests   int
	Renderings    chan struct{} // bounds the responses encoded at once, by every target (see handler.Options)
	LabelByTarget bool
}

// Target is one API account being scraped: its own client, key ring,
// store and collections. Safe for concurrent use; scrapes that hold a
// Target keep using it after a reload replaced it.
type Target struct {
	Name        string
	Settings    Settings
	API         string // the API's base address as it may be shown: no credentials, no /v1
	Collections *collector.Collections

	env   Env
	api   *collector.APIMetrics // its view of env.API, which its client records in
	http  *http.Client          // its connections, closed with it
	keys  *redact.Ring
	serve handler.Options // how its scrapes are served (its own --web.max-requests), but with which gatherer
	probe http.Handler    // its series only, for /probe

	// holds counts the set serving the target (or, before, its builder)
	// and each probe of it. The last to let go closes it, so nothing waits
	// for a probe, and a probe that finds it closed looks again.
	holds atomic.Int64
}

// New builds a target from validated settings: the one place where a
// target's parts are made. It sends nothing. The TLS files, read here, or
// an API URL the client refuses (validated settings have none) can fail
// it; its errors name the field.
func New(name string, s Settings, env Env) (*Target, error) {
	t, logger := &Target{Name: name, Settings: s, env: env}, env.Logger
	t.holds.Store(1)
	labels := []string{}
	if env.LabelByTarget {
		labels = append(labels, name)
		logger = log.With(env.Logger, "target", name)
	}
	u, err := parseAPIURL(s.APIURL)
	if err != nil {
		return nil, fmt.Errorf("api_url: %w", err)
	}
	path, v1 := strings.CutSuffix(strings.TrimSuffix(u.Path, "/"), "/v1")
	if v1 {
		u.Path, u.RawPath = path, ""
	}
	t.API = redact.Readable((&url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path, RawPath: u.RawPath}).String()) // no credentials
	if v1 {
		level.Warn(logger).Log("msg", "the API URL ends in /v1, which the exporter adds to every path itself; using the address without it", "api_url", t.API)
	}
	if ip, err := netip.ParseAddr(u.Hostname()); u.Scheme == "http" && u.Hostname() != "localhost" && (err != nil || !ip.IsLoopback()) {
		level.Warn(logger).Log("msg", "the API URL is plain http://: the API key crosses the network unencrypted, readable by anyone on the path; use https:// unless this is a proxy you trust on a network you trust", "api_url", t.API)
	}
	// prometheus/common's client, as Prometheus scrapes with: TLS files
	// re-read when they change, proxies from the environment, HTTP/2.
	hcc := commonconfig.DefaultHTTPClientConfig
	hcc.TLSConfig, hcc.ProxyConfig = s.TLS, commonconfig.ProxyConfig{ProxyFromEnvironment: true}
	t.http, err = commonconfig.NewClientFromConfig(hcc, "global_stability_exporter")
	if err != nil { // its files' paths are the user's text
		return nil, fmt.Errorf("tls_config: %w", errors.New(redact.Readable(err.Error())))
	}
	t.http.Timeout = s.Timeout
	if s.TLS.InsecureSkipVerify {
		level.Warn(logger).Log("msg", "TLS insecure_skip_verify: the API's certificate is NOT verified; anyone between here and the API can read the API key")
	}
	endpoints := s.Endpoints()
	var endpointLabels, collectors []string
	refresh := map[string]time.Duration{} // the setting stands for each refresh interval the descriptions give
	for _, e := range endpoints {
		endpointLabels = append(endpointLabels, e.Label)
		collectors = append(collectors, cmp.Or(e.Group, e.Label)) // a group's endpoints are described together
		if e.Refresh > 0 {
			refresh[e.Label] = s.SummaryRefresh
		}
	}
	t.api = env.API.Target(labels, endpointLabels)
	t.keys = env.Keys.NewRing()
	// A key that replaces the ring's newest is logged, so that a rotation
	// gone wrong shows beside the 401s it causes.
	apiKey := func() (string, error) {
		k, err := s.Key()
		if err == nil && t.keys.Remember(k) {
			level.Info(logger).Log("msg", "the API key changed; the requests from now on carry the new one", "key_from", s.KeyFrom)
		}
		return k, err
	}
	cl, err := client.New(client.Config{
		BaseURL:          u.String(),
		APIKey:           apiKey,
		HTTPClient:       t.http,
		CursorParam:      s.CursorParam,
		PageSizeParam:    s.PageSizeParam,
		PageSize:         s.PageSize,
		MaxPages:         s.MaxPages,
		MaxResponseBytes: int64(s.MaxResponseBytes),
		MaxDocumentBytes: int64(s.MaxDocumentBytes),
		Keys:             t.keys,
		Observe:          t.api.Observer(logger),
	})
	if err != nil { // its ring is empty yet: nothing to drop
		return nil, fmt.Errorf("api_url: %w", err)
	}
	// Known from now on, not from the first request: another target's API
	// may echo it first.
	_, _ = apiKey()
	var store *endpoint.Store
	if s.HTTPCache || s.SummaryRefresh > 0 {
		store = endpoint.NewStore(s.HTTPCache)
	}
	t.Collections = collector.NewCollections(collector.Config{
		Client:    cl,
		Logger:    logger,
		Endpoints: endpoints,
		Endpoint: endpoint.Config{
			MaxLabelValues: s.MaxLabelValues,
			MaxSeries:      s.MaxSeries,
			GridDegrees:    s.GridDegrees,
			Store:          store,
			Refresh:        refresh,
		},
		CacheTTL: s.CacheTTL,
		Reused:   t.api.Reused,
	})
	t.serve = handler.Options{
		Collections:    t.Collections,
		Logger:         logger,
		DefaultTimeout: s.Timeout,
		TimeoutOffset:  env.TimeoutOffset,
		Renderings:     env.Renderings,
		Scrapes:        env.Scrapes.WithLabelValues(labels...),
	}
	if env.MaxRequests > 0 {
		t.serve.InFlight = make(chan struct{}, env.MaxRequests)
	}
	t.probe = handler.New(t.serve)
	level.Info(logger).Log("msg", "scraping the Global Stability API", "api_url", t.API, "key_from", s.KeyFrom, "collectors", strings.Join(slices.Compact(collectors), ","))
	return t, nil
}

// Handler serves the target's series, with gatherer's.
func (t *Target) Handler(gatherer prometheus.Gatherer) http.Handler {
	o := t.serve
	o.Gatherer = gatherer
	return handler.New(o)
}

// acquire takes a hold of the target for a probe; false once it is closed.
func (t *Target) acquire() bool {
	for n := t.holds.Load(); n > 0; n = t.holds.Load() {
		if t.holds.CompareAndSwap(n, n+1) {
			return true
		}
	}
	return false
}

// release lets go of a hold. The last gives up the target's connections
// and key ring, and its series unless set serves its name (a target
// replaced by one of the same name, or never served: the counters go on,
// the quota of an endpoint the new one does not collect does not).
func (t *Target) release(set *Set) {
	if t.holds.Add(-1) > 0 {
		return
	}
	t.http.CloseIdleConnections()
	t.keys.Drop()
	served, ok := set.Get(t.Name)
	var off []string // turned off: they announce no quota any more
	for _, e := range t.Collections.Endpoints {
		same := func(n *endpoint.Endpoint) bool { return n.Label == e.Label } // each target builds its drilldowns anew
		if ok && !slices.ContainsFunc(served.Collections.Endpoints, same) {
			off = append(off, e.Label)
		}
	}
	t.env.API.Release(t.api, t.Name, !ok, off)
	if !ok {
		t.env.Scrapes.DeleteLabelValues(t.Name)
	}
}
