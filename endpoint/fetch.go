package endpoint

import (
	"context"
	"errors"
	"io"
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
	now := c.clock()
	prev := c.Store.get(e.Label)
	if !e.Paged {
		return e.fetchDocument(ctx, cl, c, prev, now)
	}
	r, reuse, err := e.walk(ctx, cl, c, prev, now)
	if errors.Is(err, errChangedMidWalk) {
		r, reuse, err = e.walk(ctx, cl, c, nil, now)
	}
	return r, reuse, err
}

// Reusable returns what c.Store holds for e if the API lets it be used
// without asking: still fresh by its caching headers, or inside the
// endpoint's refresh interval. It sends nothing, so a collection answers
// with it at once, however little time its scrape has left.
func (e *Endpoint) Reusable(c Config) (Result, Reuse, bool) {
	prev := c.Store.get(e.Label)
	if prev == nil {
		return Result{}, Fetched, false
	}
	now := c.clock()
	if prev.fresh(now) {
		return prev.result, ReuseFresh, true
	}
	if refresh := c.refresh(e); refresh > 0 && now.Sub(prev.fetched) < refresh {
		if asOf, ok := prev.asOf(); ok && now.Before(asOf.Add(refresh)) {
			return prev.result, ReuseRefresh, true
		}
	}
	return Result{}, Fetched, false
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

func (c Config) refresh(e *Endpoint) time.Duration {
	if d, ok := c.Refresh[e.Label]; ok {
		return d
	}
	return e.Refresh
}

func (e *Endpoint) fetchDocument(ctx context.Context, cl *client.Client, c Config, prev *stored, now time.Time) (Result, Reuse, error) {
	var v client.Validators
	if prev != nil {
		v = prev.pages[0].validators
	}
	col := e.Start(c)
	meta, err := cl.Get(ctx, e.Label, e.Limit, v, func(r io.Reader) error {
		_, err := col.Read(r, 0)
		return err
	})
	if err != nil {
		return Result{}, Fetched, err
	}
	page := storedPage{validators: meta.Validators, freshness: meta.Freshness}
	if meta.NotModified {
		c.Store.put(e.Label, &stored{result: prev.result, pages: []storedPage{page}, fetched: now})
		return prev.result, ReuseNotModified, nil
	}
	r := col.Result()
	c.Store.put(e.Label, &stored{result: r, pages: []storedPage{page}, fetched: now})
	return r, Fetched, nil
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
	p := storedPage{cursor: cursor, validators: meta.Validators, freshness: meta.Freshness}
	switch {
	case meta.NotModified:
		w.confirmed++
		p.next = w.prev.pages[page-1].next
	case w.confirmed > 0:
		return "", errChangedMidWalk
	default:
		p.next = next
	}
	w.pages = append(w.pages, p)
	return p.next, nil
}

func (e *Endpoint) walk(ctx context.Context, cl *client.Client, c Config, prev *stored, now time.Time) (Result, Reuse, error) {
	w := &walker{col: e.Start(c), prev: prev}
	if _, err := cl.Walk(ctx, e.Label, e.Limit, w); err != nil {
		if w.confirmed > 0 && forgotten(err) {
			// The page after the confirmed ones was asked for with a
			// stored cursor, which the API has let expire: start again
			// from the first page, as with nothing stored, rather than
			// fail on every scrape until the process restarts.
			return e.walk(ctx, cl, c, nil, now)
		}
		return Result{}, Fetched, err
	}
	if w.confirmed > 0 {
		// Every page was confirmed (a changed one would have restarted):
		// the walk is the stored one, page for page.
		if w.confirmed != len(prev.pages) {
			return e.walk(ctx, cl, c, nil, now) // it ended early: shorter than stored
		}
		c.Store.put(e.Label, &stored{result: prev.result, pages: w.pages, fetched: now})
		return prev.result, ReuseNotModified, nil
	}
	r := w.col.Result()
	c.Store.put(e.Label, &stored{result: r, pages: w.pages, fetched: now})
	return r, Fetched, nil
}
