package endpoint

import (
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/global-stability/global_stability_exporter/client"
)

// scanner reads a JSON body in one pass through a fixed window, checking
// every byte as it goes (the grammar of RFC 8259, as encoding/json checks
// it: nesting up to 10,000 levels, any bytes of a string but control
// characters, invalid UTF-8 let through). The values a description reads
// are handed over as raw tokens; everything else is skipped where it lies:
// no number parsed, no string copied, nothing held.
//
// Our own, not jsontext or another library, because it is the one pass
// that both bounds memory and reads: jsontext buffers a token whole (a 16
// MiB string costs its length two or three times over), which needed a
// filter in front of it reading every byte a second time; the fast
// libraries that skip (jsonparser, gjson, fastjson, sonic) hold the whole
// body and check less. bench/RESULTS.md, "The scanner", has the numbers:
// 2.2× to 4× less CPU per page than jsontext with its filter.
//
// A token kept longer than maxToken bytes is cut there, still a valid
// token, and judged as the whole would be: no value a rule accepts is that
// long (names 128 bytes, 6×128 escaped; a cursor 4,096, 6×4,096 escaped),
// so its verdict is "longer than …" either way.
type scanner struct {
	r        io.Reader
	buf      []byte // the window: buf[pos:end] is read and not yet scanned
	pos, end int
	err      error  // of r, once the window is drained; io.EOF at the end
	depth    int    // containers open
	maxToken int    // maxTokenBytes, smaller in tests
	tok      []byte // a token that crossed a refill of the window, or was cut
	name     []byte // a name whose colon was not in its window
	stack    []byte // the closing bytes of the containers skip is inside
}

const (
	// maxTokenBytes bounds the bytes of a token handed over: above every
	// value a rule accepts.
	maxTokenBytes = 32 << 10
	// maxDepth is encoding/json's and jsontext's limit of nesting.
	maxDepth = 10000
	// windowBytes is read from the body at a time.
	windowBytes = 16 << 10
)

func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, windowBytes), maxToken: maxTokenBytes}
}

// fill reads the next part of the body into the window, dropping what was
// in it; false at the end of the body or on a read error (s.err).
func (s *scanner) fill() bool {
	for s.err == nil {
		var n int
		n, s.err = s.r.Read(s.buf)
		s.pos, s.end = 0, n
		if n > 0 {
			return true
		}
	}
	return false
}

// cut is the error of a body that ends inside a value: the read's error,
// or the end of the body.
func (s *scanner) cut() error {
	if s.err == nil || s.err == io.EOF {
		return notJSON(io.ErrUnexpectedEOF)
	}
	return notJSON(s.err)
}

func syntax(format string, a ...any) error {
	return fmt.Errorf("%w: %s", client.ErrNotJSON, fmt.Sprintf(format, a...))
}

// peek returns the next byte that is not whitespace, without consuming it:
// 0 at the end of the body.
func (s *scanner) peek() (byte, error) {
	for {
		for ; s.pos < s.end; s.pos++ {
			switch c := s.buf[s.pos]; c {
			case ' ', '\n', '\r', '\t':
			case 0: // 0 says the body ended
				return 0, syntax("invalid character NUL")
			default:
				return c, nil
			}
		}
		if !s.fill() {
			if s.err == io.EOF {
				return 0, nil
			}
			return 0, notJSON(s.err)
		}
	}
}

// expect consumes c, the next byte that is not whitespace.
func (s *scanner) expect(c byte) error {
	got, err := s.peek()
	switch {
	case err != nil:
		return err
	case got == 0:
		return s.cut()
	case got != c:
		return syntax("invalid character %q where %q is due", got, c)
	}
	s.pos++
	return nil
}

// enter consumes the opening byte of a container.
func (s *scanner) enter() error {
	if s.depth++; s.depth > maxDepth {
		return syntax("nested more than %d levels", maxDepth)
	}
	s.pos++
	return nil
}

// more reports whether the container entered has another member (first:
// none was read yet): it consumes the comma before one, or the closing
// byte after the last.
func (s *scanner) more(closing byte, first bool) (bool, error) {
	c, err := s.peek()
	switch {
	case err != nil:
		return false, err
	case c == closing:
		s.pos++
		s.depth--
		return false, nil
	case first:
		return true, nil
	case c != ',':
		return false, s.unexpected(c)
	}
	s.pos++
	return true, nil
}

// member reads a member's name and its colon, and returns the name with its
// escapes undone (cut, as a token is, when long: it names no field then).
func (s *scanner) member() ([]byte, error) {
	c, err := s.peek()
	if err == nil && c != '"' {
		err = s.unexpected(c)
	}
	if err != nil {
		return nil, err
	}
	raw, err := s.str(true)
	if err != nil {
		return nil, err
	}
	if s.pos < s.end && s.buf[s.pos] == ':' {
		s.pos++
		return unquote(raw), nil
	}
	// The colon is further on, maybe past a refill of the window the
	// name lies in.
	s.name = append(s.name[:0], raw...)
	if err := s.expect(':'); err != nil {
		return nil, err
	}
	return unquote(s.name), nil
}

// unquote is a string token's text: its bytes inside the quotes when it has
// no escape, else a copy with them undone (invalid UTF-8 becomes U+FFFD).
func unquote(raw []byte) []byte {
	for _, c := range raw[1 : len(raw)-1] {
		if c == '\\' {
			b, _ := jsontext.AppendUnquote(nil, raw)
			return b
		}
	}
	return raw[1 : len(raw)-1]
}

// Placeholders of the values value hands over as their kind only.
var (
	rawObject = jsontext.Value(`{}`)
	rawArray  = jsontext.Value(`[]`)
	rawTrue   = jsontext.Value(`true`)
	rawFalse  = jsontext.Value(`false`)
	rawNull   = jsontext.Value(`null`)
)

// value reads the next value: a string's or a number's raw token, valid
// until the next call; a literal as itself; an object or an array skipped,
// as `{}` or `[]` (a rule wants only its kind).
func (s *scanner) value() (jsontext.Value, error) {
	c, err := s.peek()
	if err != nil {
		return nil, err
	}
	switch c {
	case '"':
		return s.str(true)
	case '{', '[':
		if err := s.skip(); err != nil {
			return nil, err
		}
		if c == '{' {
			return rawObject, nil
		}
		return rawArray, nil
	case 't':
		return rawTrue, s.literal("true")
	case 'f':
		return rawFalse, s.literal("false")
	case 'n':
		return rawNull, s.literal("null")
	}
	return s.number(true)
}

// skip skips the next value, checking it.
func (s *scanner) skip() error {
	base := len(s.stack)
	for {
		c, err := s.peek() // a value is due
		if err != nil {
			return err
		}
		switch c {
		case '{', '[':
			if len(s.stack)-base+s.depth >= maxDepth {
				return syntax("nested more than %d levels", maxDepth)
			}
			s.pos++
			closing := c + 2 // '}' and ']' follow '{' and '[' two apart
			if next, err := s.peek(); err != nil || next == closing {
				if err != nil {
					return err
				}
				s.pos++
				break // an empty container is a whole value
			}
			s.stack = append(s.stack, closing)
			if c == '{' {
				if _, err := s.member(); err != nil {
					return err
				}
			}
			continue
		case '"':
			_, err = s.str(false)
		case 't':
			err = s.literal("true")
		case 'f':
			err = s.literal("false")
		case 'n':
			err = s.literal("null")
		default:
			_, err = s.number(false)
		}
		if err != nil {
			return err
		}
		// A value ended: close what it ends, up to the next member.
		for {
			if len(s.stack) == base {
				return nil
			}
			closing := s.stack[len(s.stack)-1]
			c, err := s.peek()
			if err != nil {
				return err
			}
			if c == closing {
				s.pos++
				s.stack = s.stack[:len(s.stack)-1]
				continue
			}
			if c != ',' {
				return s.unexpected(c)
			}
			s.pos++
			if closing == '}' {
				if _, err := s.member(); err != nil {
					return err
				}
			}
			break
		}
	}
}

func (s *scanner) unexpected(c byte) error {
	if c == 0 && s.pos >= s.end {
		return s.cut()
	}
	return syntax("invalid character %q", c)
}

// literal consumes word, which must be next.
func (s *scanner) literal(word string) error {
	for i := range len(word) {
		if s.pos == s.end && !s.fill() {
			return s.cut()
		}
		if s.buf[s.pos] != word[i] {
			return syntax("invalid character %q in literal %s", s.buf[s.pos], word)
		}
		s.pos++
	}
	return nil
}

// plain marks the bytes a string holds as they are: not a quote, a
// backslash or a control character.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str scans the string at s.pos; with keep, it returns its raw token, cut
// after s.maxToken bytes.
func (s *scanner) str(keep bool) (jsontext.Value, error) {
	s.tok = s.tok[:0]
	start := s.pos // the first byte of the token not yet in s.tok
	s.pos++
	n := 1                       // bytes of the token scanned
	copied, long := false, false // the token is in s.tok; it was cut
	for {
		b, i := s.buf[:s.end], s.pos
		for i < len(b) && plain[b[i]] {
			i++
		}
		n += i - s.pos
		s.pos = i
		if keep && n > s.maxToken {
			s.tok = append(s.tok, b[start:max(start, i-(n-s.maxToken))]...)
			copied, keep, long = true, false, true
		}
		if i == len(b) {
			if keep {
				s.tok, copied = append(s.tok, b[start:i]...), true
			}
			if !s.fill() {
				return nil, s.cut()
			}
			start = 0
			continue
		}
		switch c := b[i]; {
		case c == '"':
			s.pos++
			switch {
			case long:
				return append(s.tok, '"'), nil
			case !keep:
				return nil, nil
			case copied:
				return append(s.tok, b[start:s.pos]...), nil
			}
			return b[start:s.pos], nil
		case c < 0x20:
			return nil, syntax("control character %#x in a string", c)
		}
		// An escape: kept whole or not at all.
		if keep {
			s.tok, copied = append(s.tok, b[start:i]...), true
			if n >= s.maxToken {
				keep, long = false, true
			}
		}
		esc, err := s.escape()
		if err != nil {
			return nil, err
		}
		if keep {
			s.tok = append(s.tok, esc...)
		}
		n += len(esc)
		start = s.pos
	}
}

// escape consumes the escape at s.pos and returns it.
func (s *scanner) escape() ([]byte, error) {
	var esc [6]byte
	size := 2
	for i := 0; i < size; i++ {
		if s.pos == s.end && !s.fill() {
			return nil, s.cut()
		}
		c := s.buf[s.pos]
		switch {
		case i == 1 && c == 'u':
			size = 6
		case i == 1 && (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't'):
		case i > 1 && ('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
		case i > 0:
			return nil, syntax("invalid escape in a string")
		}
		esc[i] = c
		s.pos++
	}
	return esc[:size], nil
}

// number scans the number at s.pos; with keep, it returns its raw token,
// cut after s.maxToken bytes.
func (s *scanner) number(keep bool) (jsontext.Value, error) {
	s.tok = s.tok[:0]
	start, state := s.pos, numStart
	for {
		b, i := s.buf[:s.end], s.pos
		for ; i < len(b); i++ {
			next := numGrammar[state][numClass[b[i]]]
			if next == numEnd {
				break
			}
			state = next
		}
		s.pos = i
		if i == len(b) { // the window ends inside the number, or with it
			if keep && len(s.tok) < s.maxToken {
				s.tok = append(s.tok, b[start:min(i, start+s.maxToken-len(s.tok))]...)
			}
			if s.fill() {
				start = 0
				continue
			}
			if s.err != io.EOF {
				return nil, s.cut()
			}
			b, start, i = nil, 0, 0
		}
		switch {
		case !numComplete[state]:
			return nil, s.unexpected(s.peekByte())
		case keep && len(s.tok) == 0 && i-start <= s.maxToken:
			return b[start:i], nil // the usual number, inside the window
		case keep && len(s.tok) < s.maxToken:
			s.tok = append(s.tok, b[start:min(i, start+s.maxToken-len(s.tok))]...)
		}
		return s.tok, nil
	}
}

// peekByte is the byte at s.pos, or 0 past the body's end.
func (s *scanner) peekByte() byte {
	if s.pos < s.end {
		return s.buf[s.pos]
	}
	return 0
}

// numState is where a number's grammar (RFC 8259) stands after its bytes
// so far; numGrammar moves it by the class of the next byte.
type numState uint8

const (
	numStart  numState = iota
	numMinus           // -
	numZero            // a leading 0
	numInt             // digits after 1-9
	numDot             // .
	numFrac            // digits after .
	numExp             // e or E
	numSign            // + or - after e
	numExpDig          // digits after e
	numEnd             // the byte is not part of the number
)

// numClass is a byte's class: 0 none of the below, 1 '0', 2 '1'-'9', 3 '-',
// 4 '+', 5 '.', 6 'e' or 'E'.
var numClass = func() (t [256]uint8) {
	for c := '1'; c <= '9'; c++ {
		t[c] = 2
	}
	t['0'], t['-'], t['+'], t['.'], t['e'], t['E'] = 1, 3, 4, 5, 6, 6
	return t
}()

const e_ = numEnd

var numGrammar = [numEnd][7]numState{
	numStart:  {e_, numZero, numInt, numMinus, e_, e_, e_},
	numMinus:  {e_, numZero, numInt, e_, e_, e_, e_},
	numZero:   {e_, e_, e_, e_, e_, numDot, numExp},
	numInt:    {e_, numInt, numInt, e_, e_, numDot, numExp},
	numDot:    {e_, numFrac, numFrac, e_, e_, e_, e_},
	numFrac:   {e_, numFrac, numFrac, e_, e_, e_, numExp},
	numExp:    {e_, numExpDig, numExpDig, numSign, numSign, e_, e_},
	numSign:   {e_, numExpDig, numExpDig, e_, e_, e_, e_},
	numExpDig: {e_, numExpDig, numExpDig, e_, e_, e_, e_},
}

// numComplete says where a number may end.
var numComplete = [numEnd + 1]bool{numZero: true, numInt: true, numFrac: true, numExpDig: true}
