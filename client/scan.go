package client

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// scanner is a strict, streaming JSON reader for the hot path (pages of
// conflict events): no reflection, one reused buffer, and values handed out
// as byte slices valid until the next call. It accepts exactly RFC 8259
// JSON; what encoding/json rejects, it rejects (the differential fuzz test
// holds it to that).
type scanner struct {
	r       io.Reader
	buf     []byte // buf[pos:end] is unread input
	pos     int
	end     int
	offset  int64  // input offset of buf[0]
	readErr error  // sticky error from r (io.EOF at the end)
	scratch []byte // unescaped strings
	keyBuf  []byte // the last object key
}

// maxDepth bounds nesting in skipped values (levels of arrays and objects),
// as encoding/json bounds a whole document's, so that no body can exhaust
// the stack.
const maxDepth = 10000

// scanBufferSize is the read buffer's size. Tokens are read in a
// streaming way or capped (strings: str; numbers: maxNumberBytes), so the
// buffer never has to grow to hold one.
const scanBufferSize = 32 << 10

func newScanner(r io.Reader, buf []byte) *scanner {
	if cap(buf) < 4096 {
		buf = make([]byte, scanBufferSize)
	}
	return &scanner{r: r, buf: buf[:cap(buf)]}
}

// syntaxError is malformed JSON at an input offset.
type syntaxError struct {
	msg    string
	offset int64
}

// Error names the offset, so that a user can find the spot in a saved body.
func (e *syntaxError) Error() string { return fmt.Sprintf("%s at byte %d", e.msg, e.offset) }

func (s *scanner) syntax(format string, args ...any) error {
	return &syntaxError{msg: fmt.Sprintf(format, args...), offset: s.offset + int64(s.pos)}
}

// fill reads more input, keeping buf[keep:end]; it returns false at the end
// of input or on a read error (in readErr).
func (s *scanner) fill(keep int) bool {
	if s.readErr != nil {
		return false
	}
	if keep > 0 {
		n := copy(s.buf, s.buf[keep:s.end])
		s.offset += int64(keep)
		s.pos -= keep
		s.end = n
	} else if keep == 0 && s.end == len(s.buf) {
		// A single token fills the buffer: grow it (the body limit bounds this).
		s.buf = append(s.buf, make([]byte, len(s.buf))...)[:2*len(s.buf)]
	}
	for {
		n, err := s.r.Read(s.buf[s.end:])
		s.end += n
		if err != nil {
			s.readErr = err
		}
		if n > 0 {
			return true
		}
		if err != nil {
			return false
		}
	}
}

// eof is the error for input that ends inside a value.
func (s *scanner) eof() error {
	if s.readErr != nil && !errors.Is(s.readErr, io.EOF) {
		return s.readErr
	}
	return io.ErrUnexpectedEOF
}

// peek skips whitespace and returns the next byte without consuming it.
// peek, next, expect and more check the usual case (the byte is in the
// buffer, no whitespace) first and leave whitespace, refills and errors to
// slow paths: they run several times per field of every event, and the
// loop and error checks in their bodies measured a third of a page's
// decode. (They are still just over the compiler's inlining budget.)
func (s *scanner) peek() (byte, error) {
	if c, ok := s.ready(); ok {
		return c, nil
	}
	return s.peekSlow()
}

// ready returns the next byte when it is in the buffer and not whitespace.
func (s *scanner) ready() (byte, bool) {
	if s.pos < s.end {
		if c := s.buf[s.pos]; c > ' ' {
			return c, true
		}
	}
	return 0, false
}

func (s *scanner) peekSlow() (byte, error) {
	for {
		for s.pos < s.end {
			switch c := s.buf[s.pos]; c {
			case ' ', '\t', '\n', '\r':
				s.pos++
			default:
				return c, nil
			}
		}
		if !s.fill(s.pos) {
			if errors.Is(s.readErr, io.EOF) || s.readErr == nil {
				return 0, io.EOF
			}
			return 0, s.readErr
		}
	}
}

// next is peek for a byte that must exist.
func (s *scanner) next() (byte, error) {
	if c, ok := s.ready(); ok {
		return c, nil
	}
	return s.nextSlow()
}

func (s *scanner) nextSlow() (byte, error) {
	c, err := s.peekSlow()
	if err != nil && errors.Is(err, io.EOF) {
		return 0, io.ErrUnexpectedEOF
	}
	return c, err
}

func (s *scanner) expect(want byte) error {
	if s.pos < s.end && s.buf[s.pos] == want {
		s.pos++
		return nil
	}
	return s.expectSlow(want)
}

func (s *scanner) expectSlow(want byte) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	if c != want {
		return s.syntax("invalid character %q, want %q", c, want)
	}
	s.pos++
	return nil
}

// more reports whether an object or array continues: it consumes a ','
// (not before the first element) or the closing delimiter.
func (s *scanner) more(first bool, closing byte) (bool, error) {
	if s.pos+1 < s.end {
		c, after := s.buf[s.pos], s.buf[s.pos+1]
		switch {
		case c == closing:
			s.pos++
			return false, nil
		case first && c > ' ':
			return true, nil
		case !first && c == ',' && after > ' ' && after != closing:
			s.pos++
			return true, nil
		}
	}
	return s.moreSlow(first, closing)
}

func (s *scanner) moreSlow(first bool, closing byte) (bool, error) {
	c, err := s.next()
	if err != nil {
		return false, err
	}
	if c == closing {
		s.pos++
		return false, nil
	}
	if first {
		return true, nil
	}
	if c != ',' {
		return false, s.syntax("invalid character %q after a value, want ',' or %q", c, closing)
	}
	s.pos++
	if c, err = s.next(); err != nil {
		return false, err
	}
	if c == closing {
		return false, s.syntax("invalid character %q after ','", c)
	}
	return true, nil
}

// kind names the JSON type starting with c, for type errors.
func kind(c byte) string {
	switch c {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	default:
		return "number"
	}
}

// plain marks the bytes a string can hold as they are: not the closing
// quote, not a backslash, not a control character, and ASCII.
var plain = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str reads a string and returns its decoded bytes (escapes resolved,
// invalid UTF-8 as U+FFFD, as encoding/json does), valid until the next
// call. A string that decodes to more than max bytes is read to its end
// without being kept and reported as tooLong; max < 0 keeps nothing, to
// skip a string. Either way the buffer never has to hold a whole string,
// so a huge one costs no memory.
func (s *scanner) str(max int) (b []byte, tooLong bool, err error) {
	if err := s.expect('"'); err != nil {
		return nil, false, err
	}
	// The usual case: plain ASCII up to the closing quote, in the buffer.
	buf := s.buf[:s.end]
	i := s.pos
	for i < len(buf) && plain[buf[i]] {
		i++
	}
	if i < len(buf) && buf[i] == '"' {
		raw := buf[s.pos:i]
		s.pos = i + 1
		if len(raw) > max {
			return nil, true, nil
		}
		return raw, false, nil
	}
	return s.strSlow(max)
}

// strSlow decodes a string from s.pos byte by byte, consuming as it goes
// (a refill keeps nothing already read), into the scratch buffer.
func (s *scanner) strSlow(max int) ([]byte, bool, error) {
	out := s.scratch[:0]
	tooLong := max < 0
	put := func(r rune) {
		if tooLong {
			return
		}
		if n := utf8.RuneLen(r); n < 0 || len(out)+n > max {
			tooLong, out = true, out[:0]
			return
		}
		out = utf8.AppendRune(out, r)
	}
	for {
		if s.pos >= s.end && !s.fill(s.pos) {
			return nil, false, s.eof()
		}
		c := s.buf[s.pos]
		switch {
		case c == '"':
			s.pos++
			s.scratch = out
			if tooLong {
				return nil, true, nil
			}
			return out, false, nil
		case c == '\\':
			r, err := s.escape()
			if err != nil {
				return nil, false, err
			}
			put(r)
		case c < 0x20:
			return nil, false, s.syntax("invalid control character in string")
		case c < utf8.RuneSelf:
			put(rune(c))
			s.pos++
		default:
			s.ensure(utf8.UTFMax) // a rune cut by the buffer's end is whole again
			r, size := utf8.DecodeRune(s.buf[s.pos:s.end])
			put(r) // RuneError for invalid bytes
			s.pos += size
		}
	}
}

// escape decodes the escape at s.pos (a backslash), and the low half of a
// surrogate pair after it, as encoding/json does: an unpaired surrogate is
// U+FFFD.
func (s *scanner) escape() (rune, error) {
	if !s.ensure(2) {
		return 0, s.eof()
	}
	e := s.buf[s.pos+1]
	if r, ok := simpleEscapes[e]; ok {
		s.pos += 2
		return r, nil
	}
	if e != 'u' {
		return 0, s.syntax("invalid escape %q in string", e)
	}
	if !s.ensure(6) {
		return 0, s.eof()
	}
	r, ok := hex4(s.buf[s.pos+2 : s.pos+6])
	if !ok {
		return 0, s.syntax("invalid \\u escape in string")
	}
	s.pos += 6
	if !utf16.IsSurrogate(r) {
		return r, nil
	}
	if s.ensure(6) && s.buf[s.pos] == '\\' && s.buf[s.pos+1] == 'u' {
		if lo, ok := hex4(s.buf[s.pos+2 : s.pos+6]); ok {
			if dec := utf16.DecodeRune(r, lo); dec != utf8.RuneError {
				s.pos += 6
				return dec, nil
			}
		}
	}
	return utf8.RuneError, nil
}

var simpleEscapes = map[byte]rune{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// ensure reads until n bytes from s.pos are in the buffer, and reports
// whether they are (false at the end of input).
func (s *scanner) ensure(n int) bool {
	for s.end-s.pos < n {
		if !s.fill(s.pos) {
			return false
		}
	}
	return true
}

func hex4(b []byte) (rune, bool) {
	if len(b) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range b[:4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// maxNumberBytes bounds the text of a number that is kept: JSON allows any
// length, and a longer number is read to its end without being kept.
const maxNumberBytes = 1024

// number reads a JSON number and returns its text, valid until the next
// call, or tooLong for a number of more than maxNumberBytes.
func (s *scanner) number() (text []byte, tooLong bool, err error) {
	if _, err := s.next(); err != nil {
		return nil, false, err
	}
	start := s.pos
	i := start
	at := func() (byte, bool) {
		for i >= s.end {
			keep := start
			if tooLong || i-start > maxNumberBytes {
				tooLong, keep = true, i // keep nothing of it from now on
			}
			if !s.fill(keep) {
				return 0, false
			}
			i -= keep
			start = max(start-keep, 0)
		}
		return s.buf[i], true
	}
	digits := func() int {
		n := 0
		for c, ok := at(); ok && c >= '0' && c <= '9'; c, ok = at() {
			i++
			n++
		}
		return n
	}
	if c, _ := at(); c == '-' {
		i++
	}
	c, ok := at()
	switch {
	case !ok:
		return nil, false, s.eof()
	case c == '0':
		i++
	case c >= '1' && c <= '9':
		digits()
	default:
		s.pos = i
		return nil, false, s.syntax("invalid character %q in number", c)
	}
	if c, ok := at(); ok && c == '.' {
		i++
		if digits() == 0 {
			if _, ok := at(); !ok {
				return nil, false, s.eof()
			}
			s.pos = i
			return nil, false, s.syntax("invalid character after decimal point in number")
		}
	}
	if c, ok := at(); ok && (c == 'e' || c == 'E') {
		i++
		if c, ok := at(); ok && (c == '+' || c == '-') {
			i++
		}
		if digits() == 0 {
			if _, ok := at(); !ok {
				return nil, false, s.eof()
			}
			s.pos = i
			return nil, false, s.syntax("invalid character in exponent of number")
		}
	}
	if s.readErr != nil && !errors.Is(s.readErr, io.EOF) && i >= s.end {
		return nil, false, s.readErr
	}
	s.pos = i
	if tooLong || i-start > maxNumberBytes {
		return nil, true, nil
	}
	return s.buf[start:i], false, nil
}

// literal consumes true, false or null.
func (s *scanner) literal() error {
	c, err := s.next()
	if err != nil {
		return err
	}
	var word string
	switch c {
	case 't':
		word = "true"
	case 'f':
		word = "false"
	case 'n':
		word = "null"
	default:
		return s.syntax("invalid character %q looking for beginning of value", c)
	}
	for s.end-s.pos < len(word) {
		if !s.fill(s.pos) {
			return s.eof()
		}
	}
	if string(s.buf[s.pos:s.pos+len(word)]) != word {
		return s.syntax("invalid literal, want %s", word)
	}
	s.pos += len(word)
	return nil
}

// skip consumes any one value.
func (s *scanner) skip(depth int) error {
	c, err := s.next()
	if err != nil {
		return err
	}
	// depth counts the arrays and objects around this value: it may open
	// one more only below maxDepth.
	if (c == '{' || c == '[') && depth >= maxDepth {
		return s.syntax("exceeded max depth")
	}
	switch c {
	case '"':
		_, _, err = s.str(-1)
		return err
	case '{':
		s.pos++
		for first := true; ; first = false {
			more, err := s.more(first, '}')
			if err != nil || !more {
				return err
			}
			if c, err := s.next(); err != nil {
				return err
			} else if c != '"' {
				return s.syntax("invalid character %q looking for beginning of object key string", c)
			}
			if _, _, err := s.str(-1); err != nil {
				return err
			}
			if err := s.expect(':'); err != nil {
				return err
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
		}
	case '[':
		s.pos++
		for first := true; ; first = false {
			more, err := s.more(first, ']')
			if err != nil || !more {
				return err
			}
			if err := s.skip(depth + 1); err != nil {
				return err
			}
		}
	case 't', 'f', 'n':
		return s.literal()
	default:
		_, _, err = s.number()
		return err
	}
}

// float reads a number as float64; out of range is a type error.
func (s *scanner) float() (float64, error) {
	if v, ok := s.shortDecimal(); ok {
		return v, nil
	}
	b, tooLong, err := s.number()
	switch {
	case err != nil:
		return 0, err
	case tooLong:
		return 0, errOutOfRange
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		if errors.Is(err, strconv.ErrRange) {
			return 0, errOutOfRange
		}
		return 0, s.syntax("invalid number")
	}
	return v, nil
}

var errOutOfRange = errors.New("number out of the range of a float64, or of more than 1024 characters")

// shortDecimal is float's fast path for the numbers the API sends
// (coordinates, scores: -?int(.frac)? with few digits), parsed straight
// from the buffer. It takes only numbers of at most 19 digits whose value
// without the decimal point stays below 2^52: then float64(digits) /
// 10^decimals is one correctly rounded IEEE division of two exact values
// (10^decimals, at most 10^18, is exact), the very result
// strconv.ParseFloat gives through its own exact fast path. Anything else
// (an exponent, more digits, a number cut by the end of the buffer, bad
// syntax) is left untouched for number and ParseFloat.
func (s *scanner) shortDecimal() (float64, bool) {
	buf := s.buf[:s.end]
	i := s.pos
	neg := i < len(buf) && buf[i] == '-'
	if neg {
		i++
	}
	var mant uint64
	start := i
	if i < len(buf) && buf[i] == '0' {
		i++
	} else {
		for i < len(buf) && buf[i]-'0' <= 9 {
			mant = mant*10 + uint64(buf[i]-'0')
			i++
		}
		if i == start {
			return 0, false
		}
	}
	digits, decimals := i-start, 0
	if i < len(buf) && buf[i] == '.' {
		i++
		from := i
		for i < len(buf) && buf[i]-'0' <= 9 {
			mant = mant*10 + uint64(buf[i]-'0')
			i++
		}
		decimals = i - from
		if decimals == 0 {
			return 0, false
		}
		digits += decimals
	}
	if i >= len(buf) || buf[i] == 'e' || buf[i] == 'E' || digits > 19 || mant >= 1<<52 {
		return 0, false
	}
	v := float64(mant) / exactPow10[decimals]
	if neg {
		v = -v
	}
	s.pos = i
	return v, true
}

// exactPow10 holds the powers of ten shortDecimal divides by; a float64
// represents each exactly (up to 1e22 would be).
var exactPow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18}

// finish requires only whitespace until the end of input.
func (s *scanner) finish() error {
	_, err := s.peek()
	switch {
	case errors.Is(err, io.EOF):
		return nil
	case err != nil:
		return err
	}
	return errors.New("trailing data after the JSON document")
}
