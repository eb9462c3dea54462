// SPDX-License-Identifier: Apache-2.0

package scanners

import "io"

// boundedTokens is the exporter's filter before jsontext as it was before
// the scanner replaced both (endpoint/bounded.go at 4f79ac6), kept here to
// measure "before".
//
// boundedTokens keeps every token of a JSON body short before jsontext
// reads it. jsontext buffers a token whole, growing its buffer by doubling,
// so a body that is one long string, one long number or one long run of
// whitespace (all within the body limits) costs its whole length two or
// three times over, whether the value is read or skipped. No value the
// exporter keeps is long (names 128 bytes, written in at most 6×128 JSON
// bytes; timestamps 64; event ids 256; numbers 1,024 characters; a cursor
// 4,096 bytes, 6×4,096 escaped), so nothing past maxTokenBytes of a string
// or of a number's run of digits can change a verdict: it is dropped here,
// after being checked, and the token stays valid JSON that every rule
// judges as it judged the whole ("longer than …"). A run of whitespace is
// cut to maxSpaceRun. Whatever the body's shape, the decoder then holds a
// few tens of KiB.
//
// The body is still checked byte for byte: what is dropped is validated as
// jsontext would (a control character or a bad escape in a string), and a
// fault there is passed on as a control character the decoder refuses, so
// a body that is not JSON is still refused as not JSON.
type boundedTokens struct {
	r        io.Reader
	maxToken int // maxTokenBytes, smaller in tests; at least 2, the digits that tell a leading zero (00)
	maxSpace int // maxSpaceRun, smaller in tests
	state    lexState
	n        int  // bytes of the current string, or of the number's current run of digits
	keep     bool // the current string's bytes are still passed on
	hex      int  // hex digits of a \u escape still due
	space    int  // the current run of whitespace
}

type lexState int

const (
	lexOutside lexState = iota
	lexString
	lexEscape // after a backslash in a string
	lexNumber
)

const (
	// maxTokenBytes bounds what of a string, or of a number's run of
	// digits, reaches the decoder: above every value a rule accepts, the
	// escaped cursor's 6×4,096 bytes included.
	maxTokenBytes = 32 << 10
	// maxSpaceRun bounds a run of whitespace between tokens.
	maxSpaceRun = 64
	// badByte stands in for a fault found in what was dropped: a control
	// character, which no JSON string or structure allows.
	badByte = 0x01
)

func newBoundedTokens(r io.Reader) *boundedTokens {
	return &boundedTokens{r: r, maxToken: maxTokenBytes, maxSpace: maxSpaceRun}
}

// Read reads from the body into p and keeps what is passed on, in place
// (it only drops or replaces bytes, never adds).
func (b *boundedTokens) Read(p []byte) (int, error) {
	for {
		n, err := b.r.Read(p)
		kept := b.filter(p[:n])
		if kept > 0 || err != nil {
			return kept, err
		}
	}
}

// filter rewrites buf in place and returns how many bytes it keeps.
func (b *boundedTokens) filter(buf []byte) int {
	out := 0
	emit := func(c byte) {
		buf[out] = c
		out++
	}
	for i := 0; i < len(buf); i++ {
		c := buf[i]
		switch b.state {
		case lexString:
			switch {
			case c == '"':
				emit(c)
				b.state = lexOutside
			case c < 0x20:
				emit(badByte) // invalid in a string, kept or not
			case c == '\\':
				b.keep = b.keep && b.n < b.maxToken
				if b.keep {
					emit(c)
				}
				b.n++
				b.state = lexEscape
			default:
				b.keep = b.keep && b.n < b.maxToken
				if b.keep {
					emit(c)
				}
				b.n++
			}
		case lexEscape:
			if b.hex > 0 {
				if !isHex(c) {
					b.fault(emit, c)
					b.hex, b.state = 0, lexString
					continue
				}
				if b.keep {
					emit(c)
				}
				if b.hex--; b.hex == 0 {
					b.state = lexString
				}
				continue
			}
			switch c {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				b.state = lexString
			case 'u':
				b.hex = 4
			default:
				b.fault(emit, c)
				b.state = lexString
				continue
			}
			if b.keep {
				emit(c)
			}
		case lexNumber:
			switch {
			case '0' <= c && c <= '9':
				if b.n++; b.n <= b.maxToken {
					emit(c)
				}
				continue
			case c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-':
				b.n = 0
				emit(c)
				continue
			}
			b.state = lexOutside
			fallthrough
		case lexOutside:
			if c == ' ' || c == '\t' || c == '\n' || c == '\r' {
				if b.space++; b.space <= b.maxSpace {
					emit(c)
				}
				continue
			}
			b.space = 0
			emit(c)
			switch {
			case c == '"':
				b.state, b.n, b.keep = lexString, 0, true
			case c == '-' || ('0' <= c && c <= '9'):
				b.state, b.n = lexNumber, 0
				if c != '-' {
					b.n = 1
				}
			}
		}
	}
	return out
}

// fault passes on a bad escape: as it is while the string is kept (the
// decoder says what is wrong), as badByte once it is not.
func (b *boundedTokens) fault(emit func(byte), c byte) {
	if b.keep {
		emit(c)
		return
	}
	emit(badByte)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}
