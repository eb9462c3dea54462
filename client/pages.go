// SPDX-License-Identifier: Apache-2.0

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
	// Validators go with the request for page (from 1) at cursor ("" first).
	Validators(page int, cursor string) Validators
	// Read reads the body of a 2xx answer and returns its next_cursor.
	Read(body io.Reader, page int) (next string, err error)
	// Answered follows each page read or confirmed by a 304 (next is then
	// ""), and returns the cursor to follow.
	Answered(page int, cursor string, meta Meta, next string) (string, error)
}

// Walk hands each page to pager until next_cursor is empty and returns the
// pages read. More than MaxPages or a cursor seen before (A→B→C→A too) fail
// the walk rather than give a partial list that would look whole.
func (c *Client) Walk(ctx context.Context, endpoint string, limit Limit, pager Pager) (int, error) {
	seen := map[string]bool{}
	query := url.Values{}
	if c.cfg.PageSizeParam != "" && c.cfg.PageSize > 0 {
		query.Set(c.cfg.PageSizeParam, strconv.Itoa(c.cfg.PageSize))
	}
	for page, cursor := 1, ""; ; page++ {
		var next string
		where := fmt.Sprintf("%s page %d", endpoint, page)
		meta, err := c.get(ctx, endpoint, where, page, query, limit, pager.Validators(page, cursor), func(r io.Reader) (err error) {
			next, err = pager.Read(r, page)
			return err
		})
		if err == nil {
			next, err = pager.Answered(page, cursor, meta, next)
		}
		if err != nil || next == "" {
			return page, err
		}
		switch {
		case seen[next]:
			return page, &DecodeError{Endpoint: where, Field: "next_cursor", Err: fmt.Errorf("%w: the server sent a cursor it had sent before", ErrCursorLoop)}
		case page >= c.cfg.MaxPages:
			return page, fmt.Errorf("%s: %w: more remain after %d pages; raise --api.max-pages or the page size", where, ErrTooManyPages, c.cfg.MaxPages)
		}
		seen[next], cursor = true, next
		query.Set(c.cfg.CursorParam, cursor)
	}
}
