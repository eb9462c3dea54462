package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"slices"
	"strings"
	"time"

	"github.com/alecthomas/kingpin/v2"
	"github.com/alecthomas/units"
	commonconfig "github.com/prometheus/common/config"
	"github.com/prometheus/exporter-toolkit/web"
	"github.com/prometheus/exporter-toolkit/web/kingpinflag"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/targets"
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
	configFile                          *string
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
		demo:             flag("demo", "Scrape a built-in simulator of the API instead of the real one, as two made-up accounts (/probe?target=demo-a, demo-b; /metrics serves demo-a). The data is made up.").Bool(),
		configFile:       flag("config.file", "Targets' file (YAML): several API accounts by name, each scraped as /probe?target=NAME, with the flags as defaults for what a target leaves out. Reloaded on SIGHUP and POST /-/reload. Without it, the flags' one account is scraped on the metrics path.").PlaceHolder("PATH").String(),
	}
	// One --collector.<group> per group of endpoints, from their descriptions.
	for _, group := range targets.Groups() {
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

// settings are the flags' settings of a target: the one target without
// --config.file (its URL and key added by the caller), the defaults of
// every target of the file with it.
func (f *flags) settings() targets.Settings {
	collectors := map[string]bool{}
	for group, on := range f.collectorOn {
		collectors[group] = *on
	}
	return targets.Settings{
		Timeout:          *f.apiTimeout,
		CursorParam:      *f.cursorParam,
		PageSizeParam:    *f.pageSizeParam,
		PageSize:         *f.pageSize,
		MaxPages:         *f.maxPages,
		MaxResponseBytes: int64(*f.maxResponseBytes),
		MaxDocumentBytes: int64(*f.maxDocumentBytes),
		TLS: commonconfig.TLSConfig{
			CAFile:             *f.tlsCAFile,
			CertFile:           *f.tlsCertFile,
			KeyFile:            *f.tlsKeyFile,
			InsecureSkipVerify: *f.tlsInsecure,
		},
		Collectors:     collectors,
		HTTPCache:      *f.httpCache,
		SummaryRefresh: *f.summaryRefresh,
		CacheTTL:       *f.cacheTTL,
		MaxLabelValues: *f.maxLabelValues,
		GridDegrees:    *f.gridDegrees,
	}
}

// fieldFlags are the flags behind the fields of targets.Settings, for
// messages about the flags' settings.
var fieldFlags = map[string]string{
	targets.FieldAPIURL:           "api.url",
	targets.FieldKeyFile:          "api.key-file",
	targets.FieldTimeout:          "api.timeout",
	targets.FieldCursorParam:      "api.cursor-param",
	targets.FieldPageSizeParam:    "api.page-size-param",
	targets.FieldPageSize:         "api.page-size",
	targets.FieldMaxPages:         "api.max-pages",
	targets.FieldMaxResponseBytes: "api.max-response-bytes",
	targets.FieldMaxDocumentBytes: "api.max-document-bytes",
	targets.FieldTLS:              "api.tls.ca-file",
	targets.FieldTLSCertFile:      "api.tls.cert-file",
	targets.FieldTLSKeyFile:       "api.tls.key-file",
	targets.FieldSummaryRefresh:   "api.summary-refresh-interval",
	targets.FieldCacheTTL:         "api.cache-ttl",
	targets.FieldMaxLabelValues:   "collector.max-label-values",
	targets.FieldGridDegrees:      "collector.conflict.grid-degrees",
}

// namer names a setting as the flag behind it, with its value and its
// environment variable.
func (f *flags) namer() targets.Namer {
	return func(field string, value any) string {
		name := fieldFlags[field]
		return flagSource(name, f.envar(name), fmt.Sprint(value))
	}
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
		key := targets.FileKey(*f.keyFile)
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
	for _, e := range f.settings().Endpoints() {
		if e.Group == "" {
			on = append(on, e.Label)
		} else if !slices.Contains(on, e.Group) {
			on = append(on, e.Group)
		}
	}
	return strings.Join(on, ",")
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
