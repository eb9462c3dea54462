// SPDX-License-Identifier: Apache-2.0

// Package pipenet serves an http.Handler over net.Pipe, for tests: a real
// server and transport, but no network, so the exchange runs inside a
// testing/synctest bubble, where a TTL or a deadline takes no wall time.
package pipenet

import (
	"context"
	"net"
	"net/http"
	"time"
)

// Network is one server reachable at any address.
type Network struct {
	srv       *http.Server
	transport *http.Transport
	conns     chan net.Conn // the server ends of the pipes dialled
	closed    chan struct{} // when the server closes its listener, once
}

// Serve starts serving h. Call Close before the test (or bubble) ends.
func Serve(h http.Handler) *Network {
	n := &Network{srv: &http.Server{Handler: h, ReadHeaderTimeout: time.Minute}, conns: make(chan net.Conn), closed: make(chan struct{})}
	n.transport = &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			client, server := net.Pipe()
			select {
			case n.conns <- server:
				return client, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-n.closed:
				return nil, net.ErrClosed
			}
		},
	}
	go func() { _ = n.srv.Serve(listener{n}) }()
	return n
}

// Client returns an HTTP client whose every request reaches the handler.
func (n *Network) Client() *http.Client { return &http.Client{Transport: n.transport} }

// Close stops the server and closes every connection.
func (n *Network) Close() {
	n.transport.CloseIdleConnections()
	_ = n.srv.Close()
}

// listener hands the server the pipes dialled; the server closes it, once.
type listener struct{ *Network }

func (l listener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l listener) Close() error   { close(l.closed); return nil }
func (l listener) Addr() net.Addr { return &net.UnixAddr{Name: "pipe", Net: "pipe"} }
