// SPDX-License-Identifier: Apache-2.0

package client_test

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/internal/testutil/pipenet"
)

// Conditions the other tests never set up: host names rather than the IP
// addresses of test servers, and error bodies of every class of status.

// TestARedirectToASubdomainGetsNoKey: Go's client forwards a hand-set
// Authorization header to a subdomain of the original host; the key must
// reach no other origin: not a subdomain, not a host that merely starts
// with the API's name, not the parent domain, not the same host on another
// scheme. Every name reaches one in-memory server, which records the
// Authorization each host received.
func TestARedirectToASubdomainGetsNoKey(t *testing.T) {
	var mu sync.Mutex
	target := ""
	received := map[string]string{} // Host → Authorization
	net := pipenet.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		received[r.Host] = r.Header.Get("Authorization")
		to := target
		mu.Unlock()
		if r.Host == "api.example.test" {
			http.Redirect(w, r, to+"/v1/summaries", http.StatusFound)
			return
		}
		fmt.Fprint(w, `{"summary":"s","as_of":"2026-11-22T00:00:00Z"}`)
	}))
	t.Cleanup(net.Close)
	for _, to := range []string{"http://eu.api.example.test", "http://api.example.test.evil.test", "http://example.test", "http://api.example.test:8080", "https://api.example.test"} {
		mu.Lock()
		target = to
		clear(received)
		mu.Unlock()
		c := newClient(t, "http://api.example.test", func(cfg *client.Config) { cfg.HTTPClient = net.Client() })
		_, err := summary(c)
		if !errors.Is(err, client.ErrRedirectRefused) {
			t.Errorf("redirect to %s: err = %v, want ErrRedirectRefused", to, err)
		}
		mu.Lock()
		for host, auth := range received {
			if host != "api.example.test" && auth != "" {
				t.Errorf("redirect to %s: %s received %q", to, host, auth)
			}
		}
		mu.Unlock()
	}
}

// TestAnErrorBodyOfAnyStatusIsReadOnlyForItsExcerpt: whatever the status (a 5xx, where
// a server's error page or a proxy's stack dump may be huge, as well as a
// 4xx), an error body of 100 MB is read for its excerpt and a short drain,
// never whole: the server counts what it could write, over connections
// without buffers of their own.
func TestAnErrorBodyOfAnyStatusIsReadOnlyForItsExcerpt(t *testing.T) {
	for _, status := range []int{401, 403, 404, 429, 500, 502, 503} {
		var mu sync.Mutex
		written := 0
		net := pipenet.Serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			w.WriteHeader(status)
			chunk := []byte(strings.Repeat("<p>stack frame</p>\n", 1<<10))
			for total := 0; total < 100<<20; total += len(chunk) {
				n, err := w.Write(chunk)
				mu.Lock()
				written += n
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}))
		c := newClient(t, "http://api.example.test", func(cfg *client.Config) { cfg.HTTPClient = net.Client() })
		_, err := summary(c)
		net.Close()
		var se *client.StatusError
		if !errors.As(err, &se) || se.StatusCode != status {
			t.Errorf("status %d: err = %v", status, err)
		}
		mu.Lock()
		if written > 512<<10 {
			t.Errorf("status %d: the server wrote %d bytes of a 100 MB error body before the client hung up; want its excerpt and a 64 KiB drain", status, written)
		}
		mu.Unlock()
	}
}
