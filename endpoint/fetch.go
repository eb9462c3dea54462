package endpoint

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// Fetch collects e through cl, every page of a paged endpoint, and returns
// what it gives. On error nothing of it is usable: a partial list would
// look like a whole one.
//
// With c.Store, what the API allows is reused instead (the Reuse says
// why): an answer still fresh by its caching headers, or inside the
// endpoint's refresh interval, without a request; one the API confirms
// with 304 Not Modified, without its body. A paged endpoint's stored walk
// is reused only when every page of it is confirmed: a page that changed
// after confirmed ones restarts the walk from the first page without
// validators, so a list is never stitched from pages of different moments.
func (e *Endpoint) Fetch(ctx context.Context, cl *client.Client, c Config) (Result, Reuse, error) {
	if c.Keys == nil {
		c.Keys = cl.Redactor() // the names are judged against every key of the process
	}
	if r, reuse, ok := e.Reusable(c); ok {
		return r, reuse, nil
	}
	return e.fetch(ctx, cl, c, c.Store.get(e.Label), c.clock())
}

// Reusable returns what c.Store holds for e if the API lets it be used
// without asking: still fresh by its caching headers, or inside the
// endpoint's refresh interval. It sends nothing, so a collection answers
// with it at once, however little time its scrape has left.
func (e *Endpoint) Reusable(c Config) (Result, Reuse, bool) {
	prev, now := c.Store.get(e.Label), c.clock()
	refresh, set := c.Refresh[e.Label]
	if !set {
		refresh = e.Refresh
	}
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
		// A page changed after confirmed ones, or the API has let the cursor
		// after them expire: start again from the first page, as with
		// nothing stored, rather than fail on every scrape until a restart.
		return e.fetch(ctx, cl, c, nil, now)
	case err != nil:
		return Result{}, Fetched, err
	}
	if w.confirmed > 0 {
		// Every page was confirmed (a 304 is asked for only while all before
		// it were, and gives the stored next_cursor): the walk is the stored
		// one, page for page.
		c.Store.put(e.Label, &stored{result: prev.result, pages: w.pages, fetched: now})
		return prev.result, ReuseNotModified, nil
	}
	r := w.col.Result()
	c.Store.put(e.Label, &stored{result: r, pages: w.pages, fetched: now})
	return r, Fetched, nil
}

// forgotten reports whether a request for a page failed because the API
// no longer knows its cursor: a 4xx other than those about the key or the
// rate (400, 404, 410, 422…).
func forgotten(err error) bool {
	var se *client.StatusError
	if !errors.As(err, &se) {
		return false
	}
	code := se.StatusCode
	return code >= 400 && code < 500 && code != 401 && code != 403 && code != 429
}

// errChangedMidWalk: a page changed after earlier pages were confirmed by
// 304s, whose data this walk never read.
var errChangedMidWalk = errors.New("a page changed after earlier ones were confirmed")

// walker is the client.Pager of one walk: it asks the API to confirm the
// stored walk page by page while it can, and reads every page once one
// has changed.
type walker struct {
	col       *Collection
	prev      *stored // the walk to confirm; nil reads every page
	confirmed int     // pages the API confirmed with 304
	pages     []storedPage
}

func (w *walker) Validators(page int, cursor string) client.Validators {
	// Only while every page so far was confirmed: once one has been read,
	// a 304 for a later page would leave the pages before it unread.
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

// Store keeps, per endpoint, what its last answer became: the Result the
// collector exports (never a body), with each page's validators, its
// freshness and the cursor it led on. A later Fetch reuses it while the
// API allows, or asks the API whether it still holds. Its size is one
// Result per endpoint and a few strings per page. Safe for concurrent use.
type Store struct {
	headers bool // honour the API's caching headers

	mu      sync.Mutex
	entries map[string]*stored
}

// NewStore returns an empty store. Without honourHeaders, the API's
// caching headers are ignored (no answer is fresh, none is revalidated):
// only the endpoints' refresh intervals reuse what it keeps.
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

// put stores s for label, or forgets label when the API forbade storing
// (no-store on any page).
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
