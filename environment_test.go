// SPDX-License-Identifier: Apache-2.0

package main

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/simulator"
)

// recordingProxy is a forward proxy that records what it is asked for and
// plays the API itself for plain-HTTP requests; a CONNECT (the tunnel an
// https:// request asks for) is recorded and refused.
type recordingProxy struct {
	sim *simulator.Simulator

	mu       sync.Mutex
	hosts    []string // the host of every request, CONNECT's included
	connects []string // the targets of CONNECT
	keyed    []string // CONNECTs that carried an Authorization header
}

func (p *recordingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.hosts = append(p.hosts, r.URL.Host)
	if r.Method == http.MethodConnect {
		p.connects = append(p.connects, r.Host)
		if r.Header.Get("Authorization") != "" {
			p.keyed = append(p.keyed, r.Host)
		}
	}
	p.mu.Unlock()
	if r.Method == http.MethodConnect {
		http.Error(w, "no tunnels here", http.StatusForbidden)
		return
	}
	p.sim.ServeHTTP(w, r)
}

func (p *recordingProxy) seen() (hosts, connects, keyed []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.hosts), slices.Clone(p.connects), slices.Clone(p.keyed)
}

// TestProxyEnvironmentIsHonoured: HTTP_PROXY, HTTPS_PROXY and NO_PROXY
// decide how the API is reached, as for Prometheus' own scrapes. Loopback
// addresses are never proxied, so the API is named by a host name that
// does not resolve: only a proxy can reach it.
func TestProxyEnvironmentIsHonoured(t *testing.T) {
	newProxy := func(t *testing.T) (*recordingProxy, string) {
		p := &recordingProxy{sim: simulator.New(simulator.Config{Key: secretKey})}
		srv := httptest.NewServer(p)
		t.Cleanup(srv.Close)
		return p, srv.URL
	}
	key := "GLOBAL_STABILITY_API_KEY=" + secretKey

	t.Run("HTTP_PROXY", func(t *testing.T) {
		p, proxy := newProxy(t)
		e := startExporter(t, []string{key, "HTTP_PROXY=" + proxy, "NO_PROXY="}, "--api.url=http://api.example.invalid")
		if got := up(e.scrape(t)); got != 1 {
			t.Errorf("up %v through the proxy, want 1\n%s", got, e.logs)
		}
		if hosts, _, _ := p.seen(); len(hosts) == 0 || slices.ContainsFunc(hosts, func(h string) bool { return h != "api.example.invalid" }) {
			t.Errorf("the proxy was asked for %q, want every request for api.example.invalid", hosts)
		}
	})
	t.Run("NO_PROXY", func(t *testing.T) {
		p, proxy := newProxy(t)
		e := startExporter(t, []string{key, "HTTP_PROXY=" + proxy, "NO_PROXY=example.invalid"}, "--api.url=http://api.example.invalid")
		if got := up(e.scrape(t)); got != 0 {
			t.Errorf("up %v for a host NO_PROXY exempts that does not resolve, want 0", got)
		}
		if hosts, _, _ := p.seen(); len(hosts) != 0 {
			t.Errorf("NO_PROXY=example.invalid, yet the proxy was asked for %q", hosts)
		}
	})
	t.Run("HTTPS_PROXY", func(t *testing.T) {
		p, proxy := newProxy(t)
		e := startExporter(t, []string{key, "HTTPS_PROXY=" + proxy, "NO_PROXY="}, "--api.url=https://api.example.invalid")
		e.scrape(t)
		_, connects, keyed := p.seen()
		if len(connects) == 0 || slices.ContainsFunc(connects, func(h string) bool { return h != "api.example.invalid:443" }) {
			t.Errorf("CONNECT targets %q, want api.example.invalid:443 for every request", connects)
		}
		if len(keyed) > 0 {
			t.Errorf("the key went to the proxy in the clear, in CONNECTs for %q", keyed)
		}
	})
}
