// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// nearLimit is an upstream whose every response is a valid body just under
// the exporter's default limit for its endpoint, made from the simulator's
// answer to every endpoint of the descriptions: a list filled with copies
// of its first item, its names, keys and ids distinct and its positions over
// the whole globe (a drilldown of ~20,000 indicators, pages of ~80,000
// events over 20,000 categories), ten pages of each paged endpoint, a
// document without a list padded to its limit. It measures that memory is
// bounded by the configured limits, not by what an upstream sends.
type nearLimit struct {
	docs  map[string][]byte // by endpoint label
	pages map[string][][]byte
}

const nearLimitPages = client.DefaultMaxPages

func newNearLimit() (*nearLimit, error) {
	bodies, err := simulatorBodies()
	if err != nil {
		return nil, err
	}
	n := &nearLimit{docs: map[string][]byte{}, pages: map[string][][]byte{}}
	for e, body := range bodies {
		limit := client.DefaultMaxDocumentBytes
		if e.Paged {
			limit = client.DefaultMaxResponseBytes
		}
		if e.List == nil {
			n.docs[e.Label] = withField(body, "padding", longString(limit-len(body)-margin))
			continue
		}
		// As many items as fit: the size of one, from a body of a hundred.
		hundred, err := fillCaps(e, body, 20000, 100)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Label, err)
		}
		full, err := fillCaps(e, body, 20000, (limit-len(body))*100/len(hundred)*9/10)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", e.Label, err)
		}
		if len(full) > limit {
			return nil, fmt.Errorf("%s: %d bytes, over the limit of %d", e.Label, len(full), limit)
		}
		if !e.Paged {
			n.docs[e.Label] = full
			continue
		}
		for page := range nearLimitPages {
			// Each page its own ids, so that none is a repeat.
			body := bytes.ReplaceAll(full, []byte(`"item_`), []byte(`"item_`+strconv.Itoa(page)+"_"))
			body = bytes.Replace(body, []byte(`"next_cursor":null`), []byte(`"next_cursor":`+cursor(page)), 1)
			n.pages[e.Label] = append(n.pages[e.Label], body)
		}
	}
	return n, nil
}

// bytes is what one collection reads: every body served, once.
func (n *nearLimit) bytes() int64 {
	var total int
	for _, body := range n.docs {
		total += len(body)
	}
	for _, pages := range n.pages {
		for _, body := range pages {
			total += len(body)
		}
	}
	return int64(total)
}

func cursor(page int) string {
	if page == nearLimitPages-1 {
		return "null"
	}
	return strconv.Quote(strconv.Itoa(page + 1))
}

func (n *nearLimit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint := strings.TrimPrefix(r.URL.Path, "/v1/")
	body, ok := n.docs[endpoint]
	if pages, paged := n.pages[endpoint]; paged {
		page, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		body, ok = pages[page], page < len(pages)
	}
	if !ok {
		http.Error(w, "the bench's upstream serves no "+r.URL.Path, http.StatusTeapot)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// serveHandler serves h on a loopback port until ctx ends.
func serveHandler(ctx context.Context, h http.Handler) (string, error) {
	ln, err := new(net.ListenConfig).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	context.AfterFunc(ctx, func() { _ = srv.Close() })
	return ln.Addr().String(), nil
}
