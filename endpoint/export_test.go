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
