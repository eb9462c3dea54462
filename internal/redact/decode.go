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
	base64Done bool // its base64 view was tried already
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

// escapeDecoders undo one layer of escapes each, reporting whether they
// found anything to undo; decodeBase64Runs is the last decoder of a view.
// unescapeAll comes first: where the budget ends in the middle of a
// parent's views, its view is made before the others' (no chain of the
// others does its work).
var escapeDecoders = []func(view) (view, bool){unescapeAll, unescapeJS, unescapeHTML, unescapePercent}

// maxLayers is how deeply encodings are undone: percent-encoded JSON
// escapes of HTML references is three.
const maxLayers = 3

// The decoded views of one text may hold viewsPerByte times its length,
// and maxViewBytes whatever its length. A text of up to 1 KiB (every
// excerpt and label value we export, most log values) gets every chain of
// up to maxLayers decoders: at most 5+25+125 views, each no longer than
// the text. A longer one always gets the chain of unescapeAll's views (at
// most three copies of it) and base64's views of the text and of that
// chain (small: only runs of text are kept); then the views that fit.
const (
	maxViewBytes = 256 << 10
	viewsPerByte = 4
)

// decodedViews are what s decodes to, one layer after another, each
// different from the others; s itself first.
func decodedViews(s string) []view {
	first := identity(s)
	all := []view{first}
	seen := map[string]bool{s: true}
	budget := max(maxViewBytes, viewsPerByte*len(s))

	// keep adds w, what a decoder made of a view, unless it decoded
	// nothing, is too short to hold a piece, was made already or is past
	// the budget.
	keep := func(w view, decoded bool) bool {
		if !decoded || len(w.b) < MinPiece || seen[string(w.b)] || len(w.b) > budget {
			return false
		}
		seen[string(w.b)] = true
		budget -= len(w.b)
		all = append(all, w)
		return true
	}

	// Every kind of escape undone at once, layer after layer: the chain
	// that reads the most texts, made before a long text's budget is spent
	// on the others. Its views are explored further like every other.
	var chain []view
	for v := first; len(chain) < maxLayers; {
		w, decoded := unescapeAll(v)
		if !keep(w, decoded) {
			break
		}
		chain = append(chain, w)
		v = w
	}

	// Base64 of the text and of the chain's views: small views (runs of
	// text only), which the copies of a long body would otherwise spend
	// the budget before. made[d] are the views made so far at depth d+1.
	first.base64Done = true
	for i := range chain {
		chain[i].base64Done = true
	}
	made := make([][]view, maxLayers)
	for depth := range maxLayers {
		if depth < len(chain) {
			made[depth] = append(made[depth], chain[depth])
		}
		parent := first
		if depth > 0 {
			if depth > len(chain) {
				break
			}
			parent = chain[depth-1]
		}
		if w, decoded := decodeBase64Runs(parent); keep(w, decoded) {
			made[depth] = append(made[depth], w)
		}
	}

	frontier := []view{first}
	for depth := range maxLayers {
		next := made[depth]
		for _, v := range frontier {
			for _, decode := range escapeDecoders {
				if len(v.b) > budget { // a view is no longer than its parent (a few named references aside)
					break
				}
				if w, decoded := decode(v); keep(w, decoded) {
					next = append(next, w)
				}
			}
			if !v.base64Done && len(v.b) <= budget {
				if w, decoded := decodeBase64Runs(v); keep(w, decoded) {
					next = append(next, w)
				}
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

// An escape is one kind of escape sequence: the byte that starts it, and
// at, which reads one at b[i] (b[i] == lead) and returns the bytes it
// stands for and where it ends, or false where b[i] starts none.
type escape struct {
	lead byte
	at   func(b []byte, i int) (decoded []byte, end int, ok bool)
}

var (
	jsEscape      = escape{'\\', jsEscapeAt}
	htmlReference = escape{'&', func(b []byte, i int) ([]byte, int, bool) { return htmlReferenceAt(b, i, false) }}
	// strictHTMLReference reads a named reference only with its ';': in a
	// text escaped twice or more, "&amp%3B" (url.PathEscape of HTML, which
	// leaves '&' raw) is "&amp;" once the ';' is decoded, not the legacy
	// "&amp" a browser reads and a stray ";".
	strictHTMLReference = escape{'&', func(b []byte, i int) ([]byte, int, bool) { return htmlReferenceAt(b, i, true) }}
	percentEscape       = escape{'%', percentEscapeAt}
	plusForSpace        = escape{'+', func(_ []byte, i int) ([]byte, int, bool) { return []byte{' '}, i + 1, true }}
)

// unescape undoes, in one pass over v, every escape of the given kinds.
func unescape(v view, kinds ...escape) (view, bool) {
	b := &builder{parent: v}
	// Undone escapes are shorter than what they stand for (a named HTML
	// reference aside): one allocation, not a doubling per append.
	b.out.b, b.out.start, b.out.end = make([]byte, 0, len(v.b)), make([]int32, 0, len(v.b)), make([]int32, 0, len(v.b))
	for i := 0; i < len(v.b); {
		decoded, end, ok := []byte(nil), 0, false
		for _, k := range kinds {
			if v.b[i] == k.lead {
				decoded, end, ok = k.at(v.b, i)
				break
			}
		}
		if !ok {
			b.keep(i)
			i++
			continue
		}
		b.emit(decoded, i, end)
		i = end
	}
	return b.out, b.changed
}

// unescapeJS undoes JSON's and JavaScript's escapes.
func unescapeJS(v view) (view, bool) {
	if !hasByte(v.b, '\\') {
		return view{}, false
	}
	return unescape(v, jsEscape)
}

// unescapeHTML undoes HTML character references.
func unescapeHTML(v view) (view, bool) {
	if !hasByte(v.b, '&') {
		return view{}, false
	}
	return unescape(v, htmlReference)
}

// unescapePercent undoes percent-encoding and '+' for a space, as a query
// string writes it.
func unescapePercent(v view) (view, bool) {
	if !hasByte(v.b, '%') {
		return view{}, false
	}
	return unescape(v, percentEscape, plusForSpace)
}

// unescapeAll undoes JavaScript, HTML and percent escapes together, in
// one pass. A key written a character at a time, each character escaped
// another way (\u0067&#115;%6b…, what a per-character template or a
// hostile upstream writes), is whole in no view that undoes one kind at a
// time: each leaves the others' escapes in place. '+' stays '+': it is a
// character of base64 keys, and a query string's space is
// unescapePercent's.
func unescapeAll(v view) (view, bool) {
	if !hasByte(v.b, '\\') && !hasByte(v.b, '&') && !hasByte(v.b, '%') {
		return view{}, false
	}
	return unescape(v, jsEscape, strictHTMLReference, percentEscape)
}

// jsEscapeAt reads one of JSON's and JavaScript's escapes: \uXXXX (a
// surrogate pair as one character), \u{X…} (ECMAScript's code point), \xHH,
// and \ before any other character but '&' and '%', which stands for it.
//
// \xHH is JavaScript's code unit U+0000 to U+00FF (\xe9 is é), except where
// consecutive \xHH spell one character's UTF-8 bytes, as C, Python and Go
// byte strings write it (\xc3\xa9 is é too).
//
// A backslash before '&' or '%' is left alone: JavaScript reads \& as &, but
// a key's own backslash, raw before an HTML or percent escape of the next
// character, would then swallow that escape's first byte.
func jsEscapeAt(b []byte, i int) ([]byte, int, bool) {
	if i+1 >= len(b) {
		return nil, 0, false
	}
	switch c := b[i+1]; c {
	case 'u':
		if i+2 < len(b) && b[i+2] == '{' {
			r, n := 0, 0
			for j := i + 3; j < len(b) && j < i+10; j++ {
				if b[j] == '}' {
					if n == 0 || r > utf8.MaxRune {
						return nil, 0, false
					}
					return utf8.AppendRune(nil, rune(r)), j + 1, true //nolint:gosec // G115: at most utf8.MaxRune
				}
				d, ok := hexValue(b[j])
				if !ok {
					return nil, 0, false
				}
				r, n = r<<4|d, n+1
			}
			return nil, 0, false
		}
		r, ok := hexAt(b, i+2, 4)
		if !ok {
			return nil, 0, false
		}
		end := i + 6
		if 0xD800 <= r && r < 0xDC00 && end+6 <= len(b) && b[end] == '\\' && b[end+1] == 'u' {
			if lo, ok := hexAt(b, end+2, 4); ok && 0xDC00 <= lo && lo < 0xE000 {
				r = 0x10000 + (r-0xD800)<<10 + (lo - 0xDC00)
				end += 6
			}
		}
		return utf8.AppendRune(nil, rune(r)), end, true //nolint:gosec // G115: four hex digits, or a surrogate pair: at most 0x10FFFF
	case 'x':
		h, ok := hexAt(b, i+2, 2)
		if !ok {
			return nil, 0, false
		}
		if h < utf8.RuneSelf {
			return []byte{byte(h)}, i + 4, true //nolint:gosec // G115: below 0x80
		}
		// The UTF-8 bytes of one character, if the \xHH from here spell one.
		var seq [utf8.UTFMax]byte
		n := 0
		for j := i; n < utf8.UTFMax && j+4 <= len(b) && b[j] == '\\' && b[j+1] == 'x'; j += 4 {
			h, ok := hexAt(b, j+2, 2)
			if !ok {
				break
			}
			seq[n] = byte(h) //nolint:gosec // G115: two hex digits: at most 0xFF
			n++
		}
		if r, size := utf8.DecodeRune(seq[:n]); r != utf8.RuneError && size > 1 {
			return seq[:size], i + 4*size, true
		}
		return utf8.AppendRune(nil, rune(h)), i + 4, true //nolint:gosec // G115: two hex digits: at most 0xFF
	case '&', '%':
		return nil, 0, false
	case 'n':
		return []byte{'\n'}, i + 2, true
	case 't':
		return []byte{'\t'}, i + 2, true
	case 'r':
		return []byte{'\r'}, i + 2, true
	case 'b':
		return []byte{'\b'}, i + 2, true
	case 'f':
		return []byte{'\f'}, i + 2, true
	default: // \/ \" \\ \' and any other stand for themselves
		return []byte{c}, i + 2, true
	}
}

// htmlReferenceAt reads an HTML character reference: numeric, decimal or
// hex, with or without the closing ';' (as browsers read them), or named
// (&plus; &sol; &equals; &amp; …), as html.UnescapeString reads each; a
// named one only with its ';' if namedNeedSemicolon.
func htmlReferenceAt(b []byte, i int, namedNeedSemicolon bool) ([]byte, int, bool) {
	// '&', then '#' digits, '#x' hex digits, or a name, and the ';' if
	// there is one.
	j := i + 1
	switch {
	case j < len(b) && b[j] == '#' && j+1 < len(b) && (b[j+1] == 'x' || b[j+1] == 'X'):
		j += 2
		for j < len(b) && j-i < 12 {
			if _, ok := hexValue(b[j]); !ok {
				break
			}
			j++
		}
	case j < len(b) && b[j] == '#':
		j++
		for j < len(b) && j-i < 12 && '0' <= b[j] && b[j] <= '9' {
			j++
		}
	default:
		for j < len(b) && j-i < 33 && isAlnum(b[j]) {
			j++
		}
		if namedNeedSemicolon && (j >= len(b) || b[j] != ';') {
			return nil, 0, false
		}
	}
	if j < len(b) && b[j] == ';' {
		j++
	}
	ref := string(b[i:j])
	decoded := html.UnescapeString(ref)
	if j == i+1 || decoded == ref {
		return nil, 0, false
	}
	return []byte(decoded), j, true
}

// percentEscapeAt reads %HH, either case of hex.
func percentEscapeAt(b []byte, i int) ([]byte, int, bool) {
	h, ok := hexAt(b, i+1, 2)
	if !ok {
		return nil, 0, false
	}
	return []byte{byte(h)}, i + 3, true //nolint:gosec // G115: two hex digits: at most 0xFF
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
// two or three characters as unpadded base64 does. Of what it decodes it
// keeps only runs of text (see textRuns).
func decodeBase64Run(b *builder, v view, from, to int) {
	var group [4]byte
	var out [3]byte
	runs := textRuns{b: b, runStart: len(b.out.b), checked: len(b.out.b)}
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
		runs.trim(false)
	}
	runs.trim(true)
}

// textRuns keeps, of the bytes a builder is given from runStart on, only
// the runs of text (printable ASCII, tab, newline, UTF-8 beyond ASCII) of
// MinPiece bytes or more, each ended by a separator, as they come. A key
// is text, and so is any escape of it; the three wrong alignments of a
// base64 run, and base64 that is not text (a hash, a compressed blob),
// decode to bytes that are mostly not. Kept, those bytes cost every later
// layer its time, and hold escapes by chance whose views spend the budget
// before the views that matter (a key in base64 in base64 in a busy body).
type textRuns struct {
	b                 *builder
	runStart, checked int // the run being read, and how far it is text
}

// trim reads what was added since the last call; final at the end of the
// bytes, where an unfinished character is no text.
func (t *textRuns) trim(final bool) {
	out := &t.b.out
	for t.checked < len(out.b) {
		rest := out.b[t.checked:]
		if n := textLen(rest); n > 0 {
			t.checked += n
			continue
		}
		if !final && !utf8.FullRune(rest) {
			return // the rest of a character may come with the next group
		}
		// The run ends at a byte that is no text: kept, with that byte as
		// its separator, if long enough; dropped with it if not.
		if t.checked-t.runStart >= MinPiece {
			out.b[t.checked], out.start[t.checked], out.end[t.checked] = 0, -1, -1
			t.checked++
		} else {
			tail := len(out.b) - (t.checked + 1)
			copy(out.b[t.runStart:], out.b[t.checked+1:])
			copy(out.start[t.runStart:], out.start[t.checked+1:])
			copy(out.end[t.runStart:], out.end[t.checked+1:])
			out.b, out.start, out.end = out.b[:t.runStart+tail], out.start[:t.runStart+tail], out.end[:t.runStart+tail]
			t.checked = t.runStart
		}
		t.runStart = t.checked
	}
	if !final {
		return
	}
	if t.checked-t.runStart >= MinPiece {
		t.b.separate()
		return
	}
	out.b, out.start, out.end = out.b[:t.runStart], out.start[:t.runStart], out.end[:t.runStart]
}

// textLen is the length of the character of text p starts with, or 0 if
// p starts with a control character or a byte that is no UTF-8.
func textLen(p []byte) int {
	switch c := p[0]; {
	case 0x20 <= c && c < 0x7f, c == '\t', c == '\n', c == '\r':
		return 1
	case c < utf8.RuneSelf:
		return 0
	}
	if r, size := utf8.DecodeRune(p); r != utf8.RuneError {
		return size
	}
	return 0
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
