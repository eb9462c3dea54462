// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/global-stability/global_stability_exporter/client"
)

// scanner reads a JSON body once, through a window of at most 16 KiB,
// checking it as encoding/json does (nesting up to 10,000 levels, invalid
// UTF-8 let through). The values a description reads are handed over as
// raw tokens, cut after maxToken bytes (no value a rule accepts is that
// long); the rest is skipped where it lies.
//
// Our own because no library reads in one pass with bounded memory and
// encoding/json's verdicts: jsontext holds a token whole (67 MB for a 16 MiB
// string), the fast ones hold the whole body or refuse what encoding/json
// accepts. 1.5× fewer instructions a page than jsontext with a filter, 4.6×
// fewer to skip a 16 MiB string (bench/RESULTS.md, "The scanner, against
// the libraries").
type scanner struct {
	r        io.Reader
	buf      []byte // the window: buf[pos:end] is read and not yet scanned
	pos, end int
	err      error  // of r, once the window is drained; io.EOF at the end
	depth    int    // containers open
	window   int    // the window's largest size: windowBytes, smaller in tests
	maxToken int    // maxTokenBytes, smaller in tests
	tok      []byte // a token that crossed a refill of the window, or was cut
	name     []byte // a name whose colon was not in its window
	escaped  bool   // the last string had an escape
}

const (
	maxTokenBytes = 32 << 10 // above every value a rule accepts (a cursor: 6×4,096 escaped)
	maxDepth      = 10000    // encoding/json's limit of nesting
	windowBytes   = 16 << 10
)

// newScanner starts with a small window: most documents are a few hundred bytes.
func newScanner(r io.Reader) *scanner {
	return &scanner{r: r, buf: make([]byte, 512), window: windowBytes, maxToken: maxTokenBytes}
}

// fill refills the window; false at the end of the body or on an error (s.err).
func (s *scanner) fill() bool {
	if s.end == len(s.buf) && len(s.buf) < s.window {
		s.buf = make([]byte, min(4*len(s.buf), s.window))
	}
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

// cut is the error of a body that ends inside a value, or whose reading failed.
func (s *scanner) cut() error {
	err := s.err
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %w", client.ErrNotJSON, err)
}

func syntax(format string, a ...any) error {
	return fmt.Errorf("%w: %s", client.ErrNotJSON, fmt.Sprintf(format, a...))
}

// peek returns the next byte but whitespace, unconsumed; 0 at the end.
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
			if errors.Is(s.err, io.EOF) {
				return 0, nil
			}
			return 0, s.cut()
		}
	}
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
// none read yet), consuming the comma before it or the closing byte.
func (s *scanner) more(closing byte, first bool) (bool, error) {
	if s.pos < s.end { // the usual: no whitespace
		switch c := s.buf[s.pos]; {
		case c == ',' && !first:
			s.pos++
			return true, nil
		case c > ' ' && c != closing && first:
			return true, nil
		}
	}
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

// each calls fn, which reads the value, for each member or item of the
// container whose opening byte is next.
func (s *scanner) each(fn func(i int, name []byte) error) error {
	closing := s.buf[s.pos] + 2 // '}' and ']' are two after '{' and '['
	if err := s.enter(); err != nil {
		return err
	}
	for i := 0; ; i++ {
		if more, err := s.more(closing, i == 0); err != nil || !more {
			return err
		}
		var name []byte
		if closing == '}' {
			var err error
			if name, err = s.member(); err != nil {
				return err
			}
		}
		if err := fn(i, name); err != nil {
			return err
		}
	}
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
		return s.text(raw), nil
	}
	s.name = append(s.name[:0], raw...) // the colon may be past a refill of raw's window
	if c, err = s.peek(); err == nil && c != ':' {
		err = s.unexpected(c)
	}
	s.pos++
	return s.text(s.name), err
}

// key consumes k, a member's name and colon (`"lat":`), if it is next as written.
func (s *scanner) key(k []byte) bool {
	if bytes.HasPrefix(s.buf[s.pos:s.end], k) {
		s.pos += len(k)
		return true
	}
	return false
}

// text is the text of the string token str just read, escapes undone in a copy.
func (s *scanner) text(raw []byte) []byte {
	if !s.escaped {
		return raw[1 : len(raw)-1]
	}
	b, _ := jsontext.AppendUnquote(nil, raw) // invalid UTF-8 becomes U+FFFD
	return b
}

// literals are handed over as themselves, by their first byte.
var literals = [256]jsontext.Value{'t': jsontext.Value("true"), 'f': jsontext.Value("false"), 'n': jsontext.Value("null")}

// value reads the next value's raw token, valid until the next call; a
// container is skipped and given as `{}` or `[]` (a rule wants its kind).
func (s *scanner) value() (jsontext.Value, error) {
	if s.pos < s.end { // the usual: no whitespace before a string or a number
		switch c := s.buf[s.pos]; {
		case c == '"':
			return s.str(true)
		case c == '-' || c-'0' < 10:
			return s.number(true)
		}
	}
	c, err := s.peek()
	switch {
	case err != nil:
		return nil, err
	case c == '{' || c == '[':
		return jsontext.Value{c, c + 2}, s.skip() // '}' and ']' are two after '{' and '['
	}
	return s.scalar(c, true)
}

// scalar reads the value that starts with c, other than a container.
func (s *scanner) scalar(c byte, keep bool) (jsontext.Value, error) {
	switch c {
	case '"':
		return s.str(keep)
	case 't', 'f', 'n':
		return literals[c], s.literal(literals[c])
	}
	return s.number(keep)
}

// skip checks the next value, holding nothing of it.
func (s *scanner) skip() error {
	c, err := s.peek()
	switch {
	case err != nil:
		return err
	case c == '{' || c == '[':
		return s.each(func(int, []byte) error { return s.skip() })
	}
	_, err = s.scalar(c, false)
	return err
}

func (s *scanner) unexpected(c byte) error {
	if c == 0 && s.pos >= s.end {
		return s.cut()
	}
	return syntax("invalid character %q", c)
}

// literal consumes word, which must be next.
func (s *scanner) literal(word []byte) error {
	for _, c := range word {
		if s.pos == s.end && !s.fill() {
			return s.cut()
		}
		if s.buf[s.pos] != c {
			return syntax("invalid character %q in literal %s", s.buf[s.pos], word)
		}
		s.pos++
	}
	return nil
}
