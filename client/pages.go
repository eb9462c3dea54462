package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"strconv"
)

// ConflictEventPages walks GET /v1/conflict page by page. Each step yields
// one page's events, or an error after which the walk ends. The slice is
// reused for the next page and by later walks: copy the events you keep
// (an Event itself may be kept; what it refers to is never reused).
// Aggregating page by page keeps memory at one page whatever the number of
// events.
func (c *Client) ConflictEventPages(ctx context.Context) iter.Seq2[[]Event, error] {
	return func(yield func([]Event, error) bool) {
		// The decoder and its buffers go back to the pool when the walk
		// ends, so that the next scrape starts with them grown.
		d := c.eventPages.Get().(*eventPages)
		defer c.eventPages.Put(d)
		for page, err := range walk(c, ctx, EndpointConflict, d.decode) {
			if !yield(page, err) {
				return
			}
		}
	}
}

// BriefingPages walks GET /v1/briefings page by page, like ConflictEventPages.
func (c *Client) BriefingPages(ctx context.Context) iter.Seq2[[]Briefing, error] {
	return walk(c, ctx, EndpointBriefings, jsonPage("briefings", decodeBriefing))
}

// ConflictEvents returns every event of every page (up to Config.MaxPages).
func (c *Client) ConflictEvents(ctx context.Context) ([]Event, error) {
	return collect(c.ConflictEventPages(ctx))
}

// Briefings returns every briefing of every page (up to Config.MaxPages).
func (c *Client) Briefings(ctx context.Context) ([]Briefing, error) {
	return collect(c.BriefingPages(ctx))
}

func decodeBriefing(dec *json.Decoder, prefix string) (Briefing, error) {
	var w wireBriefing
	if err := decodeValue(dec, &w, prefix); err != nil {
		return Briefing{}, err
	}
	f := fields{prefix: prefix}
	b := w.convert(&f)
	return b, f.error()
}

func collect[T any](pages iter.Seq2[[]T, error]) ([]T, error) {
	var all []T
	for page, err := range pages {
		if err != nil {
			return nil, err
		}
		all = append(all, page...)
	}
	return all, nil
}

// pageDecoder decodes one whole page body, appending its items to items,
// and returns them with the page's next_cursor.
type pageDecoder[T any] func(r io.Reader, items []T) ([]T, string, error)

// jsonPage is a pageDecoder on encoding/json: the page object is streamed
// token by token and each item of the array under arrayKey decoded by item.
func jsonPage[T any](arrayKey string, item func(*json.Decoder, string) (T, error)) pageDecoder[T] {
	return func(r io.Reader, items []T) ([]T, string, error) {
		dec := json.NewDecoder(r)
		next, err := decodePage(dec, arrayKey, func(i int) error {
			it, err := item(dec, arrayKey+"["+strconv.Itoa(i)+"].")
			items = append(items, it)
			return err
		})
		if err == nil {
			err = expectEOF(dec)
		}
		return items, next, err
	}
}

// walk follows next_cursor from the first page until it is null, bounded by
// maxPages and guarded against a server that repeats a cursor.
func walk[T any](c *Client, ctx context.Context, endpoint string, decode pageDecoder[T]) iter.Seq2[[]T, error] {
	return func(yield func([]T, error) bool) {
		seen := make(map[string]bool)
		var (
			cursor string
			items  []T
		)
		for page := 1; ; page++ {
			query := url.Values{}
			if cursor != "" {
				query.Set(c.cursorParam, cursor)
			}
			if c.pageSizeParam != "" && c.pageSize > 0 {
				query.Set(c.pageSizeParam, strconv.Itoa(c.pageSize))
			}
			var next string
			err := c.get(ctx, endpoint, page, query, func(r io.Reader) error {
				var err error
				items, next, err = decode(r, items[:0])
				return err
			})
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(items, nil) || next == "" {
				return
			}
			where := fmt.Sprintf("%s page %d", endpoint, page)
			switch {
			case seen[next]:
				yield(nil, &DecodeError{Endpoint: where, Field: "next_cursor", Err: fmt.Errorf("%w: the server sent a cursor it had sent before", ErrCursorLoop)})
				return
			case page >= c.maxPages:
				yield(nil, fmt.Errorf("%s: %w: more remain after %d pages; raise the page limit or the page size", where, ErrTooManyPages, c.maxPages))
				return
			}
			seen[next] = true
			cursor = next
		}
	}
}

// decodePage streams one page object: the array under arrayKey is decoded
// item by item through item (never held as raw JSON), next_cursor is
// returned, and other members are skipped.
func decodePage(dec *json.Decoder, arrayKey string, item func(i int) error) (string, error) {
	if err := expectDelim(dec, '{', "(body)", "an object"); err != nil {
		return "", err
	}
	var (
		cursor              string
		haveArray, haveNext bool
	)
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return "", err
		}
		switch key, _ := tok.(string); key {
		case arrayKey:
			if haveArray {
				return "", &fieldError{field: arrayKey, err: errors.New("appears twice")}
			}
			haveArray = true
			if err := expectDelim(dec, '[', arrayKey, "an array"); err != nil {
				return "", err
			}
			for i := 0; dec.More(); i++ {
				if err := item(i); err != nil {
					return "", err
				}
			}
			if _, err := dec.Token(); err != nil { // the closing ']'
				return "", err
			}
		case "next_cursor":
			haveNext = true
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return "", err
			}
			if cursor, err = parseCursor(raw); err != nil {
				return "", &fieldError{field: "next_cursor", err: err}
			}
		default:
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return "", err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return "", err
	}
	switch {
	case !haveArray:
		return "", &fieldError{field: arrayKey, err: errMissing}
	case !haveNext:
		return "", &fieldError{field: "next_cursor", err: errors.New("missing (null is the way to say there are no more pages)")}
	}
	return cursor, nil
}

// parseCursor accepts null or "" (no more pages), a string, or a number
// (kept as its literal text); the spec leaves the format open.
func parseCursor(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	switch {
	case string(raw) == "null":
		return "", nil
	case len(raw) > 0 && raw[0] == '"':
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	case len(raw) > 0 && (raw[0] == '-' || (raw[0] >= '0' && raw[0] <= '9')):
		return string(raw), nil
	}
	return "", errors.New("want a string, a number or null")
}

// expectDelim reads the next token and fails unless it is want.
func expectDelim(dec *json.Decoder, want json.Delim, field, kind string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return &fieldError{field: field, err: fmt.Errorf("want %s", kind)}
	}
	return nil
}
