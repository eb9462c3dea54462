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
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// nearLimit is an upstream whose every response is a valid body just under
// the exporter's default limit for its endpoint, shaped to cost the most
// that is allowed: a drilldown of ~37,000 distinct indicators, ten pages of
// ~140,000 events each with distinct ids, 20,000 categories and positions
// over the whole globe, briefing pages of long text, a summary of 1 MiB.
// It measures that memory is bounded by the configured limits, not by what
// an upstream sends.
type nearLimit struct {
	docs  map[string][]byte // by endpoint label
	pages map[string][][]byte
}

const nearLimitPages = client.DefaultMaxPages

func newNearLimit() *nearLimit {
	n := &nearLimit{docs: map[string][]byte{}, pages: map[string][][]byte{}}
	docLimit, pageLimit := client.DefaultMaxDocumentBytes, client.DefaultMaxResponseBytes
	n.docs[endpoint.Overview.Label] = padded(`{"score":50,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"`+now()+`","padding":"`, `"}`, docLimit)
	for _, p := range endpoint.Pillars {
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"pillar":%q,"delta_24h":1,"as_of":%q,"indicators":[`, p, now())
		for i := 0; b.Len() < docLimit-64; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"key":"k%d","value":%d}`, i, i)
		}
		b.WriteString(`]}`)
		n.docs[endpoint.Drilldown(p).Label] = b.Bytes()
	}
	n.docs[endpoint.Summary.Label] = padded(`{"as_of":"`+now()+`","summary":"`, `"}`, docLimit)

	id := 0
	for page := range nearLimitPages {
		var b bytes.Buffer
		b.WriteString(`{"events":[`)
		for i := 0; b.Len() < pageLimit-256; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"evt_%d","lat":%d,"lon":%d,"actors":["a"],"category":"c%d","escalation":0.%d,"occurred_at":%q}`,
				id, id%181-90, id%361-180, id%20000, id%10, now())
			id++
		}
		fmt.Fprintf(&b, `],"next_cursor":%s}`, cursor(page))
		n.pages[endpoint.Conflict.Label] = append(n.pages[endpoint.Conflict.Label], b.Bytes())

		text := strings.Repeat("lorem ipsum ", 4096) // 48 KiB a briefing, skipped unread
		b = bytes.Buffer{}
		b.WriteString(`{"briefings":[`)
		for i := 0; b.Len() < pageLimit-len(text)-256; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"brf_%d_%d","headline":"h","summary":%q,"tags":["t"],"published_at":%q}`, page, i, text, now())
		}
		fmt.Fprintf(&b, `],"next_cursor":%s}`, cursor(page))
		n.pages[endpoint.BriefingsList.Label] = append(n.pages[endpoint.BriefingsList.Label], b.Bytes())
	}
	return n
}

func now() string { return time.Now().UTC().Format(time.RFC3339) }

func cursor(page int) string {
	if page == nearLimitPages-1 {
		return "null"
	}
	return strconv.Quote(strconv.Itoa(page + 1))
}

// padded is head, filler and tail, size bytes long in all.
func padded(head, tail string, size int) []byte {
	return []byte(head + strings.Repeat("x", size-len(head)-len(tail)-1) + tail)
}

func (n *nearLimit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	endpoint := strings.TrimPrefix(r.URL.Path, "/v1/")
	body, ok := n.docs[endpoint]
	if pages, paged := n.pages[endpoint]; paged {
		page, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
		body, ok = pages[page], page < len(pages)
	}
	if !ok {
		http.NotFound(w, r)
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
