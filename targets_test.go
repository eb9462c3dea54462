// SPDX-License-Identifier: Apache-2.0

package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/internal/testutil/leakcheck"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// twoAccounts serves two simulated accounts and writes a targets' file
// naming them a and b, with their key files beside it.
func twoAccounts(t *testing.T) (file string) {
	t.Helper()
	dir := t.TempDir()
	a := simulator.New(simulator.Config{Key: "key-a-0123456789", Seed: 1})
	b := simulator.New(simulator.Config{Key: "key-b-0123456789", Seed: 2})
	srv := httptest.NewServer(simulator.Accounts(a, b))
	t.Cleanup(srv.Close)
	for name, key := range map[string]string{"a": "key-a-0123456789", "b": "key-b-0123456789"} {
		if err := os.WriteFile(filepath.Join(dir, name+".key"), []byte(key), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	file = filepath.Join(dir, "targets.yml")
	yaml := fmt.Sprintf("targets:\n  - {name: a, api_url: %q, api_key_file: a.key}\n  - {name: b, api_url: %q, api_key_file: b.key}\n", srv.URL, srv.URL)
	if err := os.WriteFile(file, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// status GETs or POSTs path and returns the status and body.
func (e *exporter) status(t *testing.T, method, path string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, "http://"+e.addr+path, nil)
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestATargetsFileServesProbes: with --config.file each target is a probe,
// and /metrics holds the exporter's own series, its API requests per
// target among them; POST or PUT /-/reload reloads, as Prometheus' does;
// the landing page lists the targets.
func TestATargetsFileServesProbes(t *testing.T) {
	e := startExporter(t, nil, "--config.file="+twoAccounts(t))
	for _, name := range []string{"a", "b"} {
		code, body := e.status(t, http.MethodGet, "/probe?target="+name)
		if v, ok := parseMetrics(t, body).Get("global_stability_up"); code != 200 || !ok || v != 1 {
			t.Errorf("/probe?target=%s: %d, up %v", name, code, v)
		}
	}
	own := e.scrape(t)
	if _, ok := own.Get("global_stability_up"); ok {
		t.Error("/metrics carries a target's series beside the exporter's own")
	}
	for _, name := range []string{"a", "b"} {
		if v, ok := own.Get("global_stability_api_requests_total", "target", name, "endpoint", "summaries", "code", "200"); !ok || v != 1 {
			t.Errorf("api_requests_total{target=%q, summaries, 200} = %v, want 1", name, v)
		}
	}
	if v, ok := own.Get("global_stability_exporter_config_last_reload_successful"); !ok || v != 1 {
		t.Errorf("config_last_reload_successful %v", v)
	}
	for method, want := range map[string]int{http.MethodPost: 200, http.MethodPut: 200, http.MethodGet: http.StatusMethodNotAllowed} { // as Prometheus answers
		if code, body := e.status(t, method, "/-/reload"); code != want {
			t.Errorf("%s /-/reload: %d %s, want %d", method, code, body, want)
		}
	}
	if code, body := e.status(t, http.MethodGet, "/probe?target=https://evil.example.com"); code != http.StatusBadRequest || !strings.Contains(body, "never a URL") {
		t.Errorf("a URL as the target: %d %s", code, body)
	}
	if page := e.get(t, "/"); !strings.Contains(page, `href="probe?target=a"`) || !strings.Contains(page, `href="probe?target=b"`) {
		t.Errorf("the landing page does not link each target's probe:\n%s", page)
	}
}

// TestOneAccountHasNoProbe: from flags, /probe and /-/reload say that they
// need a targets' file; --demo probes its accounts, and has no file to
// reload (400, the request's mistake).
func TestOneAccountHasNoProbe(t *testing.T) {
	e := startExporter(t, nil, "--demo")
	if code, body := e.status(t, http.MethodGet, "/probe?target=demo-b"); code != 200 {
		t.Errorf("--demo: /probe?target=demo-b: %d %s", code, body)
	}
	if v, ok := e.scrape(t).Get("global_stability_up"); !ok || v != 1 {
		t.Errorf("--demo: /metrics serves no account (up %v)", v)
	}
	if code, body := e.status(t, http.MethodPost, "/-/reload"); code != http.StatusBadRequest || !strings.Contains(body, "--demo") {
		t.Errorf("--demo: /-/reload: %d %s; want 400 saying there is no file to reload", code, body)
	}
	sim := simulator.New(simulator.Config{Key: secretKey})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	one := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, "--api.url="+srv.URL)
	for _, path := range []string{"/probe?target=a", "/-/reload"} {
		if code, body := one.status(t, http.MethodPost, path); code != http.StatusBadRequest || !strings.Contains(body, "--config.file") {
			t.Errorf("%s without a targets' file: %d %s", path, code, body)
		}
	}
}

// TestHeadOnTheBinaryAsksTheAPINothing: HEAD on the metrics path, as the
// binary wires it (the exporter's own series beside the account's),
// answers 200 and sends the API nothing, where a GET asks it.
func TestHeadOnTheBinaryAsksTheAPINothing(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: secretKey})
	srv := httptest.NewServer(sim)
	defer srv.Close()
	e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, "--api.url="+srv.URL)
	if code, _ := e.status(t, http.MethodHead, "/metrics"); code != http.StatusOK || sim.TotalRequests() != 0 {
		t.Errorf("HEAD /metrics: %d, %d requests to the API; want 200 and none", code, sim.TotalRequests())
	}
	if e.scrape(t); sim.TotalRequests() == 0 {
		t.Error("a GET sent the API nothing either, so the HEAD's count shows nothing")
	}
}

// TestATargetsFileExcludesTheFlagsAccount: --config.file with --api.url, a
// key or --demo is refused at start-up, as is a file that does not load,
// each problem named (target and field for the file's).
func TestATargetsFileExcludesTheFlagsAccount(t *testing.T) {
	file := twoAccounts(t)
	bad := filepath.Join(t.TempDir(), "bad.yml")
	if err := os.WriteFile(bad, []byte("targets:\n  - {name: a, api_url: \"https://a.example.com\", api_key_file: /nonexistent/a.key, max_pages: 0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		args, env []string
		want      []string
	}{
		"with --api.url":    {[]string{"--config.file=" + file, "--api.url=https://api.example.com"}, nil, []string{"--config.file (GLOBAL_STABILITY_CONFIG_FILE) and the flags' account (--api.url (GLOBAL_STABILITY_API_URL)", "exclude one another"}},
		"with a key":        {[]string{"--config.file=" + file}, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, []string{"GLOBAL_STABILITY_API_KEY) exclude one another"}},
		"with --demo":       {[]string{"--config.file=" + file, "--demo"}, nil, []string{"--demo", "--config.file"}},
		"a file that fails": {[]string{"--config.file=" + bad}, nil, []string{"targets[0] (a): api_key_file: file /nonexistent/a.key: no such file or directory", `targets[0] (a): max_pages \"0\": want at least 1`, "(GLOBAL_STABILITY_CONFIG_FILE)"}},
		"a file not there":  {[]string{"--config.file=/nonexistent/targets.yml"}, nil, []string{`--config.file=\"/nonexistent/targets.yml\"`, "no such file"}},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := execExporter(append(tc.args, "--web.listen-address=127.0.0.1:0"), tc.env...)
			out, _ := cmd.CombinedOutput()
			if code := cmd.ProcessState.ExitCode(); code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("the log lacks %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestEveryTargetsKeyIsRedactedFromTheLog: an API that echoes its key in
// its 401 body (and one that refuses a rotated key) never gets a piece of
// any target's key into the log.
func TestEveryTargetsKeyIsRedactedFromTheLog(t *testing.T) {
	dir := t.TempDir()
	keys := map[string]string{"a": "gsk_live_target_a_9d8c7b6a5f4e", "b": "gsk_live_target_b_1a2b3c4d5e6f"}
	echo := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, `{"error":"invalid key `+r.Header.Get("Authorization")+`"}`, http.StatusUnauthorized)
	}))
	defer echo.Close()
	var yaml strings.Builder
	yaml.WriteString("targets:\n")
	for name, key := range keys {
		if err := os.WriteFile(filepath.Join(dir, name+".key"), []byte(key), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&yaml, "  - {name: %s, api_url: %q, api_key_file: %s.key}\n", name, echo.URL, name)
	}
	file := filepath.Join(dir, "targets.yml")
	if err := os.WriteFile(file, []byte(yaml.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	e := startExporter(t, nil, "--config.file="+file, "--log.level=debug")
	for name := range keys {
		e.status(t, http.MethodGet, "/probe?target="+name)
	}
	logs := e.waitForLog(t, "HTTP 401")
	for name, key := range keys {
		if piece := keyPieceOf(logs, key); piece != "" {
			t.Errorf("the log shows %q of target %s's key:\n%s", piece, name, logs)
		}
		if !strings.Contains(logs, "target="+name) {
			t.Errorf("no log line names target %s:\n%s", name, logs)
		}
	}
}

// TestAnotherTargetsKeyNeverShows: target a's API echoes target b's key,
// which a never sent, before b was ever probed: raw in a 401 body, every
// character \u-escaped in a 500 body, that body base64-encoded in a 502
// (nested deeper: withheld), percent-encoded as the trend word and as it is
// as an indicator key (invalid values). Neither the log, at debug, nor the
// landing page, nor a's probe shows any of it, in any reading of one or
// two layers of escapes.
func TestAnotherTargetsKeyNeverShows(t *testing.T) {
	keys := map[string]string{"a": "gsk_live_echoing_a_9d8c7b6a5f4e3d2c", "b": "gsk_live_victim_b_1a2b3c4d5e6f7a8b"}
	victim := keys["b"]
	var everyChar, percent strings.Builder
	for i, r := range victim {
		fmt.Fprintf(&everyChar, `\u%04x`, r)
		fmt.Fprintf(&percent, "%%%02X", victim[i])
	}
	escaped := `{"detail":"not your key: ` + everyChar.String() + `"}`
	sim := simulator.New(simulator.Config{Key: keys["a"]})
	simDoc := func(r *http.Request, edit func(map[string]any)) []byte {
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, r)
		var doc map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &doc); err != nil {
			t.Errorf("%s: %v", r.URL.Path, err)
		}
		edit(doc)
		b, _ := json.Marshal(doc)
		return b
	}
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch strings.TrimPrefix(r.URL.Path, "/v1/") {
		case "summaries":
			http.Error(w, `{"error":"unauthorized","detail":"this is not `+victim+`"}`, http.StatusUnauthorized)
		case "briefings":
			http.Error(w, escaped, http.StatusInternalServerError)
		case "conflict":
			http.Error(w, "trace="+base64.StdEncoding.EncodeToString([]byte(escaped)), http.StatusBadGateway)
		case "global-stability":
			_, _ = w.Write(simDoc(r, func(d map[string]any) { d["trend"] = percent.String() }))
		case "global-stability/pillar/cyber":
			_, _ = w.Write(simDoc(r, func(d map[string]any) { d["indicators"] = []any{map[string]any{"key": victim, "value": 1}} }))
		default:
			sim.ServeHTTP(w, r)
		}
	}))
	defer a.Close()
	var bRequests atomic.Int64
	b := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		bRequests.Add(1)
		http.Error(w, "b is never probed", http.StatusTeapot)
	}))
	defer b.Close()
	dir := t.TempDir()
	yaml := fmt.Sprintf("targets:\n  - {name: a, api_url: %q, api_key_file: a.key}\n  - {name: b, api_url: %q, api_key_file: b.key}\n", a.URL, b.URL)
	for name, content := range map[string]string{"a.key": keys["a"], "b.key": keys["b"], "targets.yml": yaml} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	e := startExporter(t, nil, "--config.file="+filepath.Join(dir, "targets.yml"), "--log.level=debug")

	_, probed := e.status(t, http.MethodGet, "/probe?target=a")
	s := parseMetrics(t, probed)
	for endpoint, field := range map[string]string{"global-stability": "trend", "global-stability/pillar/cyber": "indicators"} {
		if v, _ := s.Get("global_stability_invalid_values", "endpoint", endpoint, "field", field); v != 1 {
			t.Errorf("invalid_values{%s, %s} = %v, want 1: the echo was not read", endpoint, field, v)
		}
	}
	landing := e.get(t, "/")
	logs := e.waitForLog(t, "scrape failed")
	if !strings.Contains(logs, redact.Mark) || !strings.Contains(logs, "<withheld: ") || !strings.Contains(landing, "Last scrape: ") {
		t.Errorf("the echoes were not all read (a Mark, a withheld text, the last scrape):\n%s\n%s", logs, landing)
	}
	for what, text := range map[string]string{"the log": logs, "the landing page": landing, "the probe": probed} {
		for _, reading := range oneOrTwoLayers(text) {
			if piece := leakcheck.Find(reading, victim); piece != "" {
				t.Errorf("%s shows %q of b's key:\n%s", what, piece, text)
				break
			}
		}
	}
	if n := bRequests.Load(); n != 0 {
		t.Errorf("b's API received %d requests: the echo came before b was ever probed, or should have", n)
	}
}

// oneOrTwoLayers is text and what it reads as once one or two layers of
// the escapes servers write are undone, with the standard library's
// decoders where there is one: HTML references, JSON's \u, percent
// escapes, base64 runs at each alignment.
func oneOrTwoLayers(text string) []string {
	unicode := regexp.MustCompile(`\\u[0-9a-fA-F]{4}`)
	percent := regexp.MustCompile(`%[0-9a-fA-F]{2}`)
	run := regexp.MustCompile(`[A-Za-z0-9+/]{11,}`)
	readers := []func(string) string{
		html.UnescapeString,
		func(s string) string {
			return unicode.ReplaceAllStringFunc(s, func(m string) string { r, _ := strconv.ParseUint(m[2:], 16, 32); return string(rune(r)) })
		},
		func(s string) string {
			return percent.ReplaceAllStringFunc(s, func(m string) string { c, _ := strconv.ParseUint(m[1:], 16, 8); return string([]byte{byte(c)}) })
		},
		func(s string) string {
			var out []string
			for _, r := range run.FindAllString(s, -1) {
				for off := range 4 {
					d, _ := base64.RawStdEncoding.DecodeString(r[off:][:len(r[off:])/4*4])
					out = append(out, string(d))
				}
			}
			return strings.Join(out, "\x00")
		},
	}
	out := []string{text}
	for _, first := range readers {
		once := first(text)
		out = append(out, once)
		for _, second := range readers {
			out = append(out, second(once))
		}
	}
	return out
}

// TestAKeyLoadedLaterLeavesTheLandingPage: a text stored before a key was
// loaded (target a's API echoing what will become target b's key) is
// redacted again when the landing page is rendered, so once a reload adds
// b, the page no longer shows b's key. The key is of lower-case words,
// which read as plain text: only a Redactor holding it can take it out (a
// key that looks like one is withheld from the start).
func TestAKeyLoadedLaterLeavesTheLandingPage(t *testing.T) {
	const later = "added-later-correct-horse-battery-staple"
	a := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such key: "+later, http.StatusUnauthorized)
	}))
	defer a.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "targets.yml")
	write := func(name, content string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.key", "gsk_live_target_a_0123456789abcdef")
	write("b.key", later)
	write("targets.yml", fmt.Sprintf("targets:\n  - {name: a, api_url: %q, api_key_file: a.key}\n", a.URL))
	e := startExporter(t, nil, "--config.file="+file)
	e.status(t, http.MethodGet, "/probe?target=a")
	if page := e.get(t, "/"); leakcheck.Find(page, later) == "" {
		t.Fatalf("before b is loaded, its key is only text a's API sent, and the page shows it; it does not:\n%s", page)
	}
	write("targets.yml", fmt.Sprintf("targets:\n  - {name: a, api_url: %q, api_key_file: a.key}\n  - {name: b, api_url: %q, api_key_file: b.key}\n", a.URL, a.URL))
	if code, body := e.status(t, http.MethodPost, "/-/reload"); code != http.StatusOK {
		t.Fatalf("reload: %d %s", code, body)
	}
	if page := e.get(t, "/"); leakcheck.Find(page, later) != "" {
		t.Errorf("after b's key was loaded, the landing page still shows it:\n%s", page)
	}
}
