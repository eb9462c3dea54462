// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/leakcheck"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
	"go.uber.org/goleak"
)

// binary is the exporter built once for these tests: configuration errors
// and exit codes are only honest when checked on the real process.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "gse-test")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "global_stability_exporter")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	// Every exporter process, API server and request a test starts must end
	// with it; idle keep-alive connections are the client's, not a leak.
	http.DefaultClient.CloseIdleConnections()
	if err := goleak.Find(); err != nil && code == 0 {
		fmt.Fprintf(os.Stderr, "goroutines outlived the tests: %v\n", err)
		code = 1
	}
	os.Exit(code)
}

const secretKey = "gsk_live_9d8c7b6a5f4e3d2c1b0a"

// writeFile writes content to a new file whose path a message may quote
// whole (t.TempDir's holds the test's name, a run of letters the exporter
// withholds as it would a key), and returns the path.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "gse")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "file")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestConfigurationErrorsStopStartUp(t *testing.T) {
	emptyKey := writeFile(t, " \n")
	goodKey := writeFile(t, secretKey)
	withKey := []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}
	tests := []struct {
		name string
		args []string
		env  []string
		want []string // substrings of stderr
	}{
		{"no url and no demo", nil, nil, []string{"--api.url (GLOBAL_STABILITY_API_URL) is required", "--demo"}},
		{"no key", []string{"--api.url=https://api.example.com"}, nil, []string{"--api.key-file (GLOBAL_STABILITY_API_KEY_FILE) or GLOBAL_STABILITY_API_KEY: want one of them"}},
		{"unreadable key file", []string{"--api.url=https://api.example.com", "--api.key-file=/nonexistent/key"}, nil, []string{"--api.key-file", "/nonexistent/key"}},
		{"empty key file", []string{"--api.url=https://api.example.com", "--api.key-file=" + emptyKey}, nil, []string{"--api.key-file", "holds a key of 0 characters"}},
		{"both key sources", []string{"--api.url=https://api.example.com", "--api.key-file=" + goodKey}, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, []string{"--api.key-file (GLOBAL_STABILITY_API_KEY_FILE) or GLOBAL_STABILITY_API_KEY: want one of them"}},
		{"url without scheme", []string{"--api.url=api.example.com"}, withKey, []string{`--api.url=\"api.example.com\" (GLOBAL_STABILITY_API_URL): want the API's base address: http:// or https:// and a host, such as https://api.example.com`}},
		{"host and port without scheme", []string{"--api.url=127.0.0.1:8080"}, withKey, []string{"--api.url", "want the API's base address"}},
		{"url with spaces", []string{"--api.url=not a url"}, withKey, []string{`--api.url=\"not a url\"`}},
		{"url of another scheme", []string{"--api.url=ftp://api.example.com"}, withKey, []string{"--api.url", "http:// or https://"}},
		{"url with a query", []string{"--api.url=https://api.example.com/?v=1"}, withKey, []string{"--api.url", "without a query"}},
		{"unparsable url", []string{"--api.url=http://[::1"}, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, []string{"--api.url"}},
		{"unknown log level", []string{"--demo", "--log.level=verbose"}, nil, []string{"log.level", "verbose"}},
		{"unknown log format", []string{"--demo", "--log.format=xml"}, nil, []string{"log.format"}},
		{"no key flag exists", []string{"--api.key=" + secretKey}, nil, []string{"unknown long flag '--api.key' (see --help)"}},
		{"the simulator's --key", []string{"--key", secretKey}, nil, []string{"unknown long flag '--key'", `\"<withheld: 29 bytes>\": the exporter takes no arguments`}},
		{"a typo in a flag", []string{"--demo", "--api.timout=5s"}, nil, []string{"unknown long flag '--api.timout' (see --help)"}},
		{"a short flag", []string{"--demo", "-v"}, nil, []string{"unknown short flag '-v'"}},
		{"bad max pages", []string{"--demo", "--api.max-pages=0"}, nil, []string{"--api.max-pages"}},
		{"duration without unit", []string{"--demo", "--api.timeout=10"}, nil, []string{"--api.timeout", "10s"}},
		{"size without unit", []string{"--demo", "--api.max-response-bytes=lots"}, nil, []string{"--api.max-response-bytes", "16MiB"}},
		{"bool from the environment", nil, []string{"GLOBAL_STABILITY_DEMO=maybe"}, []string{"GLOBAL_STABILITY_DEMO", "true or false"}},
		{"whole number", []string{"--demo", "--api.page-size=x"}, nil, []string{"--api.page-size", "whole number"}},
		{"bool flag given a bad value", []string{"--demo", "--collector.pillars=maybe"}, nil, []string{`--collector.pillars=\"maybe\" (GLOBAL_STABILITY_COLLECTOR_PILLARS): want true or false`}},
		{"a value given to --no-", []string{"--demo", "--no-collector.pillars=true"}, nil, []string{`\"--no-collector.pillars=true\": the exporter takes no arguments`, "--no-… takes none"}},
		{"positional argument", []string{"--demo", "metrics"}, nil, []string{`\"metrics\": the exporter takes no arguments`}},
		{"a flag's word after --", []string{"--demo", "--", "-v"}, nil, []string{`\"-v\": the exporter takes no arguments`}},
		{"a value after a space", []string{"--demo", "--api.max-pages", "0"}, nil, []string{`--api.max-pages=\"0\" (GLOBAL_STABILITY_API_MAX_PAGES): want at least 1`}},
		{"a long positional argument is withheld", []string{"--demo", secretKey}, nil, []string{`\"<withheld: 29 bytes>\": the exporter takes no arguments`}},
		{"three bad numbers at once", []string{"--demo", "--api.max-pages=0", "--api.timeout=-1s", "--collector.max-label-values=0"}, nil, []string{`--api.max-pages=\"0\"`, `--api.timeout=\"-1s\"`, `--collector.max-label-values=\"0\"`}},
		{"negative limits", []string{"--demo", "--web.max-requests=-1", "--web.timeout-offset=-1s", "--api.cache-ttl=-5s"}, nil, []string{`--web.max-requests=\"-1\"`, `--web.timeout-offset=\"-1s\"`, `--api.cache-ttl=\"-5s\"`}},
		{"page size without its parameter", []string{"--demo", "--api.page-size=100"}, nil, []string{`--api.page-size-param (GLOBAL_STABILITY_API_PAGE_SIZE_PARAM) and --api.page-size=\"100\" (GLOBAL_STABILITY_API_PAGE_SIZE) go together`}},
		{"page size parameter without a size", []string{"--demo", "--api.page-size-param=limit"}, nil, []string{`--api.page-size-param=\"limit\" (GLOBAL_STABILITY_API_PAGE_SIZE_PARAM) and --api.page-size=\"0\"`, "go together"}},
		{"grid too fine", []string{"--demo", "--collector.conflict.grid-degrees=0.1"}, nil, []string{"--collector.conflict.grid-degrees"}},
		{"telemetry path without slash", []string{"--demo", "--web.telemetry-path=metrics"}, nil, []string{"--web.telemetry-path", "/metrics"}},
		{"empty telemetry path", []string{"--demo", "--web.telemetry-path="}, nil, []string{"--web.telemetry-path (GLOBAL_STABILITY_WEB_TELEMETRY_PATH): want a plain URL path"}},
		{"listen address without port", []string{"--demo", "--web.listen-address=:nope"}, nil, []string{`--web.listen-address=\":nope\" (GLOBAL_STABILITY_WEB_LISTEN_ADDRESS): want host:port or :port`}},
		{"missing web config file", []string{"--demo", "--web.config.file=/nonexistent/web.yml"}, nil, []string{"--web.config.file", "/nonexistent/web.yml"}},
		{"demo and a real API", []string{"--demo", "--api.url=https://api.example.com"}, nil, []string{"--demo", "--api.url", "exclude one another"}},
		{"demo from the environment and a key", nil, []string{"GLOBAL_STABILITY_DEMO=true", "GLOBAL_STABILITY_API_KEY=" + secretKey}, []string{"GLOBAL_STABILITY_DEMO", "GLOBAL_STABILITY_API_KEY"}},
		{"client certificate without its key", []string{"--demo", "--api.tls.cert-file=/tmp/cert.pem"}, nil, []string{`--api.tls.cert-file=\"/tmp/cert.pem\" (GLOBAL_STABILITY_API_TLS_CERT_FILE) and --api.tls.key-file (GLOBAL_STABILITY_API_TLS_KEY_FILE) go together`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append(tt.args, "--web.listen-address=127.0.0.1:0")...)
			cmd.Env = append(os.Environ(), tt.env...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit status %d (%v), want 1; stderr:\n%s", code, err, stderr.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(stderr.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
				}
			}
			// Refused before anything starts, and without a stack trace.
			for _, never := range []string{"panic", "goroutine ", `msg="Listening on"`, "simulator="} {
				if strings.Contains(stderr.String(), never) {
					t.Errorf("stderr shows %q:\n%s", never, stderr.String())
				}
			}
			// Not even a key given where it does not belong.
			if piece := keyPieceOf(stderr.String(), secretKey); piece != "" {
				t.Errorf("stderr shows %q of the key:\n%s", piece, stderr.String())
			}
		})
	}
}

// exporter is a running exporter process.
type exporter struct {
	cmd     *exec.Cmd
	addr    string // where it listens, as it logged
	logs    *lockedBuffer
	exited  chan struct{} // closed once it exited, with waitErr
	waitErr error
}

type lockedBuffer struct {
	mu    sync.Mutex
	b     bytes.Buffer
	wrote chan struct{} // closed, and replaced, by each write
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	close(l.wrote)
	l.wrote = make(chan struct{})
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	s, _ := l.next()
	return s
}

// next returns the text so far, and a channel closed by the next write.
func (l *lockedBuffer) next() (string, <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String(), l.wrote
}

// listeningOn is the toolkit's line naming the address it bound, and
// boundAddress that address, in either log format.
var (
	listeningOn  = regexp.MustCompile(`(?m)^.*"Listening on".*\n`)
	boundAddress = regexp.MustCompile(`\baddress"?[=:]"?([^"\s,}]+)`)
)

// started starts cmd, its output in the exporter's log, and returns once the
// process logged where it listens: the tests give it port 0, so that no
// port is picked, freed, and taken by another before it binds. Each wait is
// for an event (a line, the exit), never for a length of time.
func started(t *testing.T, cmd *exec.Cmd) *exporter {
	t.Helper()
	e := &exporter{cmd: cmd, logs: &lockedBuffer{wrote: make(chan struct{})}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = e.logs, e.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { e.waitErr = cmd.Wait(); close(e.exited) }()
	t.Cleanup(func() { _ = cmd.Process.Kill(); <-e.exited })
	line := listeningOn.FindString(e.waitFor(t, "a line saying where it listens", listeningOn.MatchString))
	m := boundAddress.FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("no address in %q", line)
	}
	e.addr = m[1]
	return e
}

func startExporter(t *testing.T, env []string, args ...string) *exporter {
	t.Helper()
	return started(t, execExporter(append(args, "--web.listen-address=127.0.0.1:0"), env...))
}

// wait returns how the process exited, once it has.
func (e *exporter) wait() error {
	<-e.exited
	return e.waitErr
}

// waitForLog waits until the exporter's log holds want and returns the log.
// The log reaches the test through a pipe and a copying goroutine, so a
// line the process has written may still be on its way.
func (e *exporter) waitForLog(t *testing.T, want string) string {
	t.Helper()
	return e.waitFor(t, strconv.Quote(want), func(logs string) bool { return strings.Contains(logs, want) })
}

// waitFor waits until ok holds of the log, and returns it. It fails the
// test when the process exits without it, or a minute before the test's
// own deadline, with the log.
func (e *exporter) waitFor(t *testing.T, what string, ok func(logs string) bool) string {
	t.Helper()
	var late <-chan time.Time
	if deadline, set := t.Deadline(); set {
		late = time.After(time.Until(deadline) - time.Minute)
	}
	for {
		logs, wrote := e.logs.next()
		if ok(logs) {
			return logs
		}
		select {
		case <-wrote:
		case <-e.exited:
			if logs = e.logs.String(); !ok(logs) {
				t.Fatalf("the exporter exited (%v) before its log showed %s:\n%s", e.waitErr, what, logs)
			}
		case <-late:
			t.Fatalf("the log never showed %s:\n%s", what, logs)
		}
	}
}

// scrape GETs /metrics and parses it.
func (e *exporter) scrape(t *testing.T) promtext.Samples {
	t.Helper()
	return parseMetrics(t, e.get(t, "/metrics"))
}

// parseMetrics parses an exposition, failing the test if it does not parse.
func parseMetrics(t *testing.T, text string) promtext.Samples {
	t.Helper()
	s, err := promtext.Parse(text)
	if err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
	return s
}

// up returns global_stability_up, or -1 if the exposition lacks it.
func up(s promtext.Samples) float64 {
	if v, ok := s.Get("global_stability_up"); ok {
		return v
	}
	return -1
}

func (e *exporter) get(t *testing.T, path string) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+e.addr+path, nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d\n%s", path, resp.StatusCode, b)
	}
	return string(b)
}

func TestAgainstAPIWithKeyFile(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: secretKey})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	e := startExporter(t, nil, "--api.url="+srv.URL, "--api.key-file="+writeFile(t, "\n"+secretKey+"\n"), "--log.level=debug")

	metrics := e.get(t, "/metrics")
	healthy := parseMetrics(t, metrics)
	for series, want := range map[string]float64{
		"global_stability_up": 1,
		promtext.Key("global_stability_api_requests_total", "code", "200", "endpoint", "global-stability"): 1,
		promtext.Key("global_stability_api_requests_total", "code", "200", "endpoint", "conflict"):         3,
	} {
		if got, ok := healthy[series]; !ok || got != want {
			t.Errorf("%s = %v (present: %v), want %v", series, got, ok, want)
		}
	}
	for _, family := range []string{"global_stability_exporter_build_info", "go_goroutines", "process_resident_memory_bytes"} {
		if len(healthy.Family(family)) == 0 {
			t.Errorf("/metrics lacks %s", family)
		}
	}
	landing := e.get(t, "/")
	if !strings.Contains(landing, `href="/metrics"`) {
		t.Errorf("landing page does not link to /metrics:\n%s", landing)
	}

	// An upstream that rejects the key, then one that fails outright: the
	// logs at debug level must still never show the key.
	sim.SetFault("global-stability", simulator.Fault{Kind: simulator.FaultStatus, Status: 401})
	sim.SetFault("conflict", simulator.Fault{Kind: simulator.FaultNonJSON})
	failing := e.get(t, "/metrics")
	unhealthy := parseMetrics(t, failing)
	if n, _ := unhealthy.Get("global_stability_api_requests_total", "code", "401", "endpoint", "global-stability"); up(unhealthy) != 0 || n != 1 {
		t.Errorf("failing scrape: want up 0 and a 401 counted:\n%s", failing)
	}

	// SIGTERM: a clean exit.
	if err := e.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := e.wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, e.logs)
	}
	logs := e.logs.String()
	for what, text := range map[string]string{"logs": logs, "metrics": metrics + failing, "landing page": landing} {
		if piece := leakcheck.Find(text, secretKey); piece != "" {
			t.Errorf("the %s show %q of the API key", what, piece)
		}
	}
	if !strings.Contains(logs, `level=error`) || !strings.Contains(logs, "failed_endpoints=global-stability,conflict ") || !strings.Contains(logs, "hint=") {
		t.Errorf("logs should report the failing endpoints in one line, with a hint about the key:\n%s", logs)
	}
	// What a user sees at start-up, and at debug level on each scrape.
	for _, want := range []string{
		`msg="scraping the Global Stability API" api_url=` + srv.URL + ` key_from="file `,
		"collectors=" + allCollectors(),
		`msg="API request" endpoint=conflict page=3 status=200 bytes=`,
		`msg="API request" endpoint=global-stability status=401`,
		fmt.Sprintf(`msg="collection started" endpoints=%d`, len(endpoint.All())),
		`msg="collection finished"`,
		`msg="shut down cleanly"`,
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("the log lacks %q:\n%s", want, logs)
		}
	}
	if strings.Contains(logs, "page=0") {
		t.Errorf("a request to an endpoint without pages is logged with page=0:\n%s", logs)
	}
	if !strings.Contains(logs, `msg="Listening on"`) || strings.Count(logs, "caller=") != strings.Count(logs, "\n") {
		t.Errorf("every line, the toolkit's included, should be one go-kit format:\n%s", logs)
	}
}

func TestKeyFromEnvironment(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: secretKey})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey, "GLOBAL_STABILITY_API_URL=" + srv.URL}, "--log.format=json")
	if got := up(e.scrape(t)); got != 1 {
		t.Errorf("with the key and URL from the environment, up is %v, want 1", got)
	}
	if !strings.HasPrefix(e.logs.String(), "{") {
		t.Errorf("--log.format=json: %s", e.logs)
	}
}

func TestDemo(t *testing.T) {
	e := startExporter(t, nil, "--demo")
	m := e.scrape(t)
	for series, want := range map[string]float64{
		"global_stability_up":              1,
		"global_stability_conflict_events": 120,
	} {
		if got, ok := m[series]; !ok || got != want {
			t.Errorf("demo: %s = %v (present: %v), want %v", series, got, ok, want)
		}
	}
	for _, series := range []string{"global_stability_score", promtext.Key("global_stability_pillar_indicator", "indicator", "fatalities_7d", "pillar", "conflict")} {
		if _, ok := m[series]; !ok {
			t.Errorf("demo /metrics lacks %s", series)
		}
	}
	e.waitForLog(t, "made up")
	// The demo's two accounts are labelled as a targets' file's are: each
	// probe's requests are counted under its own name, never mixed.
	e.get(t, "/probe?target=demo-b")
	m = e.scrape(t)
	for _, target := range []string{"demo-a", "demo-b"} {
		if v, ok := m.Get("global_stability_api_requests_total", "target", target, "endpoint", "summaries", "code", "200"); !ok || v != 1 {
			t.Errorf("requests_total{target=%q,summaries,200} = %v (present: %v), want 1", target, v, ok)
		}
	}
	if fam := m.Family("global_stability_api_requests_total"); len(fam) == 0 {
		t.Error("no request counters")
	} else {
		for series := range fam {
			if !strings.Contains(series, `target="demo-`) {
				t.Errorf("%s carries no demo target", series)
			}
		}
	}
}

// execExporter returns the exporter command with args and extra environment.
func execExporter(args []string, env ...string) *exec.Cmd {
	cmd := exec.Command(binary, args...)
	cmd.Env = append(os.Environ(), env...)
	return cmd
}

// allCollectors is the start-up log's list with every collector on.
func allCollectors() string {
	var on []string
	for _, e := range endpoint.All() {
		if e.Group == "" {
			on = append(on, e.Label)
		} else if !slices.Contains(on, e.Group) {
			on = append(on, e.Group)
		}
	}
	return strings.Join(on, ",")
}

// keyPieceOf returns the first 8-byte piece of key that text holds, or "".
func keyPieceOf(text, key string) string {
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(text, key[i:i+8]) {
			return key[i : i+8]
		}
	}
	return ""
}
