package redact

import (
	"encoding/base64"
	"html"
	"unicode/utf8"
)

// A text from the wire can carry a key in escapes that no fixed list of
// spellings covers: .NET's serializer writes '+', '/' and '=' as \u002B,
// \u002F and \u003D; an HTML error page writes any character as &#97; or
// &#x61;; a proxy percent-encodes; a body is base64 inside a JSON field;
// and these nest. So Redact also matches the pieces of every key against
// what the text decodes to, a few layers deep, and removes the original
// span of the text that a matching piece came from.

// view is a text, or what part of one decodes to: each byte remembers the
// span [start, end) of the original text it came from.
type view struct {
	b          []byte
	start, end []int32
}

func identity(s string) view {
	v := view{b: []byte(s), start: make([]int32, len(s)), end: make([]int32, len(s))}
	for i := range len(s) { // every byte, not every rune
		v.start[i], v.end[i] = int32(i), int32(i+1)
	}
	return v
}

// builder makes a decoded view from a parent view.
type builder struct {
	parent  view
	out     view
	changed bool
}

// keep copies the parent's byte i as it is.
func (b *builder) keep(i int) {
	b.out.b = append(b.out.b, b.parent.b[i])
	b.out.start = append(b.out.start, b.parent.start[i])
	b.out.end = append(b.out.end, b.parent.end[i])
}

// emit adds decoded bytes that came from the parent's bytes [from, to).
func (b *builder) emit(decoded []byte, from, to int) {
	for _, c := range decoded {
		b.out.b = append(b.out.b, c)
		b.out.start = append(b.out.start, b.parent.start[from])
		b.out.end = append(b.out.end, b.parent.end[to-1])
	}
	b.changed = true
}

// separate ends a segment: no window spans it (a key holds no NUL).
func (b *builder) separate() {
	b.out.b = append(b.out.b, 0)
	b.out.start = append(b.out.start, -1)
	b.out.end = append(b.out.end, -1)
}

// decoders undo one layer of an encoding each, reporting whether they
// found anything to undo.
var decoders = []func(view) (view, bool){unescapeJS, unescapeHTML, unescapePercent, decodeBase64Runs}

// maxLayers is how deeply encodings are undone: percent-encoded JSON
// escapes of HTML references is three.
const maxLayers = 3

// maxViews bounds the decoded views of one text, whatever it holds.
const maxViews = 32

// decodedViews are what s decodes to, one layer after another, each
// different from the others; s itself first.
func decodedViews(s string) []view {
	first := identity(s)
	all := []view{first}
	seen := map[string]bool{s: true}
	frontier := []view{first}
	for range maxLayers {
		var next []view
		for _, v := range frontier {
			for _, decode := range decoders {
				w, ok := decode(v)
				if !ok || len(w.b) < MinPiece || seen[string(w.b)] || len(all) >= maxViews {
					continue
				}
				seen[string(w.b)] = true
				all = append(all, w)
				next = append(next, w)
			}
		}
		frontier = next
	}
	return all
}

func hexValue(c byte) (int, bool) {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0'), true
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}

// hexAt reads n hex digits at b[i:].
func hexAt(b []byte, i, n int) (int, bool) {
	if i+n > len(b) {
		return 0, false
	}
	v := 0
	for _, c := range b[i : i+n] {
		d, ok := hexValue(c)
		if !ok {
			return 0, false
		}
		v = v<<4 | d
	}
	return v, true
}

// unescapeJS undoes JSON's and JavaScript's escapes: \uXXXX (a surrogate
// pair as one character), \xHH, and \ before any other character.
func unescapeJS(v view) (view, bool) {
	if !hasByte(v.b, '\\') {
		return view{}, false
	}
	b := &builder{parent: v}
	for i := 0; i < len(v.b); {
		if v.b[i] != '\\' || i+1 >= len(v.b) {
			b.keep(i)
			i++
			continue
		}
		switch c := v.b[i+1]; c {
		case 'u':
			r, ok := hexAt(v.b, i+2, 4)
			if !ok {
				b.keep(i)
				i++
				continue
			}
			n := 6
			if 0xD800 <= r && r < 0xDC00 && i+12 <= len(v.b) && v.b[i+6] == '\\' && v.b[i+7] == 'u' {
				if lo, ok := hexAt(v.b, i+8, 4); ok && 0xDC00 <= lo && lo < 0xE000 {
					r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
					n = 12
				}
			}
			b.emit(utf8.AppendRune(nil, rune(r)), i, i+n) //nolint:gosec // G115: four hex digits, or a surrogate pair: at most 0x10FFFF
			i += n
		case 'x':
			h, ok := hexAt(v.b, i+2, 2)
			if !ok {
				b.keep(i)
				i++
				continue
			}
			b.emit([]byte{byte(h)}, i, i+4) //nolint:gosec // G115: two hex digits: at most 0xFF
			i += 4
		default:
			decoded := c // \/ \" \\ \' and any other stand for themselves
			switch c {
			case 'n':
				decoded = '\n'
			case 't':
				decoded = '\t'
			case 'r':
				decoded = '\r'
			case 'b':
				decoded = '\b'
			case 'f':
				decoded = '\f'
			}
			b.emit([]byte{decoded}, i, i+2)
			i += 2
		}
	}
	return b.out, b.changed
}

// unescapeHTML undoes HTML character references: numeric, decimal or hex,
// with or without the closing ';' (as browsers read them), and named ones
// (&plus; &sol; &equals; &amp; …), as html.UnescapeString reads each.
func unescapeHTML(v view) (view, bool) {
	if !hasByte(v.b, '&') {
		return view{}, false
	}
	b := &builder{parent: v}
	for i := 0; i < len(v.b); {
		if v.b[i] != '&' {
			b.keep(i)
			i++
			continue
		}
		// The reference: '&', then '#' digits, '#x' hex digits, or a name,
		// and the ';' if there is one.
		j := i + 1
		switch {
		case j < len(v.b) && v.b[j] == '#' && j+1 < len(v.b) && (v.b[j+1] == 'x' || v.b[j+1] == 'X'):
			j += 2
			for j < len(v.b) && j-i < 12 {
				if _, ok := hexValue(v.b[j]); !ok {
					break
				}
				j++
			}
		case j < len(v.b) && v.b[j] == '#':
			j++
			for j < len(v.b) && j-i < 12 && '0' <= v.b[j] && v.b[j] <= '9' {
				j++
			}
		default:
			for j < len(v.b) && j-i < 33 && isAlnum(v.b[j]) {
				j++
			}
		}
		if j < len(v.b) && v.b[j] == ';' {
			j++
		}
		ref := string(v.b[i:j])
		decoded := html.UnescapeString(ref)
		if j == i+1 || decoded == ref {
			b.keep(i)
			i++
			continue
		}
		b.emit([]byte(decoded), i, j)
		i = j
	}
	return b.out, b.changed
}

// unescapePercent undoes percent-encoding (either case of hex) and '+'
// for a space, as a query string writes it.
func unescapePercent(v view) (view, bool) {
	if !hasByte(v.b, '%') {
		return view{}, false
	}
	b := &builder{parent: v}
	for i := 0; i < len(v.b); {
		if v.b[i] == '%' {
			if h, ok := hexAt(v.b, i+1, 2); ok {
				b.emit([]byte{byte(h)}, i, i+3) //nolint:gosec // G115: two hex digits: at most 0xFF
				i += 3
				continue
			}
		}
		if v.b[i] == '+' {
			b.emit([]byte{' '}, i, i+1)
			i++
			continue
		}
		b.keep(i)
		i++
	}
	return b.out, b.changed
}

// minBase64Run is the shortest run of base64 characters that can hold
// MinPiece bytes: 8 bytes are 10⅔ characters.
const minBase64Run = (MinPiece*4 + 2) / 3

// decodeBase64Runs decodes every run of base64 characters (either
// alphabet) long enough to hold a piece of a key, at each of the four
// alignments its encoding may have inside the run (after "Bearer ", say):
// the decoded segments, one after another, make the view. A run ends at
// padding, which may follow it.
func decodeBase64Runs(v view) (view, bool) {
	b := &builder{parent: v}
	for i := 0; i < len(v.b); {
		if !isBase64(v.b[i]) {
			i++
			continue
		}
		j := i
		for j < len(v.b) && isBase64(v.b[j]) {
			j++
		}
		if j-i >= minBase64Run {
			for align := range 4 {
				decodeBase64Run(b, v, i+align, j)
			}
		}
		i = j
	}
	return b.out, b.changed
}

// decodeBase64Run decodes v.b[from:to] four characters at a time, each
// group of three bytes mapped to its four characters, and a last group of
// two or three characters as unpadded base64 does.
func decodeBase64Run(b *builder, v view, from, to int) {
	var group [4]byte
	var out [3]byte
	start := len(b.out.b)
	for i := from; i+2 <= to; i += 4 {
		n := min(4, to-i)
		for k := range n {
			group[k] = v.b[i+k]
			switch group[k] {
			case '-':
				group[k] = '+'
			case '_':
				group[k] = '/'
			}
		}
		m, err := base64.RawStdEncoding.Decode(out[:], group[:n])
		if err != nil {
			break
		}
		b.emit(out[:m], i, i+n)
	}
	if len(b.out.b) > start {
		b.separate()
	}
}

func isBase64(c byte) bool {
	return isAlnum(c) || c == '+' || c == '/' || c == '-' || c == '_'
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

func hasByte(b []byte, c byte) bool {
	for _, x := range b {
		if x == c {
			return true
		}
	}
	return false
}

// mayBeEncoded reports whether any decoder could find something in s:
// most texts (an endpoint label, a status code, a short message) need no
// decoding at all.
func mayBeEncoded(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '&' || c == '%':
			return true
		case isBase64(c):
			if run++; run >= minBase64Run {
				return true
			}
		default:
			run = 0
		}
	}
	return false
}
