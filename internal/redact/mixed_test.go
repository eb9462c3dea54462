package redact

import (
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
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
		var k Keyring
		k.Remember(key)
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
					if got := k.Redact(text); survivingPiece(got, key, written) != "" {
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
	var k Keyring
	k.Remember(key)
	written := escapedChars(key, func(i int) int {
		if i%3 == 1 {
			return 6 // %HH
		}
		return 0
	}, func(int) bool { return true })
	text := "api_key=" + strings.Join(written, "")
	if got := k.Redact(text); survivingPiece(got, key, written) != "" {
		t.Errorf("%q survives in %s", survivingPiece(got, key, written), got)
	}
}

// FuzzRedactCharByChar: any key, each character escaped by a scheme the
// fuzzer picks, between any texts, leaves no piece of itself as written.
func FuzzRedactCharByChar(f *testing.F) {
	f.Add("gsk_live_0123456789", uint64(0x0123456), "detail: ", " refused")
	f.Add("clé-secrète-ünïcödé", uint64(0xdeadbeef), "", "")
	f.Add("𝔘𝔫𝔦𝔠𝔬𝔡𝔢-key", uint64(42), "<p>", "</p>")
	f.Fuzz(func(t *testing.T, key string, schemes uint64, prefix, suffix string) {
		// A key is sent in a header: valid text, no control characters.
		if len(key) < MinPiece || len(key) > 64 || !utf8.ValidString(key) || strings.ContainsFunc(key, unicode.IsControl) || len(prefix)+len(suffix) > 256 {
			t.Skip()
		}
		rng := rand.New(rand.NewPCG(schemes, schemes>>32))
		written := escapedChars(key, func(int) int { return rng.IntN(len(charEscapes)) }, func(int) bool { return rng.IntN(2) == 0 })
		var k Keyring
		k.Remember(key)
		// A space on either side: a prefix ending in "%" or "&#" would read
		// the key's first characters as part of its escape (a text that no
		// longer spells the key).
		got := k.Redact(prefix + " " + strings.Join(written, "") + " " + suffix)
		if piece := survivingPiece(got, key, written); piece != "" {
			t.Fatalf("key %q written %q: %q survives in %q", key, strings.Join(written, ""), piece, got)
		}
	})
}

// TestARawBackslashBeforeAnEscape: a key's own backslash, left raw before
// an HTML or percent escape of the next character, does not swallow that
// escape's first byte (JavaScript reads \& as &, and \% as %).
func TestARawBackslashBeforeAnEscape(t *testing.T) {
	key := `dom\ain\user\key\0123`
	var k Keyring
	k.Remember(key)
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
		if got := k.Redact(text); survivingPiece(got, key, written) != "" {
			t.Errorf("%q survives in %s", survivingPiece(got, key, written), got)
		}
	}
}

// TestKeyEscapedCharByCharThenWrapped: the same, with the whole text
// escaped once or twice more on its way (a JSON body percent-encoded into
// a query, that HTML-escaped into a page), beside text that every decoder
// finds something in: four and five layers in all.
func TestKeyEscapedCharByCharThenWrapped(t *testing.T) {
	percent := regexp.MustCompile(`%[0-9A-Fa-f]{2}`)
	decimal := regexp.MustCompile(`&#[0-9]+;`)
	unPercent := func(s string) string { // lenient: what a reader of the text sees
		return percent.ReplaceAllStringFunc(s, func(m string) string {
			b, _ := strconv.ParseUint(m[1:], 16, 8)
			return string([]byte{byte(b)})
		})
	}
	unDecimal := func(s string) string {
		return decimal.ReplaceAllStringFunc(s, func(m string) string {
			r, _ := strconv.Atoi(m[2 : len(m)-1])
			return string(rune(r))
		})
	}
	// Something for each decoder to undo at each layer (escapes of
	// escapes, a base64 run of escapes): more decoded views than maxViews,
	// so the order of the decoders decides which are made.
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
		{"percent-every of html-decimal beside noise", 3,
			func(s string) string { return encoders["percent-every"](encoders["html-decimal"](s)) },
			func(s string) string { return unDecimal(unPercent(s)) }, noise + "detail=", " " + noise},
	}
	keys := []string{"gsk_live_0123456789abcdef", "gsk_live+9d8c/7b6a=5f4e3d2c1b0a", "clé-secrète-ünïcödé-日本語-0123"}
	for _, key := range keys {
		var k Keyring
		k.Remember(key)
		for _, w := range wrappers {
			// A '+' left raw: it is no space here.
			written := escapedChars(key, func(i int) int {
				if []rune(key)[i] == '+' {
					return 0
				}
				if w.kinds == 2 {
					return 1 + 5*(i%2) // \uXXXX and %HH
				}
				return 1 + i%6
			}, func(i int) bool { return i%3 == 0 })
			text := w.before + w.wrap(strings.Join(written, "")) + w.after
			if piece := survivingPiece(w.unwrap(k.Redact(text)), key, written); piece != "" {
				t.Errorf("key %q, %s: %q survives in %s", key, w.name, piece, k.Redact(text))
			}
		}
	}
}
