// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"crypto/sha256"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/internal/testutil/leakcheck"
)

// Keys of the lengths and alphabets seen in the wild: a short hex token, a
// JWT-like one with dots, dashes and underscores, one of lower-case words
// (which reads as plain text), and a long one with every character that
// some encoding changes ('#' cuts a URL, '/' is escaped by JSON encoders,
// '+' and '=' by percent-encoding, '"' and '\' by quoting).
var keys = []string{
	"9f8e7d6c5b4a3f2e",
	"gsk_Live.eyJhbGciOiJIUzI1NiJ9-Zm9v_YmFy",
	"correct-horse-battery-staple",
	strings.Repeat(`Ab1/+=#&"\<>%~ zZ9`, 9),
}

// holding is a Redactor holding keys, each in a ring of its own.
func holding(keys ...string) *Redactor {
	r := New()
	for _, k := range keys {
		r.NewRing().Remember(k)
	}
	return r
}

// plainForms are how our own code may print a key: as it is, in either
// case, Go-quoted (%q, %+q) and JSON-escaped.
func plainForms(key string) []string {
	j, _ := json.Marshal(key)
	return []string{key, strings.ToLower(key), strings.ToUpper(key), strconv.Quote(key), strconv.QuoteToASCII(key), string(j)}
}

// writtenForms are the forms leakcheck knows, and the key in upper and
// lower case.
func writtenForms(key string) []string {
	return append(leakcheck.Forms(key), strings.ToLower(key), strings.ToUpper(key), strings.ToLower(url.QueryEscape(key)))
}

// encoded are the ways a server may write a key that none of its forms
// holds, each escape introducer at least once, and escapes of escapes.
var encoded = map[string]func(string) string{
	"JSON \\u":     func(s string) string { return eachChar(s, `\u%04X`) },
	"JS \\u{X}":    func(s string) string { return eachChar(s, `\u{%x}`) },
	"\\xHH":        func(s string) string { return eachByte(s, `\x%02x`) },
	"HTML decimal": func(s string) string { return eachChar(s, "&#%d;") },
	"HTML hex":     func(s string) string { return eachChar(s, "&#x%X") },
	"HTML named": func(s string) string {
		return strings.NewReplacer("a", "&ascr;", "e", "&escr;", "i", "&iscr;", "o", "&oscr;", "9", "&#57;").Replace(s)
	},
	"percent":       func(s string) string { return eachByte(s, "%%%02X") },
	"percent twice": func(s string) string { return eachByte(s, "%%25%02x") },
	"hex":           func(s string) string { return hex.EncodeToString([]byte(s)) },
	"base32":        func(s string) string { return base32.StdEncoding.EncodeToString([]byte(s)) },
	"base64 of JSON \\u": func(s string) string {
		return base64.StdEncoding.EncodeToString([]byte(eachChar(s, `\u%04x`)))
	},
	"base64 of base64": func(s string) string {
		return base64.RawURLEncoding.EncodeToString([]byte(base64.StdEncoding.EncodeToString([]byte(s))))
	},
}

func eachChar(s, format string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, format, r)
	}
	return b.String()
}

func eachByte(s, format string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, format, s[i])
	}
	return b.String()
}

// pieces calls f with every piece of form from MinPiece bytes to whole, in
// texts that put it at the start, the middle, the end, and twice.
func pieces(form string, f func(text string)) {
	// Every start in the short keys; in the long one, a stride that still
	// meets every character class of its pattern.
	stride := 1 + len(form)/40
	for start := 0; start+MinPiece <= len(form); start += stride {
		for _, end := range []int{start + MinPiece, start + MinPiece + 1, (start + len(form) + MinPiece) / 2, len(form)} {
			if end > len(form) || end-start < MinPiece {
				continue
			}
			piece := form[start:end]
			for _, text := range []string{piece, "HTTP 401: invalid key " + piece + ", check it", "starting with \"" + piece, piece + " and again " + piece} {
				f(text)
			}
		}
	}
}

// readings are text and what one layer of the escapes it might hold reads
// as, by the standard library's decoders: a reader who undoes them finds
// no more than leakcheck does in text.
func readings(text string) []string {
	out := []string{text, html.UnescapeString(text)}
	if s, err := url.PathUnescape(text); err == nil {
		out = append(out, s)
	}
	var s string
	if json.Unmarshal([]byte(`"`+text+`"`), &s) == nil {
		out = append(out, s)
	}
	for _, run := range base64Run.FindAllString(text, -1) {
		for off := range 4 {
			d, _ := base64.RawURLEncoding.DecodeString(strings.NewReplacer("+", "-", "/", "_").Replace(run[off:][:(len(run)-off)/4*4]))
			out = append(out, string(d))
		}
	}
	return out
}

// base64Run is a run of either alphabet long enough to hold MinPiece bytes.
var base64Run = regexp.MustCompile(`[A-Za-z0-9+/_-]{11,}`)

// leak is a piece of key that a reading of text holds, or "".
func leak(text, key string) string {
	for i, r := range readings(text) {
		if i > 0 && r == text {
			continue
		}
		if piece := leakcheck.Find(r, key); piece != "" {
			return piece
		}
	}
	return ""
}

// TestNoPieceOfAKeyAnywhere: every piece of every written form of a key,
// anywhere in a text, is gone from what Readable lets through (a Mark in
// its place, or the text withheld), and every piece of a form our code
// prints from what Redact lets through; a key written in any escape or
// encoding none of its forms holds is withheld whole.
func TestNoPieceOfAKeyAnywhere(t *testing.T) {
	for _, key := range keys {
		r := holding(key)
		for _, form := range writtenForms(key) {
			pieces(form, func(text string) {
				if got := r.Readable(text); leak(got, key) != "" {
					t.Fatalf("key %.12q…: Readable(%q) = %q still holds %q", key, text, got, leak(got, key))
				}
			})
		}
		for _, form := range plainForms(key) {
			pieces(form, func(text string) {
				if got := r.Redact(text); leakcheck.Find(got, key) != "" {
					t.Fatalf("key %.12q…: Redact(%q) = %q still holds %q", key, text, got, leakcheck.Find(got, key))
				}
			})
		}
		for name, encode := range encoded {
			for _, text := range []string{encode(key), `{"detail":"key ` + encode(key) + ` refused"}`} {
				if got := r.Readable(text); got != Withheld(len(text)) {
					t.Errorf("key %.12q…, %s: Readable = %q, want it withheld", key, name, got)
				}
			}
		}
	}
}

// TestOrdinaryTextIsKept walks the kinds of text that pass: redaction
// removes what holds a piece of a key and nothing else, and plain text is
// quoted as it is, so log lines stay readable.
func TestOrdinaryTextIsKept(t *testing.T) {
	r := holding(keys...)
	for _, text := range []string{
		"", "short", "HTTP 503 Service Unavailable: try again later",
		"9f8e7d6", // 7 bytes of a key: too short to say anything
		"x9f8e7d6x",
		`{"error":"unauthorized","message":"invalid API key"}`,
		"level=debug msg=\"API request\" endpoint=global-stability/pillar/supply_chain status=200 bytes=183344 duration=12.3ms",
		"Get \"https://api.example.com/v1/conflict\": dial tcp 10.0.0.1:443: connect: connection refused",
		"violence_against_civilians", "Riots & protests", "/etc/global-stability/a.key", "AT&T", "M&A talks",
	} {
		if got := r.Readable(text); got != text {
			t.Errorf("Readable(%q) = %q, want it unchanged", text, got)
		}
		if got := r.Redact(text); got != text {
			t.Errorf("Redact(%q) = %q, want it unchanged", text, got)
		}
	}
	text := "a " + keys[0] + " b " + keys[0][3:11] + " c " + keys[2] + keys[0]
	for name, redact := range map[string]func(string) string{"Redact": r.Redact, "Readable": r.Readable} {
		if got, want := redact(text), "a "+Mark+" b "+Mark+" c "+Mark; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := New().Readable("text " + keys[2]); got != "text "+keys[2] {
		t.Errorf("a Redactor holding no key changed %q", got)
	}
	var none *Redactor
	if none.Readable("text") != "text" || none.Redact("text") != "text" {
		t.Error("a nil Redactor must hold nothing")
	}
}

// TestRedactDecodesNothing: our own text is matched against the key's
// forms as they are written, never decoded: an escape of the key is left
// (from the API, Readable withholds it); its base64, a form, is found.
func TestRedactDecodesNothing(t *testing.T) {
	key := "Zq8LmN3pR5sT7vW9xY2aB4cD6eF"
	r := holding(key)
	for _, name := range []string{"percent", "JSON \\u", "HTML decimal", "\\xHH"} {
		if text := encoded[name](key); r.Redact(text) != text {
			t.Errorf("Redact changed %s of the key: %q", name, r.Redact(text))
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
		if text := "Bearer " + enc.EncodeToString([]byte("x"+key)); leakcheck.Find(r.Redact(text), key) != "" {
			t.Errorf("Redact left the key's base64 in %q", r.Redact(text))
		}
	}
}

// TestRotatedKeysStayCovered: every one of a ring's last MaxKeys distinct
// keys is redacted, the newest and the oldest alike; a key sent again does
// not crowd another out; the one before them is let go.
func TestRotatedKeysStayCovered(t *testing.T) {
	r := New()
	g := r.NewRing()
	key := func(i int) string { return fmt.Sprintf("%x", sha256.Sum256([]byte{byte(i)}))[:24] }
	for i := range MaxKeys + 1 {
		g.Remember(key(i))
		g.Remember(key(i / 2)) // an older key comes back now and then
	}
	for i := 1; i <= MaxKeys; i++ {
		if r.Redact(key(i)) != Mark || r.Readable(key(i)) != Mark {
			t.Errorf("key %d of %d is no longer redacted", i, MaxKeys+1)
		}
	}
	if got := r.Redact(key(0)); got != key(0) {
		t.Errorf("the key before the last %d is still held: %q", MaxKeys, got)
	}
	if len(g.keys) != MaxKeys || slices.Contains(g.keys, "") {
		t.Errorf("the ring keeps %d keys, want %d, none empty: %q", len(g.keys), MaxKeys, g.keys)
	}
	other := r.NewRing()
	for _, k := range []string{key(1), key(2), key(1)} {
		other.Remember(k)
	}
	if !slices.Equal(other.keys, []string{key(1), key(2)}) {
		t.Errorf("a key sent again: the ring keeps %q, want it first and once", other.keys)
	}
	other.Drop()
	g.Drop()
	if len(r.pieces) != 0 {
		t.Errorf("after the rings were dropped, %d pieces are still counted", len(r.pieces))
	}
}

// TestRingsRedactEveryRingsKeys: a text holding the keys of several
// targets, raw and in their forms, loses every one of them; a ring dropped
// (a target gone, its probes ended) is redacted no more, unless another
// ring holds the same key; a dropped ring remembers nothing.
func TestRingsRedactEveryRingsKeys(t *testing.T) {
	keysOf := []string{"Zq8LmN3pR5sT7vW9xY2aB4cD6eF", "k3J9xPq2Lm8Rt5Vw7Yz1Ab4Cd6E", "Hh7Gg6Ff5Ee4Dd3Cc2Bb1Aa0Zz9"}
	r := New()
	rings := make([]*Ring, len(keysOf))
	for i, key := range keysOf {
		rings[i] = r.NewRing()
		rings[i].Remember(key)
	}
	text := "a=" + keysOf[0] + " b=" + strings.ToLower(keysOf[1]) + " c=" + base64.StdEncoding.EncodeToString([]byte(keysOf[2]))
	for _, got := range []string{r.Redact(text), r.Readable(text)} {
		for _, key := range keysOf {
			if piece := leakcheck.Find(got, key); piece != "" {
				t.Errorf("%q of %s left in %s", piece, key, got)
			}
		}
	}
	twin := r.NewRing()
	twin.Remember(keysOf[2])
	for _, g := range append(rings, twin) {
		g.Drop()
	}
	rings[0].Remember(keysOf[0])
	if got := r.Redact("b=" + keysOf[1] + " a=" + keysOf[0]); got != "b="+keysOf[1]+" a="+keysOf[0] {
		t.Errorf("a dropped ring's key is still redacted: %s", got)
	}
	other := New().NewRing()
	other.Remember(keysOf[2])
	if r.Redact(keysOf[2]) != keysOf[2] || other.Redact(keysOf[2]) == keysOf[2] {
		t.Error("rings of two Redactors share their keys")
	}
	shared := r.NewRing()
	shared.Remember(keysOf[1])
	again := r.NewRing()
	again.Remember(keysOf[1])
	shared.Drop()
	if r.Redact(keysOf[1]) != Mark {
		t.Error("dropping one ring let go of a key another ring holds")
	}
}

// TestConcurrentRotationAndRedaction is for -race: keys rotate and rings
// come and go while other goroutines redact, as scrapes do while a key file
// changes and a reload replaces targets.
func TestConcurrentRotationAndRedaction(t *testing.T) {
	r := New()
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			ring := r.NewRing()
			defer ring.Drop()
			for i := range 200 {
				key := fmt.Sprintf("key-%d-%d-0123456789", g, i)
				ring.Remember(key)
				for name, redact := range map[string]func(string) string{"Redact": r.Redact, "Readable": r.Readable} {
					if got := redact("x " + key + " y"); got != "x "+Mark+" y" {
						t.Errorf("%s = %q", name, got)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}

// FuzzNothingReadableHoldsAKey: whatever the text, with a key held put
// into it in any of its forms or encodings or none, what Readable lets
// through holds no piece of the key in any reading, and reads plainly.
func FuzzNothingReadableHoldsAKey(f *testing.F) {
	f.Add("HTTP 401: ", uint8(0), uint8(3), " refused")
	f.Add(`{"detail":"`, uint8(9), uint8(1), `"}`)
	f.Add("Riots & protests", uint8(255), uint8(0), "")
	f.Add(`\u002B9%0C\u002F7B6A\u003D5`, uint8(2), uint8(14), "qS1zZUNyw6h")
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range encoded {
			yield(name)
		}
	})
	r := holding(keys...)
	f.Fuzz(func(t *testing.T, prefix string, which, form uint8, suffix string) {
		key := keys[int(which)%len(keys)]
		var middle string
		switch forms := writtenForms(key); {
		case int(form) < len(forms):
			middle = forms[form]
		case int(form) < len(forms)+len(names):
			middle = encoded[names[int(form)-len(forms)]](key)
		}
		text := prefix + middle + suffix
		got := r.Readable(text)
		if piece := leak(got, key); piece != "" {
			t.Fatalf("%q can be read from %q (Readable of %q)", piece, got, text)
		}
		if got != Withheld(len(text)) && Readable(got) != got {
			t.Fatalf("Readable(%q) = %q, which does not read plainly", text, got)
		}
	})
}

// BenchmarkRedactLogLine is a log line's values redacted of the keys of
// eight targets: what every line costs.
func BenchmarkRedactLogLine(b *testing.B) {
	r := New()
	for i := range 8 {
		r.NewRing().Remember(fmt.Sprintf("gsk_live_%02d_9d8c7b6a5f4e3d2c1b0a", i))
	}
	values := []string{"debug", "endpoint.go:139", "API request", "conflict", "3", "200", "183344", "12.3ms"}
	b.ReportAllocs()
	for b.Loop() {
		for _, v := range values {
			_ = r.Redact(v)
		}
	}
}

// BenchmarkReadableWorstText is Readable on the worst texts it reads
// whole: MaxReadable bytes (an error's message; an excerpt is at most 256,
// a label value 128), eight targets' keys held, each text the worst of its
// kind: tokens just long enough to judge, a part in each; parts between
// many separators; every window a piece of a key; words that pass to the
// end; escape introducers that start none.
func BenchmarkReadableWorstText(b *testing.B) {
	r := New()
	for i := range 8 {
		r.NewRing().Remember(fmt.Sprintf("gsk_live_%02d_9d8c7b6a5f4e3d2c1b0a", i))
	}
	fill := func(unit string) string { return strings.Repeat(unit, MaxReadable/len(unit)+1)[:MaxReadable] }
	for name, text := range map[string]string{
		"tokens":     fill("abcdefgh_abcdefgh "),
		"parts":      fill("Ab-Cd_Ef+Gh/Ij=Kl-Mn_Op "),
		"key pieces": fill("gsk_live_01_9d8c7b6a5f4e3d2c1b0a"),
		"words":      fill("violence_against_civilians & riots "),
		"escapes":    fill("%4"),
	} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = r.Readable(text)
			}
		})
	}
}
