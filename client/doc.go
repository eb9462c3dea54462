// Package client is a typed client for the Global Stability Intelligence
// Service (spec: shared/spec/global-stability-api.md). It has one method per
// endpoint, returns typed errors, never logs and never holds more than one
// page of a paginated list unless the caller asks it to.
//
// # How the open points of the spec are handled
//
//   - Required fields: every field listed in spec section 2 is required. A
//     missing field, a null, or a value of the wrong JSON type is a
//     *DecodeError naming the field (for example "events[3].lat"). Unknown
//     extra fields are ignored.
//   - Timestamps: RFC 3339 with or without fractional seconds, with "Z" or a
//     numeric offset ("+02:00" or "+0200"); a value without any zone is read
//     as UTC, since the spec says timestamps are in UTC.
//   - Scores: the composite and pillar scores must lie in the spec's 0–100
//     scale; a value outside it is a decode error rather than a silently
//     exported impossible number. Fractional scores are accepted.
//   - trend, indicator keys, event categories: any string, passed through
//     unchanged. escalation and delta_24h: any number, no unit assumed.
//   - Overview pillars: the four spec pillars are required; extra keys are
//     ignored.
//   - Pagination: next_cursor is required in every page and may be null.
//     Null or "" ends the walk; a string is passed back verbatim, a number
//     as its literal text. The query parameter that carries it is
//     Config.CursorParam ("cursor" by default). A page-size parameter is
//     sent only when Config.PageSizeParam and Config.PageSize are both set.
//     A walk stops with an error after Config.MaxPages pages, or when a
//     cursor repeats (a server loop), rather than returning a partial list
//     that would look complete.
//   - Errors: the error body's shape is not specified, so a non-2xx
//     response keeps a short, sanitised excerpt of its body whatever the
//     shape. 401 and 403 are ErrAuth, 404 ErrNotFound, 429 ErrRateLimited
//     (with Retry-After read as seconds or an HTTP date), 5xx ErrServer.
//   - Content-Type: the spec does not name one. JSON types, text/plain (what
//     many frameworks send for JSON by default) and a missing header are
//     accepted; anything else (an HTML error page from a proxy, say) is a
//     decode error before the body is parsed.
//
// # Secrets
//
// The API key is sent only in the Authorization header. It is never part of
// an error, and any echo of it in an upstream error body is redacted before
// the excerpt is kept. Printing a *Client with any fmt verb shows only the
// redacted base URL.
package client
