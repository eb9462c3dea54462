// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"context"
	"errors"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// Fetch asks the API for e, every page of a paged endpoint; what may be
// reused without asking is Reusable's. On error nothing of it is usable: a
// partial list would look whole. With c.Store, a stored walk is reused only
// when the API confirms every page, and a page that changed after confirmed
// ones restarts the walk, so a list is never stitched from two moments.
func (e *Endpoint) Fetch(ctx context.Context, cl *client.Client, c Config) (Result, Reuse, error) {
	if c.Keys == nil {
		c.Keys = cl.Redactor() // the names are judged against every key of the process
	}
	return e.fetch(ctx, cl, c, c.Store.get(e.Label), c.clock())
}

// Reusable returns what c.Store holds for e if the API lets it be used
// without asking. It sends nothing: a scrape with no time left still gets it.
func (e *Endpoint) Reusable(c Config) (Result, Reuse, bool) {
	prev, now := c.Store.get(e.Label), c.clock()
	refresh := c.Refresh[e.Label]
	switch {
	case prev == nil:
	case prev.fresh(now):
		return prev.result, ReuseFresh, true
	case refresh > 0 && now.Sub(prev.fetched) < refresh:
		for _, s := range prev.result.Samples {
			if s.Metric == AsOf && now.Before(time.Unix(0, int64(s.Value*1e9)).Add(refresh)) {
				return prev.result, ReuseRefresh, true
			}
		}
	}
	return Result{}, Fetched, false
}

// fetch asks for e with the validators of prev, the walk stored, if any.
func (e *Endpoint) fetch(ctx context.Context, cl *client.Client, c Config, prev *stored, now time.Time) (Result, Reuse, error) {
	w := &walker{col: e.Start(c), prev: prev}
	var err error
	if e.Paged {
		_, err = cl.Walk(ctx, e.Label, e.Limit, w)
	} else {
		var meta client.Meta
		meta, err = cl.Get(ctx, e.Label, e.Limit, w.Validators(1, ""), func(r io.Reader) error {
			_, err := w.col.Read(r, 0)
			return err
		})
		if err == nil {
			_, err = w.Answered(1, "", meta, "")
		}
	}
	switch {
	case w.confirmed > 0 && (errors.Is(err, errChangedMidWalk) || forgotten(err)):
		// A page changed after confirmed ones, or their cursor expired: start
		// afresh rather than fail on every scrape until a restart.
		return e.fetch(ctx, cl, c, nil, now)
	case err != nil:
		return Result{}, Fetched, err
	}
	if w.confirmed > 0 { // every page was: the walk is the stored one
		c.Store.put(e.Label, &stored{result: prev.result, pages: w.pages, fetched: now})
		return prev.result, ReuseNotModified, nil
	}
	r := w.col.Result()
	c.Store.put(e.Label, &stored{result: r, pages: w.pages, fetched: now})
	return r, Fetched, nil
}

// forgotten reports whether the API no longer knows a page's cursor: a 4xx
// other than those about the key or the rate.
func forgotten(err error) bool {
	se, ok := errors.AsType[*client.StatusError](err)
	return ok && se.StatusCode >= 400 && se.StatusCode < 500 && !slices.Contains([]int{401, 403, 429}, se.StatusCode)
}

// errChangedMidWalk restarts a walk: the pages confirmed before it were never read.
var errChangedMidWalk = errors.New("a page changed after earlier ones were confirmed")

// walker is the client.Pager of one walk: it asks the API to confirm the
// stored walk page by page while it can.
type walker struct {
	col       *Collection
	prev      *stored // the walk to confirm; nil reads every page
	confirmed int     // pages the API confirmed with 304
	pages     []storedPage
}

func (w *walker) Validators(page int, cursor string) client.Validators {
	// Only while all before were confirmed: what is stored is a walk's, not a page's.
	if w.prev == nil || w.confirmed != page-1 || page > len(w.prev.pages) || w.prev.pages[page-1].cursor != cursor {
		return client.Validators{}
	}
	return w.prev.pages[page-1].validators
}

func (w *walker) Read(body io.Reader, page int) (string, error) {
	if w.confirmed > 0 {
		return "", nil // restarting: this body is not needed (see Answered)
	}
	return w.col.Read(body, page)
}

func (w *walker) Answered(page int, cursor string, meta client.Meta, next string) (string, error) {
	p := storedPage{cursor: cursor, next: next, validators: meta.Validators, freshness: meta.Freshness}
	switch {
	case meta.NotModified:
		w.confirmed++
		p.next = w.prev.pages[page-1].next
	case w.confirmed > 0:
		return "", errChangedMidWalk
	}
	w.pages = append(w.pages, p)
	return p.next, nil
}

// Reuse says why a Fetch gave what was stored instead of a new answer.
type Reuse string

// The reasons of global_stability_api_responses_reused_total.
const (
	Fetched          Reuse = ""                 // read from a new answer
	ReuseFresh       Reuse = "fresh"            // still fresh by the API's caching headers: no request
	ReuseNotModified Reuse = "not_modified"     // the API answered 304 to every request
	ReuseRefresh     Reuse = "refresh_interval" // inside the endpoint's refresh interval: no request
)

// Reasons lists every reason of reuse, in a stable order.
var Reasons = []Reuse{ReuseFresh, ReuseNotModified, ReuseRefresh}

// Store keeps, per endpoint, the Result of its last answer (never a body)
// with each page's validators, freshness and cursors: one Result per
// endpoint and a few strings per page. Safe for concurrent use.
type Store struct {
	headers bool // honour the API's caching headers

	mu      sync.Mutex
	entries map[string]*stored
}

// NewStore returns an empty store. Without honourHeaders, only the
// endpoints' refresh intervals reuse what it keeps.
func NewStore(honourHeaders bool) *Store {
	return &Store{headers: honourHeaders, entries: map[string]*stored{}}
}

type stored struct {
	result  Result
	pages   []storedPage // one for an unpaged endpoint, in walk order
	fetched time.Time    // when it was last read or confirmed
}

type storedPage struct {
	cursor     string // the cursor that asked for it, "" for the first
	next       string // the next_cursor it gave
	validators client.Validators
	freshness  client.Freshness
}

// fresh reports whether every page may still be reused without asking.
func (s *stored) fresh(now time.Time) bool {
	for _, p := range s.pages {
		if !p.freshness.Fresh(now) {
			return false
		}
	}
	return len(s.pages) > 0
}

func (st *Store) get(label string) *stored {
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.entries[label]
}

// put stores s, or forgets label when a page forbade storing.
func (st *Store) put(label string, s *stored) {
	if st == nil {
		return
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	delete(st.entries, label)
	for i, p := range s.pages {
		if p.freshness.NoStore {
			return
		}
		if !st.headers {
			s.pages[i].validators, s.pages[i].freshness = client.Validators{}, client.Freshness{}
		}
	}
	st.entries[label] = s
}
