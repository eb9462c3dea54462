package client

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
)

// maxRememberedIDs bounds the ids a walk of /v1/conflict remembers to spot
// an event that a shifting list puts on two pages: 8 bytes each in a set,
// a few MiB at most. Past it, later events are no longer checked (the
// Walk says so by its Duplicates staying as they were; it is far beyond
// any plausible page count times page size).
const maxRememberedIDs = 250_000

// ConflictEvents walks GET /v1/conflict from the first page to the last
// (at most Config.MaxPages) and hands every valid event to event, in
// order, as it is decoded: memory stays at one event whatever the number of
// events. An event whose id an earlier event of the walk had (a list that
// shifted between two pages) is handed over once. On error, the events
// already handed over are not a whole list: discard them.
func (c *Client) ConflictEvents(ctx context.Context, event func(Event)) (Walk, error) {
	// The decoder and its buffer go back to the pool when the walk ends,
	// so that the next scrape starts with them.
	d := c.eventPages.Get().(*eventPages)
	defer c.putEventPages(d)
	d.inv = Invalid{}
	seen := make(map[uint64]struct{})
	var duplicates int
	visit := func(ev eventWithID) {
		if ev.hasID {
			if _, dup := seen[ev.id]; dup {
				duplicates++
				return
			}
			if len(seen) < maxRememberedIDs {
				seen[ev.id] = struct{}{}
			}
		}
		event(ev.Event)
	}
	pages, err := walk(c, ctx, EndpointConflict, func(r io.Reader, page int) (string, error) {
		return d.decode(r, page, c.now(), c.maxName, c.keys, visit)
	})
	return Walk{Pages: pages, Invalid: d.inv, Duplicates: duplicates}, err
}

// putEventPages pools d unless a page made its buffer grow past the usual
// size: a buffer once grown by a hostile page must not stay pinned.
func (c *Client) putEventPages(d *eventPages) {
	if cap(d.buf) <= scanBufferSize {
		c.eventPages.Put(d)
	}
}

// Briefings walks GET /v1/briefings like ConflictEvents, handing every
// briefing with a valid published_at to briefing.
func (c *Client) Briefings(ctx context.Context, briefing func(Briefing)) (Walk, error) {
	d := &decoder{maxName: c.maxName, keys: c.keys}
	pages, err := walk(c, ctx, EndpointBriefings, func(r io.Reader, page int) (string, error) {
		d.s, d.page, d.now, d.listSeen = c.scanner(r), page, c.now(), false
		defer c.putScanner(d.s)
		return d.briefingPage(briefing)
	})
	return Walk{Pages: pages, Invalid: d.inv}, err
}

// walk follows next_cursor from the first page until it is null, bounded by
// maxPages and guarded against a server that repeats a cursor. decodePage
// reads one page body (pages count from 1) and returns its next_cursor.
// walk returns the number of pages read.
func walk(c *Client, ctx context.Context, endpoint string, decodePage func(r io.Reader, page int) (string, error)) (int, error) {
	seen := make(map[string]bool)
	var cursor string
	for page := 1; ; page++ {
		query := url.Values{}
		if cursor != "" {
			query.Set(c.cursorParam, cursor)
		}
		if c.pageSizeParam != "" && c.pageSize > 0 {
			query.Set(c.pageSizeParam, strconv.Itoa(c.pageSize))
		}
		var next string
		err := c.get(ctx, endpoint, page, query, c.maxBytes, func(r io.Reader) error {
			var err error
			next, err = decodePage(r, page)
			return err
		})
		switch {
		case err != nil:
			return page, err
		case next == "":
			return page, nil
		}
		where := fmt.Sprintf("%s page %d", endpoint, page)
		switch {
		case seen[next]:
			return page, &DecodeError{Endpoint: where, Field: "next_cursor", Err: fmt.Errorf("%w: the server sent a cursor it had sent before", ErrCursorLoop)}
		case page >= c.maxPages:
			return page, fmt.Errorf("%s: %w: more remain after %d pages; raise the page limit or the page size", where, ErrTooManyPages, c.maxPages)
		}
		seen[next] = true
		cursor = next
	}
}
