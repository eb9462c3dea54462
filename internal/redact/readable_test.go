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
		"":                               true,
		"/etc/global-stability/prod.key": true,
		"https://api.example.com/gsis":   true,
		"violence_against_civilians":     true,
		"semiconductor_lead_time_weeks":  true,
		"ransomware_incidents_7d":        true, // a short part with a digit
		"StrategicDevelopments":          true,
		"Riots & protests":               true, // a lone & starts no reference
		"inflation up 5% on the year":    true,
		`{"error":"RATE_LIMIT_EXCEEDED","message":"slow down"}`: true,
		"HTTP 401 Unauthorized\n":                               true,
		"Österreich":                                            true,
		"2026-11-22T00:00:00Z":                                  true,
		"gsk_live_0123456789abcdef01234567":                     false, // a key pasted where a path belongs
		"prod-key-0123456789":                                   false,
		"JBSWY3DPEHPK3PXPJBSWY3DP":                              false, // base32
		"abcdefghijklmnopqrstuvwxyz0":                           false,
		"Z2xvYmFsLXN0YWJpbGl0eS1rZXk=":                          false, // base64
		"/tmp/gse1521181871/api-key":                            true,  // a path: each part judged alone
		"x/Z2xvYmFsLXN0YWJpbGl0eS1rZXk":                         false, // base64 after a '/'
		"676c6f62616c2d737461":                                  false, // hex
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0":      false, // a JWT
		"request 3fa85f64-5717-4562-b3fc-2c963f66afa6":          false, // a UUID may be a key
		"a\x00b":                              false,
		"a\x1bb":                              false,
		"\xff\xfe":                            false,
		"é\xc3":                               false, // a character cut short
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

// TestEveryEscapeIsWithheld walks the escapes of JSON, Go, JavaScript, URLs
// and HTML: each, in any text, withholds it; the same characters that start
// no escape do not.
func TestEveryEscapeIsWithheld(t *testing.T) {
	for _, esc := range []string{`\u0067`, `\u{67}`, `\x67`, `\n`, `\"`, `\/`, `\\`, `\`, "%67", "%6B", "%2f", "&#103;", "&#x67;", "&#X67", "&amp;", "&amp", "&lt", "&eacute;", "&Ascr;"} {
		for _, text := range []string{esc, "a " + esc + " b", "key=" + esc} {
			if got := Readable(text); got != Withheld(len(text)) {
				t.Errorf("Readable(%q) = %q, want it withheld", text, got)
			}
		}
	}
	for _, text := range []string{"&", "& b", "a & b", "100%", "5% down", "%zz", "% 41", "&;", "& #", "50%-60%"} {
		if got := Readable(text); got != text {
			t.Errorf("Readable(%q) = %q, want it as it is: it starts no escape", text, got)
		}
	}
}
