// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"bytes"
	"cmp"
	"net"
	"net/http"
	"strconv"
	"time"
)

// FaultKind is a way for an endpoint to misbehave.
type FaultKind int

// The faults, one per way an upstream can fail.
const (
	FaultNone        FaultKind = iota
	FaultStatus                // Status (default 500) with a JSON error body and RetryAfter, if set
	FaultNonJSON               // 200 with an HTML page
	FaultBody                  // 200 with Body as JSON: missing fields, nulls, wrong types…
	FaultTruncated             // 200 announcing the whole body, sending half, then closing
	FaultHang                  // no response at all until the client gives up
	FaultSlowBody              // the real body, 16 bytes at a time, Delay apart
	FaultOversize              // 200 with a valid JSON body of Bytes bytes, streamed
	FaultReset                 // the connection is reset before any response
	FaultContentType           // the real body, labelled text/html
)

// Fault describes one injected failure.
type Fault struct {
	Kind       FaultKind
	Status     int           // FaultStatus: the status code
	RetryAfter string        // FaultStatus: the Retry-After header, verbatim
	Body       string        // FaultBody: the body
	Bytes      int64         // FaultOversize: the body's size (default 64 MiB)
	Delay      time.Duration // FaultSlowBody: pause between chunks (default 100ms)
}

// maxHang bounds FaultHang, so a client without a deadline cannot pin a
// handler goroutine forever.
const maxHang = 10 * time.Minute

func (f Fault) serve(w http.ResponseWriter, r *http.Request, body []byte) {
	switch f.Kind {
	case FaultStatus:
		status := cmp.Or(f.Status, http.StatusInternalServerError)
		if f.RetryAfter != "" {
			w.Header().Set("Retry-After", f.RetryAfter)
		}
		writeError(w, status, "injected_fault", "simulated failure with status "+strconv.Itoa(status))
	case FaultNonJSON:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte("<html><head><title>502 Bad Gateway</title></head><body>upstream unavailable</body></html>"))
	case FaultBody:
		writeJSON(w, http.StatusOK, []byte(f.Body))
	case FaultTruncated:
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body[:len(body)/2])
		// Returning short of Content-Length makes the server close the connection.
	case FaultHang:
		sleep(r.Context(), maxHang)
	case FaultSlowBody:
		delay := cmp.Or(f.Delay, 100*time.Millisecond)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for rest := body; len(rest) > 0; {
			n := min(16, len(rest))
			if _, err := w.Write(rest[:n]); err != nil {
				return
			}
			rest = rest[n:]
			if fl, ok := w.(http.Flusher); ok {
				fl.Flush()
			}
			if !sleep(r.Context(), delay) {
				return
			}
		}
	case FaultOversize:
		streamOversize(w, cmp.Or(f.Bytes, 64<<20))
	case FaultReset:
		reset(w)
	case FaultContentType:
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(body)
	}
}

// streamOversize writes a syntactically valid JSON object of about size
// bytes without ever holding it: a long padding string between a valid
// head and tail.
func streamOversize(w http.ResponseWriter, size int64) {
	head := []byte(`{"events":[],"briefings":[],"next_cursor":null,"padding":"`)
	tail := []byte(`"}`)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write(head); err != nil {
		return
	}
	chunk := bytes.Repeat([]byte("x"), 32<<10)
	for left := size - int64(len(head)+len(tail)); left > 0; {
		n := min(int64(len(chunk)), left)
		if _, err := w.Write(chunk[:n]); err != nil {
			return // the client stopped reading, as it should
		}
		left -= n
	}
	_, _ = w.Write(tail)
}

// reset closes the connection with a TCP RST where it can (SO_LINGER 0),
// so the client sees "connection reset by peer" rather than a clean EOF.
func reset(w http.ResponseWriter) {
	hj, ok := w.(http.Hijacker)
	if !ok {
		panic(http.ErrAbortHandler) // HTTP/2: abort the stream
	}
	conn, _, err := hj.Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}
