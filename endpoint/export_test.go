// SPDX-License-Identifier: Apache-2.0

package endpoint

import "io"

// WindowBytes is the scanner's window.
const WindowBytes = windowBytes

// ReadInWindow is col.Read through a window of window bytes.
func ReadInWindow(col *Collection, r io.Reader, page, window int) (string, error) {
	s := newScanner(r)
	s.buf, s.window = make([]byte, window), window
	return col.readWith(s, page)
}

// plain8 reports whether eight bytes are all plain: special8's verdict, as
// TestPlain8 holds it for every byte at every place.
func plain8(x uint64) bool { return special8(x) == 0 }
