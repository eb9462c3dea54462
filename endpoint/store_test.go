// SPDX-License-Identifier: Apache-2.0

package endpoint_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// pagedAPI serves two conflict pages whose bodies the test changes, with
// an ETag per body and 304 for a matching If-None-Match, and records
// "<cursor or 1>:<If-None-Match or ->" per request.
type pagedAPI struct {
	mu    sync.Mutex
	pages map[string]string
	log   []string
}

func (p *pagedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	page := r.URL.Query().Get("cursor")
	body := p.pages[page]
	inm := r.Header.Get("If-None-Match")
	p.log = append(p.log, fmt.Sprintf("%s:%s", map[bool]string{true: "1", false: page}[page == ""], map[bool]string{true: "-", false: "v"}[inm == ""]))
	etag := fmt.Sprintf(`"%d"`, len(body)+strings.Count(body, "9"))
	w.Header().Set("ETag", etag)
	if inm == etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprint(w, body)
}

func (p *pagedAPI) set(page, body string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pages[page] = body
}

func (p *pagedAPI) take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := strings.Join(p.log, " ")
	p.log = nil
	return out
}

// TestWalkerConfirmsPageByPage: validators go out only while every page
// so far was confirmed; all pages confirmed reuse the stored walk; a later
// page changed restarts it without validators; a first page changed reads
// on without them.
func TestWalkerConfirmsPageByPage(t *testing.T) {
	api := &pagedAPI{pages: map[string]string{
		"":   `{"events":[` + ev("a", 1, 1, "x", 0.1, "2026-11-22T00:00:00Z") + `],"next_cursor":"p2"}`,
		"p2": `{"events":[` + ev("b", 1, 1, "x", 0.2, "2026-11-22T00:00:00Z") + `],"next_cursor":null}`,
	}}
	srv := serve(t, api.ServeHTTP)
	cl := newClient(t, srv.URL)
	c := config
	c.Store = endpoint.NewStore(true)
	walk := func() (float64, endpoint.Reuse) {
		t.Helper()
		r, reuse, err := endpoint.Conflict.Fetch(context.Background(), cl, c)
		if err != nil {
			t.Fatal(err)
		}
		return samples(r)["global_stability_conflict_escalation_max{}"], reuse
	}
	for _, step := range []struct {
		change   func()
		requests string
		max      float64
		reuse    endpoint.Reuse
	}{
		{func() {}, "1:- p2:-", 0.2, endpoint.Fetched},
		{func() {}, "1:v p2:v", 0.2, endpoint.ReuseNotModified},
		{func() {
			api.set("p2", `{"events":[`+ev("b", 1, 1, "x", 0.9, "2026-11-22T00:00:00Z")+`],"next_cursor":null}`)
		}, "1:v p2:v 1:- p2:-", 0.9, endpoint.Fetched},
		{func() {
			api.set("", `{"events":[`+ev("a", 1, 1, "x", 0.99, "2026-11-22T00:00:00Z")+`],"next_cursor":"p2"}`)
		}, "1:v p2:-", 0.99, endpoint.Fetched},
	} {
		step.change()
		max, reuse := walk()
		if got := api.take(); got != step.requests || max != step.max || reuse != step.reuse {
			t.Errorf("requests %q, max %v, reuse %q; want %q, %v, %q", got, max, reuse, step.requests, step.max, step.reuse)
		}
	}
}
