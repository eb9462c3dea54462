package client

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
)

// Pager reads the pages of a walk.
type Pager interface {
	// Validators are sent with the request for page (pages count from 1),
	// which cursor asks for ("" for the first): the API may then answer
	// 304 Not Modified.
	Validators(page int, cursor string) Validators
	// Read reads the body of a 2xx answer and returns its next_cursor.
	Read(body io.Reader, page int) (next string, err error)
	// Answered follows each page read (next is what Read returned) or
	// confirmed by a 304 (meta.NotModified; next is ""): it returns the
	// cursor to follow, for a 304 the one stored with the page.
	Answered(page int, cursor string, meta Meta, next string) (string, error)
}

// Walk follows a paged endpoint from its first page until next_cursor is
// empty, handing each page to pager; a next_cursor is passed back in
// Config.CursorParam. At most Config.MaxPages pages are read, and a cursor
// the server sent before ends the walk as a loop (however far back,
// A→B→C→A included), rather than returning a partial list that would look
// complete. Walk returns the number of pages read.
func (c *Client) Walk(ctx context.Context, endpoint string, limit Limit, pager Pager) (int, error) {
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
		meta, err := c.get(ctx, endpoint, page, query, c.limit(limit), pager.Validators(page, cursor), func(r io.Reader) error {
			var err error
			next, err = pager.Read(r, page)
			return err
		})
		if err == nil {
			next, err = pager.Answered(page, cursor, meta, next)
		}
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
			return page, fmt.Errorf("%s: %w: more remain after %d pages; raise --api.max-pages or the page size", where, ErrTooManyPages, c.maxPages)
		}
		seen[next] = true
		cursor = next
	}
}

// PageReader is a Pager that sends no validators: every page is read.
type PageReader func(body io.Reader, page int) (next string, err error)

// Validators sends none.
func (PageReader) Validators(int, string) Validators { return Validators{} }

// Read calls the function.
func (f PageReader) Read(body io.Reader, page int) (string, error) { return f(body, page) }

// Answered follows the cursor the page gave.
func (PageReader) Answered(_ int, _ string, _ Meta, next string) (string, error) { return next, nil }
