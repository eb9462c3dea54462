// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"strings"
	"testing"
)

// TestReadablePassesOnlyPlainText walks the kinds of text a message may
// quote: plain text passes as it is, everything else is withheld whole.
func TestReadablePassesOnlyPlainText(t *testing.T) {
	for s, plain := range map[string]bool{
		"":                                    true,
		"/etc/global-stability/prod.key":      true,
		"violence_against_civilians":          true,
		`{"error":"invalid key"}`:             true,
		"HTTP 401 Unauthorized\n":             true,
		"Österreich":                          true,
		"gsk_live_0123456789abcdef01234567":   false, // a key pasted where a path belongs
		"prod-key-0123456789":                 false,
		"ABCDEFGHIJKLMNOPQRSTUVWXYZ":          false, // base32
		"abcdefghijklmnopqrstuvwxyz0":         false,
		"Z2xvYmFsLXN0YWJpbGl0eS1rZXk=":        false, // base64
		`\u0067\u0073\u006b`:                  false,
		"%67%73%6b":                           false,
		"&#103;&#115;&#107;":                  false,
		"a\x00b":                              false,
		"a\x1bb":                              false,
		"\xff\xfe":                            false,
		strings.Repeat("a ", MaxReadable/2):   true,
		strings.Repeat("a ", MaxReadable/2+1): false,
	} {
		want := Withheld(len(s))
		if plain {
			want = s
		}
		if got := Readable(s); got != want {
			t.Errorf("Readable(%q) = %q, want %q", s, got, want)
		}
	}
}
