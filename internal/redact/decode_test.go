package redact

import (
	"encoding/base64"
	"fmt"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// Encoders a text from the wire may have put a key through, each able to
// wrap another's output.
var encoders = map[string]func(string) string{
	// .NET's System.Text.Json writes +, /, =, <, >, &, ' and non-ASCII as
	// \uXXXX by default.
	"json-dotnet": func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if r > 0x7e || strings.ContainsRune(`+/=<>&'"\`, r) {
				if r > 0xffff {
					hi, lo := 0xD800+((r-0x10000)>>10), 0xDC00+((r-0x10000)&0x3ff)
					fmt.Fprintf(&b, `\u%04X\u%04X`, hi, lo)
					continue
				}
				fmt.Fprintf(&b, `\u%04X`, r)
				continue
			}
			b.WriteRune(r)
		}
		return b.String()
	},
	"json-every": func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		return b.String()
	},
	"js-hex": func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			fmt.Fprintf(&b, `\x%02x`, s[i])
		}
		return b.String()
	},
	"html-decimal": func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, "&#%d;", r)
		}
		return b.String()
	},
	// Without the ';', as browsers read them: each reference ends at the
	// next '&'; the last one gets its ';', or a digit after it would join it.
	"html-hex-no-semicolon": func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, "&#x%X", r)
		}
		return b.String() + ";"
	},
	"html-named": func(s string) string {
		return strings.NewReplacer("&", "&amp;", "+", "&plus;", "/", "&sol;", "=", "&equals;", "<", "&lt;").Replace(s)
	},
	"percent-every": func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			fmt.Fprintf(&b, "%%%02x", s[i])
		}
		return b.String()
	},
	"percent-query": url.QueryEscape,
	"base64":        func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
	"base64url":     func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
}

// leakAfterDecoding returns a piece of key that text still carries, in the
// text as it is or in anything it decodes to (the same decoders, as deep),
// or "".
// A Mark is a barrier: its own characters beside the text's could spell
// what the text never held.
func leakAfterDecoding(text, key string) string {
	text = strings.ReplaceAll(text, Mark, "\x00")
	lower := strings.ToLower(key)
	for _, v := range decodedViews(text) {
		got := strings.ToLower(string(v.b))
		for i := 0; i+MinPiece <= len(lower); i++ {
			if strings.Contains(got, lower[i:i+MinPiece]) {
				return key[i : i+MinPiece]
			}
		}
	}
	return ""
}

// Keys with the characters encoders change: '+', '/', '=' (base64 keys),
// and one with non-ASCII letters.
var escapedKeys = []string{
	"gsk_live+9d8c/7b6a=5f4e3d2c1b0a",
	"AbCdEfGhIjKlMnOpQrStUvWxYz012345",
	"clé-secrète-ünïcödé-日本語-0123",
}

// withEscapedKeys is a key ring holding every one of escapedKeys.
func withEscapedKeys() *Keyring {
	k := &Keyring{}
	for _, key := range escapedKeys {
		k.Remember(key)
	}
	return k
}

// TestTheKeyThroughEveryEscape: the key alone or inside realistic bodies,
// through each encoder, and through each pair and triple of them, leaves
// no piece of itself behind, however the result is decoded.
func TestTheKeyThroughEveryEscape(t *testing.T) {
	names := make([]string, 0, len(encoders))
	for n := range encoders {
		names = append(names, n)
	}
	bodies := []func(string) string{
		func(k string) string { return k },
		func(k string) string {
			return `{"error":"unauthorized","message":"invalid API key ` + k + `","traceId":"00-4bf92f3577b34da6"}`
		},
		func(k string) string {
			return "<!DOCTYPE html><html><body><h1>401 Unauthorized</h1><p>Bearer " + k + " was refused.</p></body></html>"
		},
		func(k string) string { return "https://api.example.com/v1/summaries?api_key=" + k + "&v=1" },
		// Letters joined to the front of a base64 run shift its alignment.
		func(k string) string { return "x-trace:ab" + k },
		func(k string) string { return "x-trace:abc" + k },
	}
	for _, key := range escapedKeys {
		var k Keyring
		k.Remember(key)
		check := func(chain string, encoded string) {
			t.Helper()
			for _, body := range bodies {
				text := body(encoded)
				got := k.Redact(text)
				if piece := leakAfterDecoding(got, key); piece != "" {
					t.Fatalf("key %q through %s: Redact left %q (decoded) in %q", key, chain, piece, got)
				}
				if !k.Holds(text) {
					t.Fatalf("key %q through %s: Holds is false for %q", key, chain, text)
				}
			}
		}
		for _, a := range names {
			check(a, encoders[a](key))
			for _, b := range names {
				check(a+"+"+b, encoders[b](encoders[a](key)))
			}
		}
		// Three layers, the ones the issue saw and a few more.
		for _, chain := range [][]string{
			{"json-dotnet", "percent-every", "base64"},
			{"html-decimal", "json-every", "percent-query"},
			{"json-dotnet", "base64", "json-every"},
		} {
			s := key
			for _, e := range chain {
				s = encoders[e](s)
			}
			check(strings.Join(chain, "+"), s)
		}
	}
}

// TestHalfEscapedKey: a key written half raw and half escaped, in any
// mixture, is still caught.
func TestHalfEscapedKey(t *testing.T) {
	key := escapedKeys[0]
	var k Keyring
	k.Remember(key)
	for cut := 1; cut < len(key); cut++ {
		for _, e := range []string{"json-every", "html-decimal", "percent-every"} {
			text := "401: " + key[:cut] + encoders[e](key[cut:]) + " refused"
			if piece := leakAfterDecoding(k.Redact(text), key); piece != "" {
				t.Fatalf("%s from %d: %q left in %q", e, cut, piece, k.Redact(text))
			}
		}
	}
}

// TestOrdinaryEscapedTextIsKept: texts full of escapes but no key come out
// as they went in: a log line must stay readable.
func TestOrdinaryEscapedTextIsKept(t *testing.T) {
	k := withEscapedKeys()
	for _, text := range []string{
		`{"error":"unauthorized","message":"The API key is invalid \u2014 see https:\/\/docs.example.com\/auth","traceId":"00-4bf92f3577b34da6b3ce929d0e0e4736-00"}`,
		`<html><head><title>401 &#8212; Unauthorized</title></head><body><p>Access denied &amp; logged.&#x20;Contact&nbsp;support.</p></body></html>`,
		"https://api.example.com/v1/conflict?cursor=eyJwYWdlIjoyLCJzb3J0IjoiZGVzYyJ9&page_size=100",
		"level=debug msg=\"API request\" endpoint=global-stability/pillar/supply_chain status=200 bytes=183344 duration=12.3ms",
		"etag W/\"a1b2c3d4e5f60718293a4b5c6d7e8f90\" x-request-id=3fa85f64-5717-4562-b3fc-2c963f66afa6",
		"dXNlcjpwYXNzd29yZA== is base64 of user:password, not of a key",
	} {
		if got := k.Redact(text); got != text {
			t.Errorf("Redact changed a text without a key:\n in: %s\nout: %s", text, got)
		}
	}
}

// FuzzRedactDecodes: a random key through a random chain of up to three
// encoders, in random text, never leaves a piece of itself that the
// decoders can read.
func FuzzRedactDecodes(f *testing.F) {
	f.Add("gsk_live+9d8c/7b6a=5f4e", uint8(0), uint8(3), uint8(7), "prefix ", " suffix")
	f.Add("clé-secrète-0123456789", uint8(2), uint8(5), uint8(1), "", "")
	names := []string{"json-dotnet", "json-every", "js-hex", "html-decimal", "html-hex-no-semicolon", "html-named", "percent-every", "percent-query", "base64", "base64url"}
	f.Fuzz(func(t *testing.T, key string, a, b, c uint8, prefix, suffix string) {
		// A key is sent in a header: valid text, no control characters.
		if len(key) < MinPiece || len(key) > 128 || !utf8.ValidString(key) || strings.ContainsFunc(key, unicode.IsControl) || len(prefix)+len(suffix) > 256 {
			t.Skip()
		}
		s := key
		for _, e := range []uint8{a, b, c} {
			if int(e) < len(names) {
				s = encoders[names[e]](s)
			}
		}
		var k Keyring
		k.Remember(key)
		text := prefix + s + suffix
		if piece := leakAfterDecoding(k.Redact(text), key); piece != "" {
			t.Fatalf("key %q through %d,%d,%d: %q left in %q", key, a, b, c, piece, k.Redact(text))
		}
	})
}

func BenchmarkRedactEscapedBody(b *testing.B) {
	k := withEscapedKeys()
	body := `{"error":"unauthorized","message":"invalid API key \u0041\u0062 \u2014 see https:\/\/docs.example.com\/auth","traceId":"00-4bf92f3577b34da6b3ce929d0e0e4736-00"}`
	b.ReportAllocs()
	for b.Loop() {
		_ = k.Redact(body)
	}
}

// BenchmarkHoldsLongName is the worst name a label value can be: 128 bytes
// of base64's alphabet, which every decoder layer looks into.
func BenchmarkHoldsLongName(b *testing.B) {
	k := withEscapedKeys()
	name := strings.Repeat("Zm9vYmFyYmF6cXV4", 8)
	b.ReportAllocs()
	for b.Loop() {
		_ = k.Holds(name)
	}
}

// BenchmarkRedactBusyBody is an error body busy with escapes of escapes
// and base64, every decoder finding something at every layer: the most
// decoded views a text can have.
func BenchmarkRedactBusyBody(b *testing.B) {
	k := withEscapedKeys()
	body := `{"blob":"aGVsbG8gd29ybGQsIHRoaXMgaXMgYSB0cmFjZSA3ZjNhOWMwMSAvIHNwYW4gMTllMmM0ICYlIFw=","re":"^\\d+\\.\\d+$","dbl":"%2520 &amp;amp; \\\\n","path":"C:\\\\Users\\\\svc","q":"a=1&b=2&amp;c=%20x","next":"WXpoNU9FdGNkVEF3TWtaT1NVRmllRngxTURBeVFqQTFORlJjZFRBd01ESkM"}`
	b.ReportAllocs()
	for b.Loop() {
		_ = k.Redact(body)
	}
}

// BenchmarkRedactBase64Blob is 64 KiB of base64 of random bytes behind
// each kind of escape: what a log value holding a binary field costs.
// (No line of ours logs one; the redacting logger redacts whatever comes.)
func BenchmarkRedactBase64Blob(b *testing.B) {
	k := withEscapedKeys()
	random := make([]byte, 48<<10)
	_, _ = rand.NewChaCha8([32]byte{1}).Read(random)
	blob := `\u0041 &amp; %41 ` + base64.StdEncoding.EncodeToString(random)
	b.SetBytes(int64(len(blob)))
	b.ReportAllocs()
	for b.Loop() {
		_ = k.Redact(blob)
	}
}

// BenchmarkRedactHostileText is the worst text found for the decoded
// views (helper-8's search): runs of base64's alphabet that decode to text
// at every alignment, among escapes of escapes of the same character, at
// an excerpt's length (256 bytes, the most an upstream gets into a line)
// and at 1 KiB (where every chain of three decoders is still made).
func BenchmarkRedactHostileText(b *testing.B) {
	k := withEscapedKeys()
	units := []string{"VVVV", "VVVVVVVVVVVV", "%56", "%2556", "&#86;", "&amp;#86;", `\x56`, `\\x56`, `\u0056`, "%26%2386%3B", "&#37;56", `\u0025`, "&#92;x56", "%5Cu0056", "=", " ", "VkZWV", "Vlp"}
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{256, 1 << 10} {
		var t strings.Builder
		for t.Len() < n {
			t.WriteString(units[r.IntN(len(units))])
		}
		text := t.String()[:n]
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				_ = k.Redact(text)
			}
		})
	}
}
