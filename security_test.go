// SPDX-License-Identifier: Apache-2.0

package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"html"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/global-stability/global_stability_exporter/internal/redact"
	"github.com/global-stability/global_stability_exporter/internal/testutil/leakcheck"
	"github.com/global-stability/global_stability_exporter/simulator"
	"github.com/global-stability/global_stability_exporter/targets"
)

// testPKI is a CA and the certificates it signs, written as PEM files.
type testPKI struct {
	dir    string
	caCert *x509.Certificate
	caKey  *ecdsa.PrivateKey
	serial int64
}

func newPKI(t *testing.T) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	p := &testPKI{dir: t.TempDir(), caCert: cert, caKey: key, serial: 1}
	p.write(t, "ca.pem", "CERTIFICATE", der)
	return p
}

func (p *testPKI) write(t *testing.T, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue signs a certificate for 127.0.0.1 usable by servers and clients,
// and returns it with the paths of its PEM files.
func (p *testPKI) issue(t *testing.T, name string) (tls.Certificate, string, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(p.serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPath := p.write(t, name+".pem", "CERTIFICATE", der)
	keyPath := p.write(t, name+"-key.pem", "EC PRIVATE KEY", keyDER)
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		t.Fatal(err)
	}
	return pair, certPath, keyPath
}

func (p *testPKI) pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AddCert(p.caCert)
	return pool
}

// tlsAPI serves the simulator over TLS with a certificate of pki, requiring
// a client certificate when mutual is set.
func tlsAPI(t *testing.T, pki *testPKI, mutual bool) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(simulator.New(simulator.Config{Key: secretKey}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are what some cases test
	cert, _, _ := pki.issue(t, "api")
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	if mutual {
		srv.TLS.ClientAuth = tls.RequireAndVerifyClientCert
		srv.TLS.ClientCAs = pki.pool()
	}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

func TestUpstreamTLS(t *testing.T) {
	pki := newPKI(t)
	keyEnv := []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}
	caFile := filepath.Join(pki.dir, "ca.pem")

	t.Run("CA file", func(t *testing.T) {
		srv := tlsAPI(t, pki, false)
		e := startExporter(t, keyEnv, "--api.url="+srv.URL, "--api.tls.ca-file="+caFile)
		if got := up(e.scrape(t)); got != 1 {
			t.Errorf("with the API's CA, up is not 1:\n%s", e.logs)
		}
	})
	t.Run("unknown CA", func(t *testing.T) {
		srv := tlsAPI(t, pki, false)
		e := startExporter(t, keyEnv, "--api.url="+srv.URL)
		if got := up(e.scrape(t)); got != 0 {
			t.Errorf("a certificate from an unknown CA must fail the scrape:\n%s", e.logs)
		}
		e.waitForLog(t, "certificate")
	})
	t.Run("insecure skip verify", func(t *testing.T) {
		srv := tlsAPI(t, pki, false)
		e := startExporter(t, keyEnv, "--api.url="+srv.URL, "--api.tls.insecure-skip-verify")
		if got := up(e.scrape(t)); got != 1 {
			t.Errorf("insecure-skip-verify: up is not 1:\n%s", e.logs)
		}
		if logs := e.waitForLog(t, "NOT verified"); !strings.Contains(logs, "level=warn") {
			t.Errorf("insecure-skip-verify must warn loudly:\n%s", logs)
		}
	})
	t.Run("client certificate", func(t *testing.T) {
		srv := tlsAPI(t, pki, true)
		_, certFile, keyFile := pki.issue(t, "exporter")
		e := startExporter(t, keyEnv, "--api.url="+srv.URL, "--api.tls.ca-file="+caFile, "--api.tls.cert-file="+certFile, "--api.tls.key-file="+keyFile)
		if got := up(e.scrape(t)); got != 1 {
			t.Errorf("mutual TLS with a client certificate: up is not 1:\n%s", e.logs)
		}
		without := startExporter(t, keyEnv, "--api.url="+srv.URL, "--api.tls.ca-file="+caFile)
		if got := up(without.scrape(t)); got != 0 {
			t.Errorf("mutual TLS without a client certificate must fail")
		}
	})
}

func TestTLSFlagErrors(t *testing.T) {
	pki := newPKI(t)
	_, certFile, _ := pki.issue(t, "c")
	for name, args := range map[string][]string{
		"missing CA file":   {"--api.tls.ca-file=/nonexistent/ca.pem"},
		"cert without key":  {"--api.tls.cert-file=" + certFile},
		"unreadable client": {"--api.tls.cert-file=/nonexistent/c.pem", "--api.tls.key-file=/nonexistent/k.pem"},
	} {
		t.Run(name, func(t *testing.T) {
			cmd := execExporter(append(args, "--api.url=https://127.0.0.1:1", "--web.listen-address=127.0.0.1:0"), "GLOBAL_STABILITY_API_KEY="+secretKey)
			out, _ := cmd.CombinedOutput()
			if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(out), "--api.tls") {
				t.Errorf("exit %d, want 1 with a message naming --api.tls.*:\n%s", cmd.ProcessState.ExitCode(), out)
			}
		})
	}
}

// TestWebConfigTLSAndBasicAuth: the exporter's own endpoint through
// exporter-toolkit's web config: TLS, and 401 without credentials.
func TestWebConfigTLSAndBasicAuth(t *testing.T) {
	pki := newPKI(t)
	_, certFile, keyFile := pki.issue(t, "exporter-web")
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	webConfig := writeFile(t, fmt.Sprintf("tls_server_config:\n  cert_file: %s\n  key_file: %s\nbasic_auth_users:\n  prometheus: %s\n", certFile, keyFile, hash))

	e := startExporter(t, nil, "--demo", "--web.config.file="+webConfig)

	httpsClient := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pki.pool()}}, Timeout: 10 * time.Second}
	get := func(user, pass string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, "https://"+e.addr+"/metrics", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := httpsClient.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, _ := get("", ""); code != http.StatusUnauthorized {
		t.Errorf("without credentials: %d, want 401\n%s", code, e.logs)
	}
	if code, _ := get("prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	if code, body := get("prometheus", "s3cret"); code != 200 || up(parseMetrics(t, body)) != 1 {
		t.Errorf("with credentials: %d, want 200 and metrics", code)
	}
	plain, err := http.Get("http://" + e.addr + "/metrics")
	if err == nil {
		plain.Body.Close()
		if plain.StatusCode == 200 {
			t.Error("plain HTTP must not be served when TLS is configured")
		}
	}
}

// TestKeyRotationWithoutRestart: the key file changes on disk; the next
// scrape uses the new key.
func TestKeyRotationWithoutRestart(t *testing.T) {
	const newKey = "gsk_live_rotated_0f1e2d3c4b5a"
	sim := simulator.New(simulator.Config{Key: secretKey})
	var mu sync.Mutex
	accepted := secretKey
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		ok := r.Header.Get("Authorization") == "Bearer "+accepted
		mu.Unlock()
		if !ok {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		r.Header.Set("Authorization", "Bearer "+secretKey)
		sim.ServeHTTP(w, r)
	}))
	defer srv.Close()
	keyFile := writeFile(t, secretKey+"\n")
	e := startExporter(t, nil, "--api.url="+srv.URL, "--api.key-file="+keyFile, "--log.level=debug")
	if got := up(e.scrape(t)); got != 1 {
		t.Fatal("up is not 1 with the first key")
	}
	mu.Lock()
	accepted = newKey
	mu.Unlock()
	if got := up(e.scrape(t)); got != 0 {
		t.Fatal("the API refuses the old key, yet up is not 0")
	}
	if err := os.WriteFile(keyFile, []byte(newKey+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := up(e.scrape(t)); got != 1 {
		t.Errorf("after rotating the key file, up is not 1:\n%s", e.logs)
	}
	// Said once, naming where the key comes from.
	logs := e.waitForLog(t, "the API key changed")
	if n := strings.Count(logs, "the API key changed"); n != 1 || !strings.Contains(logs, "key_from=\"file "+keyFile+"\"") {
		t.Errorf("the rotation logged %d times, want once naming the file:\n%s", n, logs)
	}
	if logs := e.logs.String(); strings.Contains(logs, secretKey) || strings.Contains(logs, newKey) {
		t.Error("a key appears in the debug log")
	}
}

// TestGracefulShutdown: SIGTERM during a scrape lets it finish.
func TestGracefulShutdown(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: secretKey, Latency: 700 * time.Millisecond})
	arrived, once := make(chan struct{}), sync.Once{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(func() { close(arrived) })
		sim.ServeHTTP(w, r)
	}))
	defer srv.Close()
	e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, "--api.url="+srv.URL)
	type result struct {
		code int
		body string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		resp, err := http.Get("http://" + e.addr + "/metrics")
		if err != nil {
			done <- result{err: err}
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		done <- result{code: resp.StatusCode, body: string(b)}
	}()
	<-arrived // the scrape is waiting for the API now
	if err := e.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r := <-done
	if r.err != nil || r.code != 200 || up(parseMetrics(t, r.body)) != 1 {
		t.Errorf("the scrape in flight at SIGTERM: %v, status %d; want a whole answer", r.err, r.code)
	}
	if err := e.wait(); err != nil {
		t.Errorf("exit after SIGTERM: %v\n%s", err, e.logs)
	}
}

// TestStandardLibraryLogIsRoutedAndRedacted: an upstream that sends bytes
// after a complete response makes net/http log "Unsolicited response ...
// starting with <the bytes>" through the standard log package. The
// exporter routes that into its own log format, at warn, and drops the
// bytes: they are the upstream's, here the key followed by other text.
func TestStandardLibraryLogIsRoutedAndRedacted(t *testing.T) {
	key := "k7Qz" + strings.Repeat("Xy9_", 9) + "Lm3P" // 44 characters
	sim := simulator.New(simulator.Config{Key: key})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, r)
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		fmt.Fprintf(buf, "HTTP/1.1 %d OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", rec.Code, rec.Body.Len())
		_, _ = buf.Write(rec.Body.Bytes())
		_ = buf.Flush()
		// The connection is idle in the exporter's pool now: speak out of
		// turn, the key first, then other text.
		time.Sleep(100 * time.Millisecond)
		fmt.Fprintf(buf, "%s X-Echo-Marker: here\r\n\r\n", strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
		_ = buf.Flush()
		time.Sleep(200 * time.Millisecond)
	}))
	defer srv.Close()
	e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + key}, "--api.url="+srv.URL, "--log.level=debug")
	e.get(t, "/metrics")
	logs := e.waitForLog(t, "Unsolicited response")
	for _, line := range strings.Split(logs, "\n") {
		if !strings.Contains(line, "Unsolicited response") {
			continue
		}
		if !strings.Contains(line, "level=warn") || !strings.Contains(line, "caller=") {
			t.Errorf("the standard library's line is not in our format at warn: %s", line)
		}
		if strings.Contains(line, "X-Echo-Marker") {
			t.Errorf("the line echoes the bytes the upstream sent: %s", line)
		}
	}
	if piece := leakcheck.Find(logs, key); piece != "" {
		t.Fatalf("the log shows a piece of the key (%q):\n%s", piece, logs)
	}
}

// TestFileKeyFollowsEveryRotation: the key file is read for every request,
// so every way a key is rotated reaches the next request: rewritten in
// place with a key of the same size, replaced by a rename (a Kubernetes
// Secret's symlink swap); a file emptied is an error, not an empty key.
func TestFileKeyFollowsEveryRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(path, "key-aaaaaaaa-0123456\n")
	key, _, _ := targets.KeySource(path)
	want := func(w string) {
		t.Helper()
		if got, err := key(); err != nil || got != w {
			t.Fatalf("key() = %q, %v; want %q", got, err, w)
		}
	}
	want("key-aaaaaaaa-0123456")
	write(path, "key-bbbbbbbb-0123456") // same size, maybe the same modification time
	want("key-bbbbbbbb-0123456")
	write(filepath.Join(dir, "new"), "  key-cccc-0123456789  ")
	if err := os.Rename(filepath.Join(dir, "new"), path); err != nil {
		t.Fatal(err)
	}
	want("key-cccc-0123456789")
	write(path, " \n")
	if _, err := key(); err == nil || !strings.Contains(err.Error(), "holds a key of 0 characters") {
		t.Errorf("an empty key file: err = %v, want one saying it is empty", err)
	}
}

// TestTheLandingPageQuotesOnlyPlainText: the landing page quotes the API's
// address only where it reads plainly: a path holding what may be a key
// (held by no target, so only the plain-text rule can keep it out) is
// withheld, and a plain one is shown.
func TestTheLandingPageQuotesOnlyPlainText(t *testing.T) {
	srv := httptest.NewServer(simulator.New(simulator.Config{Key: secretKey}))
	defer srv.Close()
	for path, plain := range map[string]bool{"/gsis/eu-west": true, "/k3J9xPq2Lm8Rt5Vw7Yz1Ab4C": false} {
		e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + secretKey}, "--api.url="+srv.URL+path)
		page := e.get(t, "/")
		if shown := strings.Contains(page, "API: "+srv.URL+path); shown != plain || !plain && (strings.Contains(page, path[1:9]) || !strings.Contains(page, "&lt;withheld: ")) {
			t.Errorf("API URL %s: shown %v, want %v, withheld otherwise:\n%s", srv.URL+path, shown, plain, page)
		}
	}
}

// TestAKeyInTheAPIURLIsNeverShown: a key of small letters reads as words,
// so only the keys the process holds find it. Pasted into --api.url's path,
// it is shown neither on the landing page, which quotes the API's address,
// nor in the log, while the rest of the address is.
func TestAKeyInTheAPIURLIsNeverShown(t *testing.T) {
	key := "quietmorningriverstonelantern"
	srv := httptest.NewServer(http.StripPrefix("/"+key, simulator.New(simulator.Config{Key: key})))
	defer srv.Close()
	e := startExporter(t, []string{"GLOBAL_STABILITY_API_KEY=" + key}, "--api.url="+srv.URL+"/"+key)
	if got := up(e.scrape(t)); got != 1 {
		t.Fatalf("up = %v: the API behind the address was not scraped\n%s", got, e.logs)
	}
	page := e.get(t, "/")
	for what, text := range map[string]string{"landing page": page, "log": e.logs.String()} {
		if piece := leakcheck.Find(text, key); piece != "" {
			t.Errorf("the %s shows %q of the key", what, piece)
		}
	}
	if !strings.Contains(page, "API: "+srv.URL+"/"+html.EscapeString(redact.Mark)) {
		t.Errorf("the landing page does not show the API's address with the key taken out:\n%s", page)
	}
}
