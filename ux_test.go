// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/simulator"
	"github.com/global-stability/global_stability_exporter/targets"
)

// TestHelpAndVersionGoToStdout: asked-for output goes to stdout, as
// Prometheus' does, so that --help | less shows it; nothing on stderr.
func TestHelpAndVersionGoToStdout(t *testing.T) {
	run := func(arg string) (string, string) {
		t.Helper()
		cmd := exec.Command(binary, arg)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s", arg, err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	help, stderr := run("--help")
	if stderr != "" || !strings.Contains(help, "--api.url") || !strings.Contains(help, "--api.key-file") {
		t.Errorf("--help: stdout %d bytes, stderr %q; want the flags on stdout only", len(help), stderr)
	}
	if !strings.Contains(help, "`:10110`") || strings.Contains(help, "9100") {
		t.Errorf("--help: the listen-address examples should use this exporter's port:\n%s", help)
	}
	ver, stderr := run("--version")
	want, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	// The test binary is built without -ldflags, as go run and go install
	// build it: the version falls back to the VERSION file.
	if m := regexp.MustCompile(`^global_stability_exporter, version (\S+) `).FindStringSubmatch(ver); stderr != "" || m == nil || m[1] != strings.TrimSpace(string(want)) {
		t.Errorf("--version: stdout %q, stderr %q; want version %s on stdout", ver, stderr, want)
	}
}

// TestPortInUseStopsStartUp: a listener that cannot start is a start-up
// error like any other: exit 1, and the flag named.
func TestPortInUseStopsStartUp(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "--demo", "--web.listen-address="+ln.Addr().String())
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "another process listens on that address") ||
		!strings.Contains(string(out), "--web.listen-address (GLOBAL_STABILITY_WEB_LISTEN_ADDRESS)") || strings.Contains(string(out), "web.config.file") {
		t.Errorf("exit status %d, want 1 and a message naming --web.listen-address and its variable, and not --web.config.file:\n%s", code, out)
	}
}

// TestDemoModeIsMarked: a person on the landing page and a query on
// /metrics can both tell made-up data from real data.
func TestDemoModeIsMarked(t *testing.T) {
	demo := startExporter(t, nil, "--demo")
	if v, ok := demo.scrape(t).Get("global_stability_exporter_demo"); !ok || v != 1 {
		t.Errorf("--demo: global_stability_exporter_demo = %v (present: %v), want 1", v, ok)
	}
	if landing := demo.get(t, "/"); !strings.Contains(landing, "DEMO MODE") {
		t.Errorf("--demo: the landing page does not say so:\n%s", landing)
	}

	sim := simulator.New(simulator.Config{Key: secretKey})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	real := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, "--api.url="+srv.URL)
	if v, ok := real.scrape(t).Get("global_stability_exporter_demo"); !ok || v != 0 {
		t.Errorf("real API: global_stability_exporter_demo = %v (present: %v), want 0", v, ok)
	}
	landing := real.get(t, "/")
	if strings.Contains(landing, "DEMO") {
		t.Errorf("real API: the landing page claims demo mode")
	}
	// Only what is served is linked: no pprof.
	for _, link := range regexp.MustCompile(`href="([^"]+)"`).FindAllStringSubmatch(landing, -1) {
		if !strings.HasPrefix(link[1], "/") {
			continue
		}
		resp, err := http.Get("http://" + real.addr + link[1])
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("the landing page links to %s, which answers %d", link[1], resp.StatusCode)
		}
	}
}

// TestHeadAsksNothingOfTheAPI: a HEAD (a load balancer's health check,
// curl -I) answers without a collection.
func TestHeadAsksNothingOfTheAPI(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: secretKey})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, "--api.url="+srv.URL)
	resp, err := http.Head("http://" + e.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Errorf("HEAD /metrics: %d %q, want 200 text/plain", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	if n := sim.TotalRequests(); n != 0 {
		t.Errorf("HEAD /metrics sent %d API requests, want none", n)
	}
	if up(e.scrape(t)) != 1 || sim.TotalRequests() == 0 {
		t.Error("a GET after the HEAD did not collect")
	}
}

// TestAPIURLEndingInV1: the exporter adds /v1 itself; a base address that
// already ends in it is used without it, and the log says so.
func TestAPIURLEndingInV1(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: secretKey})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, "--api.url="+srv.URL+"/v1/")
	if got := up(e.scrape(t)); got != 1 {
		t.Errorf("--api.url=.../v1/: up %v, want 1\n%s", got, e.logs)
	}
	e.waitForLog(t, "ends in /v1")
}

// TestEveryStartUpProblemAtOnce: values that do not parse, values out of
// range and a bad key are all reported in one run, each on a line of its
// own in the log's format, naming its flag and its environment variable.
func TestEveryStartUpProblemAtOnce(t *testing.T) {
	emptyKey := writeFile(t, "\n")
	// What kingpin stops at (an unknown flag, a value given to --no-…, an
	// argument) comes first, and does not hide what follows it.
	cmd := execExporter([]string{"--api.urll=https://api.example.com", "--no-collector.summary=true", "metrics", "--api.url=https://api.example.com",
		"--api.key-file=" + emptyKey, "--api.timeout=10", "--api.max-pages=0", "--web.listen-address=127.0.0.1:0"},
		"GLOBAL_STABILITY_COLLECTOR_PILLARS=maybe", "GLOBAL_STABILITY_WEB_MAX_REQUESTS=-3")
	out, _ := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 {
		t.Fatalf("exit %d, want 1:\n%s", code, out)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	want := []string{
		`unknown long flag '--api.urll'`,
		`\"--no-collector.summary=true\": the exporter takes no arguments`,
		`\"metrics\": the exporter takes no arguments`,
		`--api.timeout=\"10\" (GLOBAL_STABILITY_API_TIMEOUT): want a duration with a unit`,
		`--collector.pillars=\"maybe\" (GLOBAL_STABILITY_COLLECTOR_PILLARS): want true or false`,
		`--web.max-requests=\"-3\" (GLOBAL_STABILITY_WEB_MAX_REQUESTS)`,
		`--api.max-pages=\"0\" (GLOBAL_STABILITY_API_MAX_PAGES)`,
		`--api.key-file (GLOBAL_STABILITY_API_KEY_FILE): file ` + emptyKey + ` holds a key of 0 characters`,
	}
	if len(lines) != len(want) {
		t.Errorf("%d lines, want one per problem (%d):\n%s", len(lines), len(want), out)
	}
	for _, w := range want {
		found := false
		for _, l := range lines {
			if strings.Contains(l, w) && strings.Contains(l, "level=error") && strings.Contains(l, `msg="bad configuration; see --help"`) {
				found = true
			}
		}
		if !found {
			t.Errorf("no error line with %q:\n%s", w, out)
		}
	}
}

// TestAKeyVariableSetButEmpty is not a key missing: it says which variable.
func TestAKeyVariableSetButEmpty(t *testing.T) {
	cmd := execExporter([]string{"--api.url=https://api.example.com", "--web.listen-address=127.0.0.1:0"}, "GLOBAL_STABILITY_API_KEY=  ")
	out, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "GLOBAL_STABILITY_API_KEY holds a key of 0 characters") || strings.Contains(string(out), "want one of them") {
		t.Errorf("want the empty variable named:\n%s", out)
	}
}

// TestAShortKeyIsRefusedFromEverySource walks the ways a key comes in:
// the environment, --api.key-file and its variable, a targets' file. A
// key one character short of redact.MinKeyLength (a key file ending in
// a newline, as an editor leaves it) stops start-up from each, naming
// where it came from, and never shows the key.
func TestAShortKeyIsRefusedFromEverySource(t *testing.T) {
	short := secretKey[:redact.MinKeyLength-1]
	keyFile := writeFile(t, short+"\n")
	file := filepath.Join(t.TempDir(), "targets.yml")
	if err := os.WriteFile(file, []byte("targets:\n  - {name: a, api_url: \"https://a.example.com\", api_key_file: "+keyFile+"}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	const api = "--api.url=https://api.example.com"
	for name, tc := range map[string]struct {
		args, env []string
		from      string
	}{
		targets.KeyEnv:                  {[]string{api}, []string{targets.KeyEnv + "=" + short}, targets.KeyEnv},
		"--api.key-file":                {[]string{api, "--api.key-file=" + keyFile}, nil, "--api.key-file (GLOBAL_STABILITY_API_KEY_FILE): file " + keyFile},
		"GLOBAL_STABILITY_API_KEY_FILE": {[]string{api}, []string{"GLOBAL_STABILITY_API_KEY_FILE=" + keyFile}, "--api.key-file (GLOBAL_STABILITY_API_KEY_FILE): file " + keyFile},
		"a targets' file":               {[]string{"--config.file=" + file}, nil, "targets[0] (a): api_key_file: file " + keyFile},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			// An exporter that took the key would serve until killed.
			ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, binary, append(tc.args, "--web.listen-address=127.0.0.1:0")...)
			cmd.Env = append(os.Environ(), tc.env...)
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("a key of %d characters: exit %d, want 1:\n%s", len(short), code, out)
			}
			want := fmt.Sprintf("%s holds a key of %d characters: want at least %d", tc.from, len(short), redact.MinKeyLength)
			if !strings.Contains(string(out), want) {
				t.Errorf("the log lacks %q:\n%s", want, out)
			}
			if piece := keyPieceOf(string(out), short); piece != "" {
				t.Errorf("the log shows %q of the key:\n%s", piece, out)
			}
		})
	}
}

// TestAKeyFileNobodyMayReadIsRefused: permission denied stops start-up,
// naming the flag (root reads every file, so this runs as another user).
func TestAKeyFileNobodyMayReadIsRefused(t *testing.T) {
	if os.Getuid() == 0 {
		t.Skip("root reads any file")
	}
	key := writeFile(t, secretKey)
	if err := os.Chmod(key, 0); err != nil {
		t.Fatal(err)
	}
	cmd := execExporter([]string{"--api.url=https://api.example.com", "--api.key-file=" + key, "--web.listen-address=127.0.0.1:0"})
	out, _ := cmd.CombinedOutput()
	if want := "--api.key-file (GLOBAL_STABILITY_API_KEY_FILE): file " + key + ": permission denied"; cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), want) {
		t.Errorf("want exit 1 and %q:\n%s", want, out)
	}
}

// TestPlainHTTPWarnsThatTheKeyTravelsInClear: --api.url=http:// to another
// host warns at start-up; to this host (a local proxy) it does not.
func TestPlainHTTPWarnsThatTheKeyTravelsInClear(t *testing.T) {
	for _, tc := range []struct {
		url  string
		warn bool
	}{{"http://api.example.invalid:8080", true}, {"http://127.0.0.1:1", false}, {"https://api.example.invalid", false}} {
		e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, "--api.url="+tc.url)
		logs := e.waitForLog(t, "Listening on")
		if got := strings.Contains(logs, "unencrypted"); got != tc.warn {
			t.Errorf("%s: warned %v, want %v:\n%s", tc.url, got, tc.warn, logs)
		}
	}
}

// TestLandingPageShowsTheAPIAndTheLastScrape: the first things a user
// checks, without reading the log.
func TestLandingPageShowsTheAPIAndTheLastScrape(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: secretKey})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	u := strings.Replace(srv.URL, "http://", "http://user:pa55word@", 1)
	e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, "--api.url="+u)
	if page := e.get(t, "/"); !strings.Contains(page, "API: "+srv.URL) || !strings.Contains(page, "Last scrape: none yet") || strings.Contains(page, "pa55word") {
		t.Errorf("before a scrape, want the API URL without credentials and no scrape:\n%s", page)
	}
	e.scrape(t)
	n := len(endpoint.All())
	if page := e.get(t, "/"); !strings.Contains(page, fmt.Sprintf("every endpoint answered (%d)", n)) {
		t.Errorf("after a whole scrape:\n%s", page)
	}
	sim.SetFault("conflict", simulator.Fault{Kind: simulator.FaultStatus, Status: 500})
	e.scrape(t)
	if page := e.get(t, "/"); !strings.Contains(page, fmt.Sprintf("1 of %d endpoints failed: conflict. Why: HTTP 500 Internal Server Error", n)) {
		t.Errorf("after a failed scrape, want the endpoint and why:\n%s", page)
	}
}

// TestEveryLineHasOneTimeFormat: our lines and the exporter toolkit's
// ("Listening on") carry time in one format, RFC 3339 in UTC, in logfmt
// and in JSON, so that a log pipeline parsing time reads every line.
func TestEveryLineHasOneTimeFormat(t *testing.T) {
	for _, format := range []string{"logfmt", "json"} {
		e := startExporter(t, nil, "--demo", "--log.format="+format)
		logs := e.waitForLog(t, "Listening on")
		lines := strings.Split(strings.TrimSpace(logs), "\n")
		if len(lines) < 3 {
			t.Fatalf("%s: too few lines to compare:\n%s", format, logs)
		}
		for _, line := range lines {
			var ts string
			if format == "json" {
				var v map[string]any
				if err := json.Unmarshal([]byte(line), &v); err != nil {
					t.Fatalf("json: %q is not a JSON object: %v", line, err)
				}
				ts, _ = v["time"].(string)
			} else if m := regexp.MustCompile(`(?:^| )time=(\S+)`).FindStringSubmatch(line); m != nil {
				ts = m[1]
			}
			if _, err := time.Parse(time.RFC3339Nano, ts); err != nil || !strings.HasSuffix(ts, "Z") {
				t.Errorf("%s: time %q is not RFC 3339 in UTC: %s", format, ts, line)
			}
		}
	}
}
