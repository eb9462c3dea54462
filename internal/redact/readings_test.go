// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"encoding/base64"
	"html"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// A person reading a text that Upstream let through might undo its escapes
// with whatever tool is at hand, as many times as they like. readings are
// what they could read: the tests' own decoders, the standard library's
// where it has one, sharing no code with the package's.

// readers each undo one kind of escape everywhere in a text.
var readers = []func(string) string{html.UnescapeString, unPercent, unBackslash, unBase64}

// percentEscaped is %HH, either case.
var percentEscaped = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

// unPercent undoes every %HH of s, leniently.
func unPercent(s string) string {
	return percentEscaped.ReplaceAllStringFunc(s, func(m string) string {
		b, _ := strconv.ParseUint(m[1:], 16, 8)
		return string([]byte{byte(b)})
	})
}

// backslashEscaped are JSON's and JavaScript's escapes.
var backslashEscaped = regexp.MustCompile(`\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})(?:\\u([dD][c-fC-F][0-9a-fA-F]{2}))?|((?:\\x[0-9a-fA-F]{2})+)|\\(["\\/'bfnrt])`)

// unBackslash undoes JSON's and JavaScript's escapes: \u{X}, \uXXXX and
// surrogate pairs, \xHH (a character's UTF-8 bytes where they spell one,
// else the code point, as JavaScript reads \xe9), and \" \\ \/ \' \b \f
// \n \r \t.
func unBackslash(s string) string {
	return backslashEscaped.ReplaceAllStringFunc(s, func(m string) string {
		g := backslashEscaped.FindStringSubmatch(m)
		hex := func(h string) rune { v, _ := strconv.ParseUint(h, 16, 32); return rune(v) }
		switch {
		case g[1] != "":
			return string(hex(g[1]))
		case g[2] != "" && g[3] != "":
			if r := utf16.DecodeRune(hex(g[2]), hex(g[3])); r != utf8.RuneError {
				return string(r)
			}
			return string(hex(g[2])) + string(hex(g[3]))
		case g[2] != "":
			return string(hex(g[2]))
		case g[4] != "":
			var raw []byte
			for i := 0; i < len(g[4]); i += 4 {
				raw = append(raw, byte(hex(g[4][i+2:i+4])))
			}
			var out strings.Builder
			for len(raw) > 0 {
				if r, n := utf8.DecodeRune(raw); r != utf8.RuneError && n > 1 {
					out.WriteRune(r)
					raw = raw[n:]
					continue
				}
				out.WriteRune(rune(raw[0]))
				raw = raw[1:]
			}
			return out.String()
		}
		if i := strings.Index("bfnrt", g[5]); i >= 0 {
			return "\b\f\n\r\t"[i : i+1]
		}
		return g[5]
	})
}

// base64Run is a run of either alphabet long enough to hold MinPiece bytes.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{11,}`)

// unBase64 is what every run of base64 in s decodes to, at each of the
// four alignments, one after another.
func unBase64(s string) string {
	var read []string
	for _, run := range base64Run.FindAllString(s, -1) {
		run = strings.NewReplacer("-", "+", "_", "/").Replace(run)
		for off := range 4 {
			part := run[off:]
			if len(part)%4 == 1 {
				part = part[:len(part)-1]
			}
			b, _ := base64.RawStdEncoding.DecodeString(part)
			read = append(read, string(b))
		}
	}
	return strings.Join(read, "\x00")
}

// readings are text and what the readers make of it, up to depth layers.
func readings(text string, depth int) []string {
	out, frontier := []string{text}, []string{text}
	for range depth {
		var next []string
		for _, t := range frontier {
			for _, read := range readers {
				if r := read(t); r != t && r != "" {
					next = append(next, r)
				}
			}
		}
		out, frontier = append(out, next...), next
	}
	return out
}

// readsKey returns a piece of MinPiece bytes of key, or of its UTF-8 bytes
// read as Latin-1, that a reading of text holds, up to three layers deep,
// ignoring ASCII case; or "". A Mark is a barrier: its characters beside
// the text's could spell what the text never held.
func readsKey(text, key string) string { return readsKeyAt(text, key, 3) }

func readsKeyAt(text, key string, depth int) string {
	latin1 := make([]rune, len(key))
	for i := range len(key) {
		latin1[i] = rune(key[i])
	}
	windows := map[string]string{}
	for _, v := range []string{key, string(latin1)} {
		for i := 0; i+MinPiece <= len(v); i++ {
			windows[lowerASCII(v[i:i+MinPiece])] = v[i : i+MinPiece]
		}
	}
	for _, r := range readings(strings.ReplaceAll(text, Mark, "\x00"), depth) {
		r = lowerASCII(r)
		for i := 0; i+MinPiece <= len(r); i++ {
			if piece, ok := windows[r[i:i+MinPiece]]; ok {
				return piece
			}
		}
	}
	return ""
}

// lowerASCII lower-cases ASCII letters only, leaving every other byte as
// it is (strings.ToLower would turn a cut character into U+FFFD).
func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
