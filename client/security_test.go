// SPDX-License-Identifier: Apache-2.0

package client_test

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// randomKey returns a key of n URL-safe characters.
func randomKey(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// keyPiece returns a piece of key of 8 bytes or more that text holds, or "".
// Any such piece holds an 8-byte window of the key, so checking the windows
// is enough.
func keyPiece(text, key string) string {
	for i := 0; i+8 <= len(key); i++ {
		if strings.Contains(text, key[i:i+8]) {
			return key[i : i+8]
		}
	}
	return ""
}

// keySizes are a short key and a JWT-sized one, which crosses the end of
// every excerpt the client keeps.
var keySizes = []int{16, 160}

// TestKeyNeverInErrors runs the key, echoed by the upstream, through every
// path by which upstream bytes reach an error: a non-2xx body, a non-JSON
// 2xx body, a Content-Type, and the transport's complaints about a broken
// header line, status line or Location. The key sits at every offset
// around the point where an excerpt is cut, so that a piece of it would
// survive a redaction of whole keys only.
func TestKeyNeverInErrors(t *testing.T) {
	for _, size := range keySizes {
		key := randomKey(t, size)
		bearer := "Bearer " + key
		check := func(t *testing.T, name string, err error) {
			t.Helper()
			if err == nil {
				t.Fatalf("%s: no error", name)
			}
			if piece := keyPiece(err.Error(), key); piece != "" {
				t.Fatalf("%s: error shows %q of the key: %v", name, piece, err)
			}
			for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
				if piece := keyPiece(e.Error(), key); piece != "" {
					t.Fatalf("%s: a wrapped error shows %q of the key: %v", name, piece, e)
				}
			}
		}

		t.Run(fmt.Sprintf("%d-char key in bodies", size), func(t *testing.T) {
			var mu sync.Mutex
			status, offset := 0, 0
			srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				st, off := status, offset
				mu.Unlock()
				w.Header().Set("Content-Type", "text/plain")
				w.WriteHeader(st)
				// Filler, then the echoed key, then more: the key crosses
				// the excerpt's end at some offset.
				fmt.Fprint(w, strings.Repeat("a", off)+r.Header.Get("Authorization")+strings.Repeat("z", 300))
			})
			c := newClient(t, srv.URL, func(cfg *client.Config) { cfg.APIKey = client.StaticKey(key) })
			for _, st := range []int{http.StatusUnauthorized, http.StatusOK} {
				for off := 0; off < 300; off++ {
					mu.Lock()
					status, offset = st, off
					mu.Unlock()
					_, err := summary(c)
					check(t, fmt.Sprintf("status %d, key at %d", st, off), err)
				}
			}
		})

		t.Run(fmt.Sprintf("%d-char key in headers", size), func(t *testing.T) {
			raw := map[string]string{
				"Content-Type":    "HTTP/1.1 200 OK\r\nContent-Type: text/html; " + bearer + "\r\nContent-Length: 2\r\n\r\n{}",
				"header line":     "HTTP/1.1 200 OK\r\n" + bearer + "\r\nContent-Length: 2\r\n\r\n{}",
				"status line":     "HTTP/1.1 2" + key + " OK\r\nContent-Length: 2\r\n\r\n{}",
				"status code":     "HTTP/1.1 " + key + "\r\nContent-Length: 2\r\n\r\n{}",
				"Location":        "HTTP/1.1 302 Found\r\nLocation: http://[" + key + "/\r\nContent-Length: 0\r\n\r\n",
				"redirect target": "HTTP/1.1 302 Found\r\nLocation: http://elsewhere.invalid/" + key + "?q=" + key + "\r\nContent-Length: 0\r\n\r\n",
			}
			for name, response := range raw {
				srv := rawServer(t, response)
				c := newClient(t, srv.URL, func(cfg *client.Config) { cfg.APIKey = client.StaticKey(key) })
				_, err := overview(c)
				check(t, name, err)
				t.Logf("%s: %v", name, err)
			}
		})
	}
}

// rawServer answers every request with response, written as is on the
// hijacked connection, so that it can break HTTP as no handler could.
func rawServer(t *testing.T, response string) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		_, _ = buf.WriteString(response)
		_ = buf.Flush()
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// TestRedirectsStayWithinTheOrigin: a same-origin redirect is followed; a
// redirect to another scheme, port or host fails with ErrRedirectRefused
// before the key is sent there; a loop stops.
func TestRedirectsStayWithinTheOrigin(t *testing.T) {
	// elsewhere records every request that reaches it with a key.
	var mu sync.Mutex
	var leaked []string
	elsewhere := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		leaked = append(leaked, r.Host+" "+r.Header.Get("Authorization"))
		mu.Unlock()
		fmt.Fprint(w, `{"summary":"s","as_of":"2026-11-22T00:00:00Z"}`)
	})
	elsewherePort := strings.TrimPrefix(elsewhere.URL, "http://127.0.0.1:")

	redirectTo := func(target func(r *http.Request) string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/summaries" {
				http.Redirect(w, r, target(r)+"?token=zzz", http.StatusFound)
				return
			}
			fmt.Fprint(w, `{"summary":"s","as_of":"2026-11-22T00:00:00Z"}`)
		}
	}
	tests := []struct {
		name   string
		tls    bool
		target func(r *http.Request) string
		ok     bool
	}{
		{"same origin, another path", false, func(r *http.Request) string { return "/v1/summaries/current" }, true},
		{"https to http on the same host and port", true, func(r *http.Request) string { return "http://" + r.Host + "/v1/summaries/current" }, false},
		{"same host, another port", false, func(r *http.Request) string { return "http://127.0.0.1:" + elsewherePort + "/v1/x" }, false},
		{"another host", false, func(r *http.Request) string { return "http://localhost:" + elsewherePort + "/v1/x" }, false},
		{"a loop", false, func(r *http.Request) string { return "/v1/summaries" }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var srv *httptest.Server
			if tt.tls {
				srv = httptest.NewTLSServer(redirectTo(tt.target))
				srv.Config.ErrorLog = log.New(io.Discard, "", 0)
				t.Cleanup(srv.Close)
			} else {
				srv = serve(t, redirectTo(tt.target))
			}
			// The caller's client follows every redirect (as prometheus/common's
			// does with follow_redirects); the client's own policy must win.
			hc := &http.Client{Transport: srv.Client().Transport}
			c := newClient(t, srv.URL, func(cfg *client.Config) { cfg.HTTPClient = hc })
			_, err := summary(c)
			if tt.ok {
				if err != nil {
					t.Fatalf("same-origin redirect: %v", err)
				}
				return
			}
			if !errors.Is(err, client.ErrRedirectRefused) {
				t.Fatalf("err = %v, want ErrRedirectRefused", err)
			}
			if strings.Contains(err.Error(), "token") {
				t.Errorf("the error shows the target's query: %v", err)
			}
			t.Log(err)
		})
	}
	mu.Lock()
	defer mu.Unlock()
	if len(leaked) > 0 {
		t.Errorf("requests reached another origin: %q", leaked)
	}
}

// TestRedirectTargetIsNamed: the refusal says where the API pointed, so an
// operator can fix --api.url.
func TestRedirectTargetIsNamed(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://api.example.net/v1/summaries?token=abc", http.StatusMovedPermanently)
	})
	_, err := summary(newClient(t, srv.URL))
	if !errors.Is(err, client.ErrRedirectRefused) || !strings.Contains(err.Error(), "https://api.example.net/v1/summaries") || strings.Contains(err.Error(), "token") {
		t.Fatalf("err = %v, want a refusal naming https://api.example.net/v1/summaries without its query", err)
	}
}

// TestErrorsAreRedactedOfEveryKeyOfTheProcess: the client redacts with the
// process's Redactor. Another target's key (held from that target's build,
// never sent by this client), echoed by this client's API raw, escaped one
// layer or nested deeper, is in none of its errors, the nested echo
// withheld whole; so is the client's own key, held from its first request.
func TestErrorsAreRedactedOfEveryKeyOfTheProcess(t *testing.T) {
	own, other := randomKey(t, 40), randomKey(t, 40)
	keys := redact.New()
	keys.NewRing().Remember(other)
	var mu sync.Mutex
	echo := ""
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		http.Error(w, echo, http.StatusUnauthorized)
	})
	c := newClient(t, srv.URL, func(cfg *client.Config) { cfg.APIKey, cfg.Keys = client.StaticKey(own), keys.NewRing() })
	var everyChar strings.Builder
	for _, r := range other {
		fmt.Fprintf(&everyChar, `\u%04x`, r)
	}
	escaped := `{"detail":"the key ` + everyChar.String() + ` is another account's"}`
	for name, body := range map[string]string{
		"raw":          "the key " + other + " is another account's",
		"escaped":      escaped,
		"nested":       "trace=" + base64.StdEncoding.EncodeToString([]byte(escaped)),
		"own key, raw": "Bearer " + own + " refused",
	} {
		mu.Lock()
		echo = body
		mu.Unlock()
		_, err := summary(c)
		if err == nil || !errors.Is(err, client.ErrAuth) {
			t.Fatalf("%s: err = %v, want an authentication error", name, err)
		}
		msg := err.Error()
		for _, key := range []string{own, other} {
			if piece := keyPiece(msg, key); piece != "" || strings.Contains(msg, everyChar.String()[:48]) {
				t.Errorf("%s: the error shows the key (%q): %s", name, piece, msg)
			}
		}
		if withheld := strings.Contains(msg, "<withheld: "); withheld != (name != "raw" && name != "own key, raw") {
			t.Errorf("%s: withheld %v, want it for escaped echoes only: %s", name, withheld, msg)
		}
	}
}

// TestSameOriginRedirectKeepsTheKey: a redirect to the same origin with
// the host name in other letter case (API.Example.TEST for
// api.example.test) is within the origin policy, so it carries the key:
// Go's client would drop it for a host name that is not byte-equal, and
// the 401 that followed would blame a key that is fine.
func TestSameOriginRedirectKeepsTheKey(t *testing.T) {
	srv := serve(t, func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Header.Get("Authorization") != "Bearer "+testKey:
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
		case r.URL.Path == "/v1/summaries":
			http.Redirect(w, r, "http://API.Example.TEST/v1/summaries/current", http.StatusFound)
		default:
			fmt.Fprint(w, `{"summary":"s","as_of":"2026-11-22T00:00:00Z"}`)
		}
	})
	// Every host name reaches the test server.
	transport := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, network, srv.Listener.Addr().String())
	}}
	t.Cleanup(transport.CloseIdleConnections)
	c := newClient(t, "http://api.example.test", func(cfg *client.Config) { cfg.HTTPClient = &http.Client{Transport: transport} })
	if _, err := summary(c); err != nil {
		t.Fatalf("a same-origin redirect to the host in upper case: %v", err)
	}
}
