package client

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"strconv"
)

// Walk follows a paged endpoint from its first page until next_cursor is
// empty: readPage reads each page body (pages count from 1) and returns its
// next_cursor, passed back in Config.CursorParam. At most Config.MaxPages
// pages are read, and a cursor the server sent before ends the walk as a
// loop (however far back, A→B→C→A included), rather than returning a
// partial list that would look complete. Walk returns the number of pages
// read.
func (c *Client) Walk(ctx context.Context, endpoint string, limit Limit, readPage func(r io.Reader, page int) (next string, err error)) (int, error) {
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
		err := c.get(ctx, endpoint, page, query, c.limit(limit), func(r io.Reader) error {
			var err error
			next, err = readPage(r, page)
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
			return page, fmt.Errorf("%s: %w: more remain after %d pages; raise --api.max-pages or the page size", where, ErrTooManyPages, c.maxPages)
		}
		seen[next] = true
		cursor = next
	}
}
