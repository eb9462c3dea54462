package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/simulator"
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
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), "--web.listen-address") {
		t.Errorf("exit status %d, want 1 and a message naming --web.listen-address:\n%s", code, out)
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
