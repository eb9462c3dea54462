// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"encoding/binary"
	"errors"
	"io"
	"math/bits"

	"github.com/go-json-experiment/json/jsontext"
)

// The scanner's tokens: strings and numbers, read where they lie in the
// window, or gathered into s.tok when they cross a refill or are cut.

// plain marks the bytes a string holds as they are.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 256; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// special8 marks with its high bit each byte of x that is not plain (Bit
// Twiddling Hacks' haszero and hasless): the lowest mark is exact, as a
// borrow only carries upwards, so it finds where a string's run ends.
func special8(x uint64) uint64 {
	const ones, highs = 0x0101010101010101, 0x8080808080808080
	quote, backslash := x^(ones*'"'), x^(ones*'\\')
	return ((quote-ones)&^quote | (backslash-ones)&^backslash | (x-ones*0x20)&^x) & highs
}

// plainRun is the length of b's leading run of plain bytes: a long string
// is skipped eight bytes a step.
func plainRun(b []byte) int {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		if m := special8(binary.LittleEndian.Uint64(b[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	for i < len(b) && plain[b[i]] {
		i++
	}
	return i
}

// str scans the string at s.pos; with keep, it returns its raw token, cut
// after s.maxToken bytes (without, what it returns is not to be read).
func (s *scanner) str(keep bool) (jsontext.Value, error) {
	s.tok, s.escaped = s.tok[:0], false
	// The usual string, whole in the window and without an escape, skips
	// the loop below, which keeps track of refills, cuts and escapes
	// (BenchmarkReadPage).
	if end := s.pos + 1 + plainRun(s.buf[s.pos+1:s.end]); end < s.end && s.buf[end] == '"' && end-s.pos <= s.maxToken {
		start := s.pos
		s.pos = end + 1
		return s.buf[start:s.pos], nil
	}
	start, n := s.pos, 1 // the first byte of the token not yet in s.tok; bytes of it scanned
	copied := false      // the token is in s.tok
	s.pos++
	for {
		b, i := s.buf[:s.end], s.pos+plainRun(s.buf[s.pos:s.end])
		n += i - s.pos
		s.pos = i
		if keep && n > s.maxToken {
			s.tok, copied, keep = append(s.tok, b[start:max(start, i-(n-s.maxToken))]...), true, false
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
			case !keep && copied: // cut
				return append(s.tok, '"'), nil
			case copied:
				return append(s.tok, b[start:s.pos]...), nil
			}
			return b[start:s.pos], nil
		case c < 0x20:
			return nil, syntax("control character %#x in a string", c)
		}
		// An escape: kept whole or not at all.
		if keep {
			s.tok, copied, keep = append(s.tok, b[start:i]...), true, n < s.maxToken
		}
		s.escaped = true
		size, err := s.escape(keep)
		if err != nil {
			return nil, err
		}
		n += size
		start = s.pos
	}
}

// escape consumes the escape at s.pos (to s.tok with keep) and returns its size.
func (s *scanner) escape(keep bool) (int, error) {
	size := 2
	for i := 0; i < size; i++ {
		if s.pos == s.end && !s.fill() {
			return 0, s.cut()
		}
		c := s.buf[s.pos]
		switch {
		case i == 1 && c == 'u':
			size = 6
		case i == 1 && (c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' || c == 't'):
		case i > 1 && ('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
		case i > 0:
			return 0, syntax("invalid escape in a string")
		}
		if keep {
			s.tok = append(s.tok, c)
		}
		s.pos++
	}
	return size, nil
}

// number scans the number at s.pos; with keep, it returns its raw token, cut.
func (s *scanner) number(keep bool) (jsontext.Value, error) {
	// The usual number, digits and a fraction ended inside the window, is
	// read without the grammar's table and its lookups (BenchmarkReadPage).
	if end, ok := shortNumber(s.buf[s.pos:s.end]); ok && end <= s.maxToken {
		start := s.pos
		s.pos += end
		return s.buf[start:s.pos:s.pos], nil
	}
	// Any other by the grammar's table, across refills of the window.
	s.tok = s.tok[:0]
	start, state := s.pos, numStart
	for {
		b, i := s.buf[:s.end], s.pos
		for i < len(b) {
			for numDigits[state] && i < len(b) && b[i]-'0' < 10 { // a run of digits: the long part of a number
				i++
			}
			if i == len(b) {
				break
			}
			next := numGrammar[state][numClass[b[i]]]
			if next == numEnd {
				break
			}
			state = next
			i++
		}
		s.pos = i
		if keep && len(s.tok) < s.maxToken { // the window's part of it, up to the cut
			s.tok = append(s.tok, b[start:min(i, start+s.maxToken-len(s.tok))]...)
		}
		if i == len(b) { // the window ends inside the number, or with it
			if s.fill() {
				start = 0
				continue
			}
			if !errors.Is(s.err, io.EOF) {
				return nil, s.cut()
			}
		}
		switch {
		case !numComplete[state] && i < len(b):
			return nil, s.unexpected(b[i])
		case !numComplete[state]:
			return nil, s.cut()
		}
		return s.tok, nil
	}
}

// shortNumber is the length of the number -?(0|[1-9][0-9]*)(.[0-9]+)? that
// b starts with, if a byte that cannot go on a number follows it in b.
func shortNumber(b []byte) (int, bool) {
	i := boolToInt(len(b) > 0 && b[0] == '-')
	first := i
	for i < len(b) && b[i]-'0' < 10 {
		i++
	}
	if i == first || b[first] == '0' && i > first+1 || i == len(b) {
		return 0, false
	}
	if b[i] == '.' {
		point := i
		for i++; i < len(b) && b[i]-'0' < 10; i++ {
		}
		if i == point+1 || i == len(b) {
			return 0, false
		}
	}
	return i, numClass[b[i]] == otherByte
}

// numState is where a number's grammar stands, moved by numGrammar.
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

// A byte's class, what it can be in a number: numGrammar's column.
const (
	otherByte = iota // none of the below: the number ends before it
	zeroByte         // 0
	digitByte        // 1-9
	minusByte        // -
	plusByte         // +
	dotByte          // .
	expByte          // e or E
	byteClasses
)

// numClass is each byte's class.
var numClass = func() (t [256]uint8) {
	for c := '1'; c <= '9'; c++ {
		t[c] = digitByte
	}
	t['0'], t['-'], t['+'], t['.'], t['e'], t['E'] = zeroByte, minusByte, plusByte, dotByte, expByte, expByte
	return t
}()

// numGrammar is the next state, by the state and the byte's class.
var numGrammar = [numEnd][byteClasses]numState{
	numStart:  {numEnd, numZero, numInt, numMinus, numEnd, numEnd, numEnd},
	numMinus:  {numEnd, numZero, numInt, numEnd, numEnd, numEnd, numEnd},
	numZero:   {numEnd, numEnd, numEnd, numEnd, numEnd, numDot, numExp},
	numInt:    {numEnd, numInt, numInt, numEnd, numEnd, numDot, numExp},
	numDot:    {numEnd, numFrac, numFrac, numEnd, numEnd, numEnd, numEnd},
	numFrac:   {numEnd, numFrac, numFrac, numEnd, numEnd, numEnd, numExp},
	numExp:    {numEnd, numExpDig, numExpDig, numSign, numSign, numEnd, numEnd},
	numSign:   {numEnd, numExpDig, numExpDig, numEnd, numEnd, numEnd, numEnd},
	numExpDig: {numEnd, numExpDig, numExpDig, numEnd, numEnd, numEnd, numEnd},
}

// numDigits says where a digit keeps the state.
var numDigits = [numEnd + 1]bool{numInt: true, numFrac: true, numExpDig: true}

// numComplete says where a number may end.
var numComplete = [numEnd + 1]bool{numZero: true, numInt: true, numFrac: true, numExpDig: true}
