package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/user"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/alecthomas/units"
	"github.com/go-kit/log"
	"github.com/go-kit/log/level"
	commonconfig "github.com/prometheus/common/config"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// keyEnv is where the API key may come from instead of --api.key-file.
// There is deliberately no flag that takes the key itself: flag values show
// up in ps, /proc and shell history.
const keyEnv = "GLOBAL_STABILITY_API_KEY"

type flags struct {
	envar                               func(flag string) string // its environment variable
	apiURL, keyFile                     *string
	apiTimeout, cacheTTL, timeoutOffset *time.Duration
	summaryRefresh                      *time.Duration
	httpCache                           *bool
	cursorParam, pageSizeParam          *string
	pageSize, maxPages, maxLabelValues  *int
	gridDegrees                         *float64
	maxResponseBytes, maxDocumentBytes  *units.Base2Bytes
	collectorOn                         map[string]*bool // by endpoint group
	metricsPath                         *string
	maxRequests                         *int
	web                                 *web.FlagConfig
	logLevel, logFormat                 *string
	demo                                *bool
	tlsCAFile, tlsCertFile, tlsKeyFile  *string
	tlsInsecure                         *bool
}

func registerFlags(app *kingpin.Application) *flags {
	env := func(name string) string {
		return "GLOBAL_STABILITY_" + strings.NewReplacer(".", "_", "-", "_").Replace(strings.ToUpper(name))
	}
	flag := func(name, help string) *kingpin.FlagClause { return app.Flag(name, help).Envar(env(name)) }
	f := &flags{
		envar:            env,
		apiURL:           flag("api.url", "Base address of the Global Stability API, e.g. https://api.example.com. Required unless --demo.").String(),
		keyFile:          flag("api.key-file", "File holding the API key (surrounding whitespace is trimmed; re-read when it changes). Or set "+keyEnv+".").PlaceHolder("PATH").String(),
		apiTimeout:       flag("api.timeout", "Timeout of each API request (each page of a paged endpoint is one), and of a scrape that carries no X-Prometheus-Scrape-Timeout-Seconds header.").Default("10s").Duration(),
		cursorParam:      flag("api.cursor-param", "Query parameter that passes next_cursor back (the spec leaves it open).").Default(client.DefaultCursorParam).String(),
		pageSizeParam:    flag("api.page-size-param", "Query parameter that sets the page size; off when empty.").Default("").String(),
		pageSize:         flag("api.page-size", "Page size to request with --api.page-size-param; 0 is off.").Default("0").Int(),
		maxPages:         flag("api.max-pages", "Most pages fetched per paginated endpoint per scrape; more fails the endpoint.").Default(fmt.Sprint(client.DefaultMaxPages)).Int(),
		maxResponseBytes: flag("api.max-response-bytes", "Largest body of one page of "+limitedPaths(client.PageLimit)+", after gzip is undone; a larger one fails its endpoint.").Default("16MiB").Bytes(),
		maxDocumentBytes: flag("api.max-document-bytes", "Largest body of "+limitedPaths(client.DocumentLimit)+", after gzip is undone; a larger one fails its endpoint.").Default("1MiB").Bytes(),
		tlsCAFile:        flag("api.tls.ca-file", "CA certificate file to verify the API's TLS certificate with, instead of the system's roots.").PlaceHolder("PATH").String(),
		tlsCertFile:      flag("api.tls.cert-file", "Client certificate file for mutual TLS with the API (with --api.tls.key-file).").PlaceHolder("PATH").String(),
		tlsKeyFile:       flag("api.tls.key-file", "Client private key file for mutual TLS with the API (with --api.tls.cert-file).").PlaceHolder("PATH").String(),
		tlsInsecure:      flag("api.tls.insecure-skip-verify", "Do not verify the API's TLS certificate. Anyone on the path can then read the API key; for tests only.").Bool(),
		cacheTTL:         flag("api.cache-ttl", "How long a finished collection also serves later scrapes; 0 shares only collections in flight.").Default("0s").Duration(),
		httpCache:        flag("api.http-cache", "Honour the API's caching headers: reuse an answer while its Cache-Control or Expires says it is fresh, and ask with its ETag or Last-Modified whether it changed (304 Not Modified). --no-api.http-cache downloads every body on every collection.").Default("true").Bool(),
		summaryRefresh:   flag("api.summary-refresh-interval", "The spec refreshes /v1/summaries this often: a summary with as_of T is not fetched again before T plus this (nor more than this after it was fetched). 0 turns this off.").Default("15m").Duration(),
		gridDegrees:      flag("collector.conflict.grid-degrees", "Cell size, in degrees, of the conflict event grid (global_stability_conflict_events_by_cell).").Default(fmt.Sprint(endpoint.DefaultGridDegrees)).Float64(),
		maxLabelValues:   flag("collector.max-label-values", "Most series one metric may carry per scrape when its labels come from upstream data (per pillar for indicators): the busiest categories and cells are kept, and each pillar's first indicators in the API's order.").Default(fmt.Sprint(endpoint.DefaultMaxLabelValues)).Int(),
		collectorOn:      map[string]*bool{},
		metricsPath:      flag("web.telemetry-path", "Path under which to expose metrics.").Default("/metrics").String(),
		maxRequests:      flag("web.max-requests", "Most scrapes served at once; 0 is no limit.").Default("40").Int(),
		timeoutOffset:    flag("web.timeout-offset", "Subtracted from Prometheus' scrape timeout to leave time to answer.").Default("0.5s").Duration(),
		logLevel:         flag("log.level", "Only log messages with the given severity or above: debug, info, warn, error.").Default("info").String(),
		logFormat:        flag("log.format", "Output format of log messages: logfmt, json.").Default("logfmt").String(),
		demo:             flag("demo", "Scrape a built-in simulator of the API instead of the real one. The data is made up.").Bool(),
	}
	// One --collector.<group> per group of endpoints, from their descriptions.
	for _, group := range endpointGroups() {
		f.collectorOn[group] = flag("collector."+group, "Collect "+groupPaths(group)+".").Default("true").Bool()
	}
	f.web = kingpinflag.AddFlags(app, ":10110")
	// The toolkit's help gives node_exporter's port as its example.
	app.GetFlag("web.listen-address").Help("Addresses on which to expose metrics and the landing page. Repeatable for multiple addresses. Examples: `:10110` or `[::1]:10110` for http, `vsock://:10110` for vsock.")
	for _, name := range []string{"web.listen-address", "web.config.file", "web.systemd-socket"} {
		if fl := app.GetFlag(name); fl != nil {
			fl.Envar(env(name))
		}
	}
	return f
}

// newClient checks the API flags and returns a client, counting every
// request in apiMetrics. With --demo it first starts the simulator on a
// loopback port with a random key.
func (f *flags) newClient(ctx context.Context, logger log.Logger, apiMetrics *collector.APIMetrics, keys *redact.Keyring) (*client.Client, error) {
	baseURL := *f.apiURL
	var apiKey func() (string, error)
	switch {
	case *f.demo:
		url, key, err := startDemo(ctx)
		if err != nil {
			return nil, fmt.Errorf("--demo: %w", err)
		}
		level.Warn(logger).Log("msg", "--demo: scraping a built-in simulator; every value exported is made up", "simulator", url, "collectors", f.collectors())
		baseURL, apiKey = url, client.StaticKey(key)
	default:
		u, err := parseAPIURL(baseURL, f.envar("api.url"))
		if err != nil {
			return nil, err
		}
		if u.Scheme == "http" && !isLoopback(u.Hostname()) {
			level.Warn(logger).Log("msg", "--api.url is plain http://: the API key crosses the network unencrypted, readable by anyone on the path; use https:// unless this is a proxy you trust on a network you trust", "api_url", withoutCredentials(u))
		}
		if trimVersion(u) {
			level.Warn(logger).Log("msg", "--api.url ends in /v1, which the exporter adds to every path itself; using the address without it", "api_url", withoutCredentials(u))
		}
		baseURL = u.String()
		var keySource string
		if apiKey, keySource, err = f.keySource(); err != nil {
			return nil, err
		}
		apiKey = announceRotation(apiKey, keySource, logger)
		level.Info(logger).Log("msg", "scraping the Global Stability API", "api_url", withoutCredentials(u), "key_from", keySource, "collectors", f.collectors())
	}
	if *f.cacheTTL > 0 {
		level.Info(logger).Log("msg", "--api.cache-ttl: a finished collection serves later scrapes for this long, so a value may be exported up to this long after the API stopped calling it fresh", "ttl", *f.cacheTTL)
	}
	httpClient, err := f.httpClient(logger)
	if err != nil {
		return nil, err
	}
	cl, err := client.New(client.Config{
		BaseURL:          baseURL,
		APIKey:           apiKey,
		HTTPClient:       httpClient,
		CursorParam:      *f.cursorParam,
		PageSizeParam:    *f.pageSizeParam,
		PageSize:         *f.pageSize,
		MaxPages:         *f.maxPages,
		MaxResponseBytes: int64(*f.maxResponseBytes),
		MaxDocumentBytes: int64(*f.maxDocumentBytes),
		Keyring:          keys,
		Observe:          apiMetrics.Observer(logger),
	})
	if err != nil {
		return nil, fmt.Errorf("--api.url: %w", err)
	}
	return cl, nil
}

// httpClient builds the upstream HTTP client with prometheus/common's
// config, as Prometheus does for its scrapes: TLS files (re-read when they
// change), proxies from HTTP_PROXY/HTTPS_PROXY/NO_PROXY, keep-alive, and
// HTTP/2 where the server offers it.
func (f *flags) httpClient(logger log.Logger) (*http.Client, error) {
	cfg := commonconfig.HTTPClientConfig{
		TLSConfig: commonconfig.TLSConfig{
			CAFile:             *f.tlsCAFile,
			CertFile:           *f.tlsCertFile,
			KeyFile:            *f.tlsKeyFile,
			InsecureSkipVerify: *f.tlsInsecure,
		},
		ProxyConfig:     commonconfig.ProxyConfig{ProxyFromEnvironment: true},
		FollowRedirects: true,
		EnableHTTP2:     true,
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("--api.tls.*: %w", err)
	}
	hc, err := commonconfig.NewClientFromConfig(cfg, exporterName)
	if err != nil {
		return nil, fmt.Errorf("--api.tls.ca-file, --api.tls.cert-file, --api.tls.key-file: %w", err)
	}
	if *f.tlsInsecure {
		level.Warn(logger).Log("msg", "--api.tls.insecure-skip-verify: the API's certificate is NOT verified; anyone between here and the API can read the API key")
	}
	hc.Timeout = *f.apiTimeout
	return hc, nil
}

// keySource picks the key from --api.key-file or the environment and
// checks that it can be read now, so a bad key file stops start-up.
// It also says, for the start-up log, where the key comes from (never the
// key).
func (f *flags) keySource() (key func() (string, error), from string, err error) {
	raw, envSet := os.LookupEnv(keyEnv)
	envKey := strings.TrimSpace(raw)
	keyFile := flagSource("api.key-file", f.envar("api.key-file"), "")
	switch {
	case *f.keyFile != "" && envSet:
		return nil, "", fmt.Errorf("%s and %s are both set: keep one", keyFile, keyEnv)
	case *f.keyFile != "":
		key := fileKey(*f.keyFile)
		if _, err := key(); err != nil {
			return nil, "", fmt.Errorf("%s: %w%s: point it at a file holding the API key, readable by this process", keyFile, err, whoAmI(err))
		}
		return key, "file " + *f.keyFile, nil
	case envSet && envKey == "":
		return nil, "", fmt.Errorf("%s is set but empty: put the key in it, or unset it and set %s to a file holding the key", keyEnv, keyFile)
	case envSet:
		return client.StaticKey(envKey), "environment variable " + keyEnv, nil
	}
	return nil, "", fmt.Errorf("no API key: set %s to a file holding it, or the %s environment variable", keyFile, keyEnv)
}

// whoAmI says which user was refused a file, for a permission error: the
// exporter often runs as another user than the one who wrote the key file
// (a container's nonroot uid 65532, systemd's DynamicUser).
func whoAmI(err error) string {
	if !errors.Is(err, fs.ErrPermission) {
		return ""
	}
	who := fmt.Sprintf("uid %d, gid %d", os.Getuid(), os.Getgid())
	if u, err := user.Current(); err == nil {
		who = u.Username + ", " + who
	}
	return " (this process runs as " + who + ")"
}

// collectors lists the enabled collectors, for the start-up log.
func (f *flags) collectors() string {
	var on []string
	for _, e := range f.endpoints() {
		if e.Group == "" {
			on = append(on, e.Label)
		} else if !slices.Contains(on, e.Group) {
			on = append(on, e.Group)
		}
	}
	return strings.Join(on, ",")
}

// endpoints are the endpoints whose collector is on.
func (f *flags) endpoints() []*endpoint.Endpoint {
	return collector.Enabled(endpoint.All(), func(group string) bool { return *f.collectorOn[group] })
}

// endpointGroups are the groups of the endpoints, in their order.
func endpointGroups() []string {
	var groups []string
	for _, e := range endpoint.All() {
		if e.Group != "" && !slices.Contains(groups, e.Group) {
			groups = append(groups, e.Group)
		}
	}
	return groups
}

// groupPaths names the paths of a group's endpoints, for its flag's help.
func groupPaths(group string) string {
	var paths []string
	for _, e := range endpoint.All() {
		if e.Group == group {
			paths = append(paths, "/v1/"+e.Label)
		}
	}
	return strings.Join(paths, ", ")
}

// limitedPaths names the paths a body limit applies to, for its help.
func limitedPaths(l client.Limit) string {
	var paths []string
	for _, e := range endpoint.All() {
		if e.Limit == l {
			paths = append(paths, "/v1/"+e.Label)
		}
	}
	return strings.Join(paths, ", ")
}

// startDemo serves the simulator on a loopback port until ctx ends.
func startDemo(ctx context.Context) (url, key string, err error) {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails
	key = hex.EncodeToString(b)
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", err
	}
	srv := &http.Server{Handler: simulator.New(simulator.Config{Key: key, Seed: 1,
		// As a well-behaved API would: the landing page and the reuse
		// counters then show what the exporter saves. A quota far above
		// what it spends, to show the quota gauges.
		Validators: true, CacheControl: simulator.DemoCacheControl, RateLimit: simulator.DemoRateLimit}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return "http://" + ln.Addr().String(), key, nil
}

// isLoopback reports whether host names this machine, where plain HTTP
// never leaves it.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errEmptyKey is a key file that holds only whitespace.
var errEmptyKey = errors.New("is empty")

// fileKey reads the key from path on every request, with prometheus/
// common's file secret (surrounding whitespace trimmed), so that a rotated
// key (a Kubernetes Secret's symlink swap, a rename over it, a rewrite) is
// used by the next request without a restart. An empty file is an error:
// a request with an empty bearer would only earn a 401 that hints at the
// wrong thing.
func fileKey(path string) func() (string, error) {
	secret := commonconfig.NewFileSecret(path)
	return func() (string, error) {
		key, err := secret.Fetch(context.Background())
		if err == nil && key == "" {
			err = fmt.Errorf("API key file %s: %w", path, errEmptyKey)
		}
		return key, err
	}
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

// store is where collections keep answers for reuse, or nil with
// --no-api.http-cache and no summary refresh interval: every body, every
// time.
func (f *flags) store() *endpoint.Store {
	if !*f.httpCache && *f.summaryRefresh == 0 {
		return nil
	}
	return endpoint.NewStore(*f.httpCache)
}
