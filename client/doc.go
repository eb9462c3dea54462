// Package client is the transport to the Global Stability Intelligence
// Service (spec: shared/spec/global-stability-api.md): one authenticated
// GET of a {base}/v1/{endpoint} URL, and a walk over the cursor pages of a
// paged endpoint. It knows URLs, bytes and statuses, never the fields of a
// body: package endpoint reads those. It returns typed errors and never
// logs.
//
// # Failures
//
// A non-2xx status is a *StatusError: 401 and 403 are ErrAuth, 404
// ErrNotFound, 429 ErrRateLimited (with Retry-After read as seconds or an
// HTTP date, capped at a day), 5xx ErrServer, each with a short, sanitised
// excerpt of the body whatever its shape (the spec gives none). A failure
// to get a whole response (refused, reset, a deadline, a body cut short) is
// a *TransportError, whose text never carries the request URL. A body that
// is not what the decoder wants is a *DecodeError: a Content-Type that is
// not JSON (JSON types, text/plain and none are accepted, with any
// parameters), a Content-Encoding other than gzip (gzip is asked for and
// undone), a body over its limit (Config.MaxDocumentBytes or
// MaxResponseBytes, counted after gzip is undone, never read whole), or
// whatever the decoder returns (wrapping ErrNotJSON for a body that does
// not parse: the error then shows the start of the body).
//
// # Pages
//
// Walk passes each page's next_cursor back in Config.CursorParam ("cursor"
// by default), with a page size only when Config.PageSizeParam and
// PageSize are both set, and stops with an error after Config.MaxPages
// pages or when a cursor repeats, rather than return a partial list that
// would look whole.
//
// # Secrets
//
// The API key is sent only in the Authorization header, and only to the
// base URL's origin: a redirect to another scheme, host or port is refused
// (ErrRedirectRefused) before anything is sent there, and a redirect within
// it carries the key (whatever the letter case of its host). No error text
// holds any run of 8 bytes or more of the key, raw or in a common encoding,
// whatever the upstream echoes: error bodies, header lines, status lines,
// Content-Type, Content-Encoding and Location values all go through the
// door of package internal/redact (Config.Keys: the process's Redactor,
// holding every target's keys) before anything cuts or changes them: a
// key is redacted, text whose escapes nest deeper than one layer withheld.
// Printing a *Client with any fmt verb shows only the redacted base URL.
package client
