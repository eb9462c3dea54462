// Package client is a typed client for the Global Stability Intelligence
// Service (spec: shared/spec/global-stability-api.md). It has one method per
// endpoint, returns typed errors and never logs. Every body is decoded as a
// stream: lists are handed to the caller an item at a time, strings and
// numbers are kept only up to small caps, so memory does not depend on what
// the upstream sends.
//
// # Strict about the document, lenient about values
//
// A response fails as a whole (*StatusError, *TransportError, *DecodeError)
// when it is not the document the spec describes: a non-2xx status, a
// broken connection, a body over its limit, anything that is not JSON or not
// an object, a page without its list or next_cursor or with a list that is
// not an array, a list key given twice, a drilldown naming another pillar.
//
// Inside a document, each value the exporter exports is checked on its own.
// One that is missing, null, of the wrong JSON type or outside what the spec
// allows is left out and counted in the result's Invalid under the spec's
// field name, and the rest of the response is used: a null trend costs the
// trend, not the score; a bad indicator, event or briefing costs that item,
// not its list. Fields that are never exported (an event's actors, a
// briefing's headline or tags, the summary's text, a drilldown's own score)
// are skipped unread and cannot fail anything. Of a repeated key, the last
// occurrence counts, as in encoding/json.
//
// # How the open points of the spec are handled
//
//   - Scores: the composite and pillar scores must lie in the spec's 0–100
//     scale. Fractional scores are accepted.
//   - trend, indicator keys, event categories: any string of 1 to
//     Config.MaxNameBytes bytes (128 by default), passed through unchanged;
//     they become label values, and an empty or over-long one is invalid.
//   - escalation and delta_24h: any number, no unit or range assumed.
//   - Coordinates: latitudes outside [-90, 90] and longitudes outside
//     [-180, 180] are invalid.
//   - Timestamps: RFC 3339 with or without fractional seconds, "Z" or a
//     numeric offset ("+02:00" or "+0200"), "t", "z" or a space for "T", and
//     leap seconds (":60", the next minute's first second); a value without
//     any zone is read as UTC, as the spec says timestamps are in UTC. Years
//     0000–9999 are kept exactly, however far in the past; an instant more
//     than MaxFutureSkew (an hour) ahead of the clock is invalid, since it
//     would keep staleness alerts quiet.
//   - Event ids: used only to count an event once when a list that shifts
//     while it is walked puts it on two pages (up to 250,000 ids per walk);
//     an event without a usable id is still counted.
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
//     (with Retry-After read as seconds or an HTTP date, capped at a day),
//     5xx ErrServer.
//   - Content-Type: the spec does not name one. JSON types, text/plain (what
//     many frameworks send for JSON by default) and a missing header are
//     accepted, with any parameters, even malformed ones; anything else (an
//     HTML error page from a proxy, say) is a decode error before the body
//     is parsed. A gzip Content-Encoding is decoded (the client asks for
//     gzip); any other is named in the error.
//   - Body sizes: the spec sets none. A page of /v1/conflict or
//     /v1/briefings may be Config.MaxResponseBytes (16 MiB), the other
//     endpoints Config.MaxDocumentBytes (1 MiB); a larger body is cut off
//     there, never read whole, and fails its endpoint.
//
// # Secrets
//
// The API key is sent only in the Authorization header, and only to the
// base URL's origin: a redirect to another scheme, host or port is refused
// (ErrRedirectRefused) before anything is sent there, and a redirect within
// it carries the key (whatever the letter case of its host). No error text
// holds any run of 8 bytes or more of the key, raw or in a common encoding,
// whatever the upstream echoes: error bodies, header lines, status lines,
// Content-Type, Content-Encoding and Location values are all redacted
// (package internal/redact) before anything cuts or changes them. A trend
// word, indicator key or category holding a piece of the key is invalid,
// so it never becomes a label value. Client.Redact does the same for text
// from elsewhere; share the Keyring (Config.Keyring) with the logger so
// that every log line is redacted too. Printing a *Client with any fmt verb
// shows only the redacted base URL.
package client
