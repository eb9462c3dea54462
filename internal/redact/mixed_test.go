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

// percentEscaped is %HH, either case.
var percentEscaped = regexp.MustCompile(`%[0-9A-Fa-f]{2}`)

// unPercent undoes every %HH of s, leniently: what a reader of the text
// sees.
func unPercent(s string) string {
	return percentEscaped.ReplaceAllStringFunc(s, func(m string) string {
		b, _ := strconv.ParseUint(m[1:], 16, 8)
		return string([]byte{byte(b)})
	})
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
				return i % 7 // raw too
			}, func(i int) bool { return i%3 == 0 })
			text := w.before + w.wrap(strings.Join(written, "")) + w.after
			if piece := survivingPiece(w.unwrap(k.Redact(text)), key, written); piece != "" {
				t.Errorf("key %q, %s: %q survives in %s", key, w.name, piece, k.Redact(text))
			}
		}
	}
}

// TestAPathEscapedHTMLEscapedKey: url.PathEscape of html.EscapeString
// leaves '&' raw and escapes the ';' ("&amp%3B#x6d%3B"), in a body busy
// enough with escapes of escapes that the decoded views run out before
// percent, then HTML, then the mixed escapes are undone in turn: the mixed
// decoder must not read the legacy "&amp" without its ';' (helper-7's
// case, found by a search over random bodies).
func TestAPathEscapedHTMLEscapedKey(t *testing.T) {
	key := "Zm9vYmFy+/0123456789abcdefghij=="
	schemes := []int{3, 5, 0, 0, 6, 6, 1, 1, 0, 0, 0, 0, 0, 0, 5, 4, 0, 1, 5, 0, 0, 0, 2, 2, 0, 2, 5, 0, 4, 0, 0, 6}
	written := escapedChars(key, func(i int) int { return schemes[i] }, func(i int) bool { return i%2 == 0 })
	var k Keyring
	k.Remember(key)
	const busy = `"msg":"upstream said \"bad\"","path":"C:\\Users\\svc","ct":"application/json; charset=utf-8","q":"a=1&b=2&amp;c=%20x",`
	// Short, every chain of three decoders is tried; at 20 KiB, fewer
	// (maxViewBytes), and three mixed passes must do.
	for _, repeat := range []int{1, 150} {
		text := `{` + strings.Repeat(busy, repeat) + `"redirect":"https://auth.example.com/cb?e=` +
			url.PathEscape(html.EscapeString(strings.Join(written, ""))) + `"}`
		got := k.Redact(text)
		seen := html.UnescapeString(unPercent(got))
		if piece := survivingPiece(seen, key, written); piece != "" {
			t.Errorf("%d bytes: %q survives", len(text), piece)
		}
	}
}

// TestDecodingCostsWhatItMayCost: a long text busy with escapes makes no
// more decoded bytes than maxViewBytes, and base64 of bytes that are no
// text (a hash, a compressed blob) decodes to almost nothing.
func TestDecodingCostsWhatItMayCost(t *testing.T) {
	busy := strings.Repeat(`"re":"^\\d+\\.\\d+$","dbl":"%2520 &amp;amp; \\\\n","b":"XHUwMDQxJmFtcDslNDEtXHg0MiYjNjc7JTQ0",`, 400)
	random := make([]byte, 8<<10)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(random)
	blob := base64.StdEncoding.EncodeToString(random)
	for _, c := range []struct {
		name string
		text string
		most int
	}{
		{"busy", busy, maxViewBytes},
		{"busy, 300 KiB", strings.Repeat(busy, 9), viewsPerByte * 9 * len(busy)},
		// Next to nothing: none of it is text, at any alignment.
		{"base64 of random bytes", blob, 4 << 10},
	} {
		views := decodedViews(c.text)
		total := 0
		for _, v := range views[1:] {
			total += len(v.b)
		}
		if total > c.most {
			t.Errorf("%s (%d bytes): %d views of %d bytes in all, want at most %d", c.name, len(c.text), len(views)-1, total, c.most)
		}
	}
}

// TestABase64KeyInBase64InABusyBody: a .NET-escaped key, base64-encoded
// twice, beside a base64 field of escapes and escapes of escapes. The
// views of what the wrong alignments of base64 decode to used to take
// every slot before base64, base64 and JSON were undone in turn
// (helper-7's case, found by a search over random bodies).
//
// A body of 24 KiB, as busy all through, gets fewer views than every chain
// of three decoders makes (maxViewBytes): the base64 fields' decoded text
// still fits once the copies of the body have spent the budget.
func TestABase64KeyInBase64InABusyBody(t *testing.T) {
	key := "c8y8K/NIAbx+054T+ZMVpfun8sSFbrzuW94RcwO+"
	dotnet := strings.NewReplacer("+", `\u002B`, "/", `\u002F`, "=", `\u003D`)
	wire := base64.RawURLEncoding.EncodeToString([]byte(base64.RawURLEncoding.EncodeToString([]byte(dotnet.Replace(key)))))
	const busy = `"blob":"aGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0cmFjZSA3ZjNhOWMwMSAvIHNwYW4gMTllMmM0ICYlIFw=","re":"^\\d+\\.\\d+$","dbl":"%2520 &amp;amp; \\\\n",`
	for _, repeat := range []int{1, 200} {
		text := `{` + strings.Repeat(busy, repeat) + `"next":"` + wire + `"}`
		checkBase64KeyInBase64(t, key, text)
	}
}

func checkBase64KeyInBase64(t *testing.T, key, text string) {
	t.Helper()
	var k Keyring
	k.Remember(key)
	got := k.Redact(text)
	// What a person decoding each surviving part of the field would read.
	next := got[strings.Index(got, `"next":"`)+len(`"next":"`):]
	unbase64 := func(s string) string {
		s = s[:len(s)/4*4]
		b, _ := base64.RawURLEncoding.DecodeString(s)
		return string(b)
	}
	undotnet := strings.NewReplacer(`\u002B`, "+", `\u002F`, "/", `\u003D`, "=")
	for _, part := range strings.Split(strings.TrimSuffix(next, `"}`), Mark) {
		read := undotnet.Replace(unbase64(unbase64(part)))
		for i := 0; i+MinPiece <= len(key); i++ {
			if strings.Contains(read, key[i:i+MinPiece]) {
				t.Fatalf("%q can be read from %q in a text of %d bytes", key[i:i+MinPiece], part, len(text))
			}
		}
	}
}

// TestALongTextIsStillDecoded: a log value far longer than maxViewBytes
// (a whole response body, say) still has its escapes undone, and a base64
// field in a long body busy with escapes of escapes of escapes is still
// decoded, though the copies of the body spend the budget (helper-8's cases: a .NET-escaped
// key beyond 256 KiB, base64 of one beyond 55 KiB, went through whole).
func TestALongTextIsStillDecoded(t *testing.T) {
	key := "Ab3d+x9Yz/Q2w+ErT5/uI8+kL0=="
	dotnet := strings.NewReplacer("+", `\u002B`, "/", `\u002F`, "=", `\u003D`)
	undotnet := strings.NewReplacer(`\u002B`, "+", `\u002F`, "/", `\u003D`, "=")
	filler := func(n int, unit string) string { return strings.Repeat(unit, n/len(unit)+1)[:n] }
	var k Keyring
	k.Remember(key)
	leaks := func(read string) bool {
		for i := 0; i+MinPiece <= len(key); i++ {
			if strings.Contains(read, key[i:i+MinPiece]) {
				return true
			}
		}
		return false
	}
	for _, n := range []int{300 << 10, 1 << 20} {
		text := `{"log":"` + filler(n, "lorem ipsum ") + `","echo":"` + dotnet.Replace(key) + `"}`
		got := k.Redact(text)
		if echo := got[strings.LastIndex(got, `"echo":"`):]; leaks(undotnet.Replace(echo)) {
			t.Errorf("%d bytes: the key can be read from %s", len(text), echo)
		}
	}
	body := base64.StdEncoding.EncodeToString([]byte(`{"apiKey":"` + dotnet.Replace(key) + `"}`))
	for _, n := range []int{56 << 10, 128 << 10} {
		// As it is, and query-escaped ('+', '/' and '=' as %2B, %2F,
		// %3D): base64 a layer down, under the copies of the body.
		for _, field := range []string{body, url.QueryEscape(body)} {
			text := `{"log":"` + filler(n, `consectetur \\\\n 100%252525 &amp;amp;amp; tempor `) + `","body":"` + field + `"}`
			got := k.Redact(text)
			left := got[strings.LastIndex(got, `"body":"`)+len(`"body":"`):]
			for _, part := range strings.Split(strings.TrimSuffix(left, `"}`), Mark) {
				part = unPercent(part)
				for off := range min(4, len(part)) { // a Mark may have cut it anywhere
					decoded, _ := base64.RawStdEncoding.DecodeString(strings.TrimRight(part[off:], "=")[:(len(strings.TrimRight(part[off:], "="))/4)*4])
					if leaks(undotnet.Replace(string(decoded))) {
						t.Errorf("%d bytes: the key can be read from the base64 %q", len(text), part)
					}
				}
			}
		}
	}
}
