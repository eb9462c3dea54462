// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"bytes"
	"encoding/base64"
	"html"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// escapeKinds start the escapes Upstream undoes: JSON's, HTML's, percent-encoding's.
const escapeKinds = `\&%`

// unescape undoes each escape of b of kinds once, all kinds side by side (a
// key escaped a character at a time, each another way, is one layer too).
func unescape(b []byte, kinds string) ([]byte, bool) {
	if !bytes.ContainsAny(b, kinds) {
		return b, false
	}
	var undo [256]bool
	for _, k := range []byte(kinds) {
		undo[k] = true
	}
	out, changed := make([]byte, 0, len(b)), false
	for i, ok := 0, false; i < len(b); changed = changed || ok {
		if undo[b[i]] {
			out, i, ok = unescapeAt(out, b, i)
		} else {
			out, i, ok = append(out, b[i]), i+1, false
		}
	}
	return out, changed
}

func hasEscape(b []byte) bool { _, found := unescape(b, escapeKinds); return found }

// partialReadings reports whether f holds for a reading of b undoing some
// kinds of escape but not all: every kind at once can change the byte beside
// a piece of a key ("\u002F7B6A%0C": JSON's reader sees "/7B6A%0C", all "/7B6A\f").
func partialReadings(b []byte, f func([]byte) bool) bool {
	var present []byte
	for _, k := range []byte(escapeKinds) {
		if bytes.IndexByte(b, k) >= 0 {
			present = append(present, k)
		}
	}
	for set := 1; set < 1<<len(present)-1; set++ {
		var kinds []byte
		for i, k := range present {
			if set&(1<<i) != 0 {
				kinds = append(kinds, k)
			}
		}
		if reading, ok := unescape(b, string(kinds)); ok && f(reading) {
			return true
		}
	}
	return false
}

// unescapeAt appends what the escape at b[i] stands for, or b[i], and where it ends.
func unescapeAt(dst, b []byte, i int) ([]byte, int, bool) {
	switch {
	case b[i] == '%':
		if h, ok := hexAt(b, i+1, 2); ok {
			return append(dst, byte(h)), i + 3, true //nolint:gosec // G115: two hex digits
		}
	case b[i] == '&':
		// Decimal, hex or named, with its ";" or without, as html reads it.
		j := i + 1
		for j < len(b) && j-i <= 32 && (isAlnum(b[j]) || j == i+1 && b[j] == '#') {
			j++
		}
		if j < len(b) && b[j] == ';' {
			j++
		}
		if ref := string(b[i:j]); j > i+2 { // no entity has a name of one letter
			if text := html.UnescapeString(ref); text != ref {
				return append(dst, text...), j, true
			}
		}
	case b[i] != '\\' || i+1 == len(b):
	case b[i+1] == 'u' && i+2 < len(b) && b[i+2] == '{', b[i+1] == 'x' && i+3 < len(b) && isHex(b[i+2]) && isHex(b[i+3]):
		// \u{X} and \xHH, which no JSON holds: left, so that the text is
		// withheld as nested, never read wrong.
		return append(dst, b[i:i+2]...), i + 2, true
	case b[i+1] == 'u': // \uXXXX, a surrogate pair as one character
		r, ok := hexAt(b, i+2, 4)
		if lo, pair := hexAt(b, i+8, 4); ok && pair && b[i+6] == '\\' && b[i+7] == 'u' && utf16.DecodeRune(r, lo) != utf8.RuneError {
			return utf8.AppendRune(dst, utf16.DecodeRune(r, lo)), i + 12, true
		} else if ok {
			return utf8.AppendRune(dst, r), i + 6, true
		}
	default:
		if k := strings.IndexByte(`"\/'bfnrt`, b[i+1]); k >= 0 {
			return append(dst, "\"\\/'\b\f\n\r\t"[k]), i + 2, true
		}
	}
	return append(dst, b[i]), i + 1, false
}

// hexAt reads n hex digits at b[i:].
func hexAt(b []byte, i, n int) (v rune, ok bool) {
	for k := i; k < i+n; k++ {
		if k >= len(b) || !isHex(b[k]) {
			return 0, false
		}
		d := rune(b[k] | 0x20)
		if d >= 'a' {
			d -= 'a' - 10 - '0'
		}
		v = v<<4 | (d - '0')
	}
	return v, true
}

func isHex(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c|0x20 && c|0x20 <= 'f' }

func isAlnum(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' || '0' <= c && c <= '9' }

// inBase64 reports whether f holds for what a run of base64 in b decodes
// to, at any of the four alignments it can have in the run.
func inBase64(b []byte, f func(decoded []byte) bool) bool {
	for i, j := 0, 0; i < len(b); i = j + 1 {
		for j = i; j < len(b) && isBase64(b[j]); j++ {
		}
		if j-i < (MinPiece*4+2)/3 { // too short to hold MinPiece bytes
			continue
		}
		run, out := []byte(toStandard.Replace(string(b[i:j]))), make([]byte, j-i)
		for align := range 4 {
			if n, _ := base64.RawStdEncoding.Decode(out, run[align:]); f(out[:n]) { // what decodes before a lone last character
				return true
			}
		}
	}
	return false
}

var toStandard = strings.NewReplacer("-", "+", "_", "/")

// nested reports whether decoded base64 holds text of MinPiece bytes escaped
// again: a key is text; a hash or a wrong alignment mostly decodes to none.
func nested(decoded []byte) bool {
	for text := range bytes.FieldsFuncSeq(decoded, func(r rune) bool {
		return r == utf8.RuneError || r < 0x20 && !strings.ContainsRune("\t\n\r", r) || r == 0x7f
	}) {
		if len(text) >= MinPiece && (hasEscape(text) || inBase64(text, func([]byte) bool { return true })) {
			return true
		}
	}
	return false
}

func isBase64(c byte) bool { return isAlnum(c) || strings.IndexByte("+/-_", c) >= 0 }
