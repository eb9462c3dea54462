// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"encoding/base64"
	"fmt"
	"html"
	"math/rand/v2"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// A key can be written one character at a time, each character escaped by
// whatever scheme a template, a proxy or a hostile upstream picks for it:
// no single layer of decoding then holds eight bytes of it. These tests
// write keys that way and check the result without the package's decoders:
// the escapes of any eight consecutive bytes of the key, exactly as they
// were written, must not survive Redact (Redact only cuts spans out and
// puts Mark in, so a surviving piece is still there verbatim).

// charEscapes are the ways one character r can be written: raw, and as
// JSON/JavaScript, HTML and percent escapes of it.
var charEscapes = []struct {
	name   string
	escape func(r rune, upper bool) string
}{
	{"raw", func(r rune, _ bool) string { return string(r) }},
	{`\uXXXX`, func(r rune, upper bool) string {
		if r > 0xffff {
			hi, lo := 0xD800+((r-0x10000)>>10), 0xDC00+((r-0x10000)&0x3ff)
			return hexf(upper, `\u%04x\u%04x`, hi, lo)
		}
		return hexf(upper, `\u%04x`, r)
	}},
	// ECMAScript 2015's code-point escape.
	{`\u{X}`, func(r rune, upper bool) string { return hexf(upper, `\u{%x}`, r) }},
	// JavaScript's \xHH is a code unit up to U+00FF: \xe9 is é; past that
	// the character's UTF-8 bytes, as C, Python and Go byte strings write
	// them.
	{`\xHH`, func(r rune, upper bool) string {
		if r <= 0xff {
			return hexf(upper, `\x%02x`, r)
		}
		var b strings.Builder
		for _, c := range []byte(string(r)) {
			b.WriteString(hexf(upper, `\x%02x`, c))
		}
		return b.String()
	}},
	{"&#D;", func(r rune, _ bool) string { return fmt.Sprintf("&#%d;", r) }},
	{"&#xH;", func(r rune, upper bool) string { return hexf(upper, "&#x%x;", r) }},
	{"%HH", func(r rune, upper bool) string {
		var b strings.Builder
		for _, c := range []byte(string(r)) {
			b.WriteString(hexf(upper, "%%%02x", c))
		}
		return b.String()
	}},
}

// hexf formats with lower- or upper-case hex digits.
func hexf(upper bool, format string, args ...any) string {
	if upper {
		format = strings.NewReplacer("%04x", "%04X", "%02x", "%02X", "%x", "%X").Replace(format)
	}
	return fmt.Sprintf(format, args...)
}

// escapedChars writes key one character at a time, character i by scheme
// pick(i), and returns each character's text. Whoever escapes escapes its
// own escape characters: '\\', '&' and '%' are never written raw (a raw
// "%41" is both three characters and an 'A').
func escapedChars(key string, pick func(i int) int, upper func(i int) bool) []string {
	var out []string
	i := 0
	for _, r := range key {
		scheme := pick(i) % len(charEscapes)
		if scheme == 0 && strings.ContainsRune(`\&%`, r) {
			scheme = 1
		}
		out = append(out, charEscapes[scheme].escape(r, upper(i)))
		i++
	}
	return out
}

// survivingPiece returns the text, as written, of MinPiece or more
// consecutive bytes of key that redacted still holds, or "".
// A Mark is a barrier: its characters beside the text's could spell what
// the text never held.
func survivingPiece(redacted, key string, written []string) string {
	redacted = strings.ReplaceAll(redacted, Mark, "\x00")
	runes := []rune(key)
	for i := range runes {
		n, j := 0, i
		for j < len(runes) && n < MinPiece {
			n += utf8.RuneLen(runes[j])
			j++
		}
		if n < MinPiece {
			break
		}
		if piece := strings.Join(written[i:j], ""); strings.Contains(redacted, piece) {
			return piece
		}
	}
	return ""
}

// TestKeyEscapedCharByChar: a key whose characters are each escaped by a
// different scheme, in the bodies an upstream echoes it in, is removed.
func TestKeyEscapedCharByChar(t *testing.T) {
	keys := append([]string{
		"gsk_live_0123456789abcdef",
		`back\slash&amp%25-key-0123`, // escape characters in the key itself
		"mathematical-𝔘𝔫𝔦𝔠𝔬𝔡𝔢-0123",  // beyond the BMP: \u{1d518}, surrogate pairs
		"plus+separated+key+ab+cd+ef",
	}, escapedKeys...)
	bodies := []func(string) string{
		func(k string) string { return k },
		func(k string) string { return `{"error":"forbidden","detail":"key ` + k + ` refused"}` },
		func(k string) string { return "<p>Bearer " + k + "</p>" },
		func(k string) string { return "/v1/summaries?api_key=" + k + "&page=2" },
	}
	for _, key := range keys {
		k := holding(key)
		rng := rand.New(rand.NewPCG(uint64(len(key)), 7))
		patterns := map[string]func(int) int{
			// Every scheme in turn, starting at each: no two neighbours alike.
			"rotating":   func(i int) int { return i },
			"rotating+3": func(i int) int { return i + 3 },
			// JSON's escape only: surrogate pairs for the characters
			// beyond the BMP.
			"json-only": func(int) int { return 1 },
			// JavaScript's two escapes only: \u{X} beside \xHH (é as \xe9).
			"js-only": func(i int) int { return 2 + i%2 },
			// HTML and percent, no backslash at all.
			"html-percent": func(i int) int { return 4 + i%3 },
			"random":       func(int) int { return rng.IntN(len(charEscapes)) },
		}
		for name, pick := range patterns {
			for _, upper := range []func(int) bool{
				func(int) bool { return false },
				func(i int) bool { return i%2 == 0 },
			} {
				written := escapedChars(key, pick, upper)
				for _, body := range bodies {
					text := body(strings.Join(written, ""))
					if got := k.Upstream(text); survivingPiece(got, key, written) != "" {
						t.Errorf("key %q written %s: %q survives in %s", key, name, survivingPiece(got, key, written), got)
					}
				}
			}
		}
	}
}

// TestPlusInAKeyBesidePercentEscapes: a key with '+' (base64's alphabet)
// half percent-encoded is still the key: '+' there is not a space.
func TestPlusInAKeyBesidePercentEscapes(t *testing.T) {
	key := "ab+cd+ef+gh+ij+kl+mn"
	k := holding(key)
	written := escapedChars(key, func(i int) int {
		if i%3 == 1 {
			return 6 // %HH
		}
		return 0
	}, func(int) bool { return true })
	text := "api_key=" + strings.Join(written, "")
	if got := k.Upstream(text); survivingPiece(got, key, written) != "" {
		t.Errorf("%q survives in %s", survivingPiece(got, key, written), got)
	}
}

// TestARawBackslashBeforeAnEscape: a key's own backslash, left raw before
// an HTML or percent escape of the next character, does not swallow that
// escape's first byte (JavaScript reads \& as &, and \% as %).
func TestARawBackslashBeforeAnEscape(t *testing.T) {
	key := `dom\ain\user\key\0123`
	k := holding(key)
	for _, next := range []int{4, 5, 6} { // &#D; &#xH; %HH
		written := escapedChars(key, func(i int) int {
			if i > 0 && key[i-1] == '\\' {
				return next
			}
			return 1 // \uXXXX: only undoing both kinds at once reads the key
		}, func(int) bool { return false })
		for i, w := range written {
			if w != `\` && key[i] == '\\' {
				written[i] = `\` // raw, as the writer left it
			}
		}
		text := "user " + strings.Join(written, "") + " refused"
		if got := k.Upstream(text); survivingPiece(got, key, written) != "" {
			t.Errorf("%q survives in %s", survivingPiece(got, key, written), got)
		}
	}
}

// TestKeyEscapedCharByCharThenWrapped: the same, with the whole text
// escaped once or twice more on its way (a JSON body percent-encoded into
// a query, that HTML-escaped into a page), beside text that every decoder
// finds something in: four and five layers in all.
func TestKeyEscapedCharByCharThenWrapped(t *testing.T) {
	decimal := regexp.MustCompile(`&#[0-9]+;`)
	unDecimal := func(s string) string {
		return decimal.ReplaceAllStringFunc(s, func(m string) string {
			r, _ := strconv.Atoi(m[2 : len(m)-1])
			return string(rune(r))
		})
	}
	// Each run of base64 left, at each alignment (a Mark may have cut it
	// anywhere).
	base64Run := regexp.MustCompile(`[A-Za-z0-9+/]{4,}`)
	unBase64 := func(s string) string {
		var read []string
		for _, run := range base64Run.FindAllString(s, -1) {
			for off := range 4 {
				if n := (len(run) - off) / 4 * 4; n > 0 {
					b, _ := base64.RawStdEncoding.DecodeString(run[off : off+n])
					read = append(read, string(b))
				}
			}
		}
		return strings.Join(read, "\x00")
	}
	// Something for each decoder to undo at each layer (escapes of
	// escapes, a base64 run of escapes): as many decoded views as a text
	// can have.
	const noise = `\\\\u0041 &amp;amp; %2541 XHUwMDQxJmFtcDslNDEtXHg0MiYjNjc7JTQ0 `
	wrappers := []struct {
		name          string
		kinds         int // of escapes, for the key's characters
		wrap, unwrap  func(string) string
		before, after string
	}{
		{"percent-every", 3, encoders["percent-every"], unPercent, "detail=", "; retry later"},
		{"html-decimal", 3, encoders["html-decimal"], unDecimal, "<p>", "</p>"},
		{"html-decimal of percent-every, two kinds", 2,
			func(s string) string { return encoders["html-decimal"](encoders["percent-every"](s)) },
			func(s string) string { return unPercent(unDecimal(s)) }, "<p>", "</p>"},
		// An OAuth-style state parameter: base64 of the body.
		{"base64", 3, encoders["base64"], unBase64, `{"state":"`, `"}`},
		{"base64, two kinds", 2, encoders["base64"], unBase64, `{"state":"`, `"}`},
		{"percent-every of html-decimal beside noise", 3,
			func(s string) string { return encoders["percent-every"](encoders["html-decimal"](s)) },
			func(s string) string { return unDecimal(unPercent(s)) }, noise + "detail=", " " + noise},
	}
	keys := []string{"gsk_live_0123456789abcdef", "gsk_live+9d8c/7b6a=5f4e3d2c1b0a", "clé-secrète-ünïcödé-日本語-0123"}
	for _, key := range keys {
		k := holding(key)
		for _, w := range wrappers {
			// A '+' left raw: it is no space here.
			written := escapedChars(key, func(i int) int {
				if []rune(key)[i] == '+' {
					return 0
				}
				if w.kinds == 2 {
					return 1 + 5*(i%2) // \uXXXX and %HH
				}
				return i % 7 // raw too
			}, func(i int) bool { return i%3 == 0 })
			text := w.before + w.wrap(strings.Join(written, "")) + w.after
			if piece := survivingPiece(w.unwrap(k.Upstream(text)), key, written); piece != "" {
				t.Errorf("key %q, %s: %q survives in %s", key, w.name, piece, k.Upstream(text))
			}
		}
	}
}

// TestAPathEscapedHTMLEscapedKey: url.PathEscape of html.EscapeString
// leaves '&' raw and escapes the ';' ("&amp%3B#x6d%3B"): two layers, in a
// body busy with escapes, short and long; nothing of the key can be read
// from what Upstream lets through.
func TestAPathEscapedHTMLEscapedKey(t *testing.T) {
	key := "Zm9vYmFy+/0123456789abcdefghij=="
	schemes := []int{3, 5, 0, 0, 6, 6, 1, 1, 0, 0, 0, 0, 0, 0, 5, 4, 0, 1, 5, 0, 0, 0, 2, 2, 0, 2, 5, 0, 4, 0, 0, 6}
	written := escapedChars(key, func(i int) int { return schemes[i] }, func(i int) bool { return i%2 == 0 })
	k := holding(key)
	const busy = `"msg":"upstream said \"bad\"","path":"C:\\Users\\svc","ct":"application/json; charset=utf-8","q":"a=1&b=2&amp;c=%20x",`
	for _, repeat := range []int{1, 150} {
		text := `{` + strings.Repeat(busy, repeat) + `"redirect":"https://auth.example.com/cb?e=` +
			url.PathEscape(html.EscapeString(strings.Join(written, ""))) + `"}`
		got := k.Upstream(text)
		if piece := survivingPiece(html.UnescapeString(unPercent(got)), key, written); piece != "" || readsKey(got, key) != "" {
			t.Errorf("%d bytes: %q survives in %.200s", len(text), piece+readsKey(got, key), got)
		}
	}
}

// TestABase64KeyInBase64InABusyBody: a .NET-escaped key, base64-encoded
// twice, beside a base64 field of escapes and escapes of escapes, in a
// short body and one of 24 KiB: withheld, nothing of it readable.
func TestABase64KeyInBase64InABusyBody(t *testing.T) {
	key := "c8y8K/NIAbx+054T+ZMVpfun8sSFbrzuW94RcwO+"
	dotnet := strings.NewReplacer("+", `\u002B`, "/", `\u002F`, "=", `\u003D`)
	wire := base64.RawURLEncoding.EncodeToString([]byte(base64.RawURLEncoding.EncodeToString([]byte(dotnet.Replace(key)))))
	const busy = `"blob":"aGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0cmFjZSA3ZjNhOWMwMSAvIHNwYW4gMTllMmM0ICYlIFw=","re":"^\\d+\\.\\d+$","dbl":"%2520 &amp;amp; \\\\n",`
	for _, repeat := range []int{0, 1, 200} {
		text := `{` + strings.Repeat(busy, repeat) + `"next":"` + wire + `"}`
		if got := holding(key).Upstream(text); got != Withheld(len(text)) {
			t.Errorf("%d bytes: Upstream let through %.200s", len(text), got)
		}
	}
}

// TestALongTextIsStillDecoded: a text far longer than any excerpt (a whole
// response body) is read to its end: a .NET-escaped key past 256 KiB of
// filler, and base64 of a JSON body holding one (as it is, and
// query-escaped) past 56 KiB of escapes of escapes, are withheld.
func TestALongTextIsStillDecoded(t *testing.T) {
	key := "Ab3d+x9Yz/Q2w+ErT5/uI8+kL0=="
	dotnet := strings.NewReplacer("+", `\u002B`, "/", `\u002F`, "=", `\u003D`)
	filler := func(n int, unit string) string { return strings.Repeat(unit, n/len(unit)+1)[:n] }
	k := holding(key)
	for _, n := range []int{300 << 10, 1 << 20} {
		text := `{"log":"` + filler(n, "lorem ipsum ") + `","echo":"` + dotnet.Replace(key) + `"}`
		if got := k.Upstream(text); got != Withheld(len(text)) {
			t.Errorf("%d bytes: Upstream let through %.100s…", len(text), got)
		}
	}
	body := base64.StdEncoding.EncodeToString([]byte(`{"apiKey":"` + dotnet.Replace(key) + `"}`))
	for _, n := range []int{56 << 10, 128 << 10} {
		for _, field := range []string{body, url.QueryEscape(body)} {
			text := `{"log":"` + filler(n, `consectetur \\\\n 100%252525 &amp;amp;amp; tempor `) + `","body":"` + field + `"}`
			if got := k.Upstream(text); got != Withheld(len(text)) {
				t.Errorf("%d bytes: Upstream let through %.100s…", len(text), got)
			}
		}
	}
}

// writtenCharByChar is key with each character escaped by a scheme picked
// at random from seed; seed 0 leaves it as it is.
func writtenCharByChar(key string, seed uint64) string {
	if seed == 0 {
		return key
	}
	rng := rand.New(rand.NewPCG(seed, seed>>32))
	return strings.Join(escapedChars(key, func(int) int { return rng.IntN(len(charEscapes)) }, func(int) bool { return rng.IntN(2) == 0 }), "")
}
