// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxReadable is the longest text Readable passes: an error body's excerpt.
const MaxReadable = 256

// Readable returns s if a message may quote it as it stands, else
// Withheld(len(s)). It passes text that reads plainly: printable UTF-8 of at
// most MaxReadable bytes, with no escape introducer (\ % &), whose escapes
// would need decoding to be judged, and no token that may be a key: a run of
// MinKeyLength or more key characters (letters, digits, + = _ -) that is not
// a plain word (lower-case letters, _ and -). There is nothing to decode: what
// is not plain is not shown. It knows no key: Redactor.Readable also takes
// out the pieces of the keys held.
func Readable(s string) string {
	if len(s) > MaxReadable || !utf8.ValidString(s) || strings.ContainsAny(s, `\%&`) {
		return Withheld(len(s))
	}
	run, plainWord := 0, true
	keyLike := func() bool { return run >= MinKeyLength && !plainWord }
	for _, c := range s {
		if isKeyChar(c) {
			run++
			plainWord = plainWord && (c >= 'a' && c <= 'z' || c == '_' || c == '-')
			continue
		}
		if keyLike() || !unicode.IsPrint(c) && !unicode.IsSpace(c) {
			return Withheld(len(s))
		}
		run, plainWord = 0, true
	}
	if keyLike() {
		return Withheld(len(s))
	}
	return s
}

func isKeyChar(c rune) bool {
	return c < utf8.RuneSelf && (isAlnum(byte(c)) || strings.ContainsRune("+=_-", c))
}
