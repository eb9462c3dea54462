// SPDX-License-Identifier: Apache-2.0

package redact

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/internal/testutil/leakcheck"
)

// Keys of the lengths and alphabets seen in the wild: a short hex token, a
// JWT-like one with dots, dashes and underscores, and a long one with every
// character that some encoding changes ('#' cuts a URL, '/' is escaped by
// JSON encoders, '+' and '=' by percent-encoding, '"' and '\' by quoting).
var keys = []string{
	"9f8e7d6c5b4a3f2e",
	"gsk_Live.eyJhbGciOiJIUzI1NiJ9-Zm9v_YmFy",
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

// TestNoPieceOfAKeyAnywhere: every piece of every written form of a key,
// anywhere in a text, is gone from what Upstream lets through (a Mark in
// its place, or the text withheld), and every piece of a plain form from
// what Plain lets through.
func TestNoPieceOfAKeyAnywhere(t *testing.T) {
	for _, key := range keys {
		r := holding(key)
		for _, form := range writtenForms(key) {
			pieces(form, func(text string) {
				if got := r.Upstream(text); leakcheck.Find(got, key) != "" || readsKey(got, key) != "" {
					t.Fatalf("key %.12q…: Upstream(%q) = %q still holds a piece", key, text, got)
				}
			})
		}
		for _, form := range plainForms(key) {
			pieces(form, func(text string) {
				if got := r.Plain(text); leakcheck.Find(got, key) != "" {
					t.Fatalf("key %.12q…: Plain(%q) = %q still holds %q", key, text, got, leakcheck.Find(got, key))
				}
			})
		}
	}
}

// TestOrdinaryTextIsKept: redaction removes what holds a piece of a key
// and nothing else, so log lines stay readable.
func TestOrdinaryTextIsKept(t *testing.T) {
	r := holding(keys[0])
	for _, text := range []string{
		"", "short", "HTTP 503 Service Unavailable: try again later",
		"9f8e7d6", // 7 bytes of the key: too short to say anything
		"x9f8e7d6x",
		`{"error":"unauthorized","message":"invalid API key"}`,
	} {
		if got := r.Upstream(text); got != text {
			t.Errorf("Upstream(%q) = %q, want it unchanged", text, got)
		}
		if got := r.Plain(text); got != text {
			t.Errorf("Plain(%q) = %q, want it unchanged", text, got)
		}
	}
	text := "a " + keys[0] + " b " + keys[0][3:11] + " c"
	for name, redact := range map[string]func(string) string{"Plain": r.Plain, "Upstream": r.Upstream} {
		if got, want := redact(text), "a "+Mark+" b "+Mark+" c"; got != want {
			t.Errorf("%s = %q, want %q", name, got, want)
		}
	}
	if got := New().Upstream("text " + keys[0]); got != "text "+keys[0] {
		t.Errorf("a Redactor holding no key changed %q", got)
	}
	var none *Redactor
	if none.Upstream("text") != "text" || none.Plain("text") != "text" {
		t.Error("a nil Redactor must hold nothing")
	}
}

// TestPlainDecodesNothing: our own text is matched against the key's
// forms as they are written, never decoded: an escape of the key is the
// door's to find, in upstream text; its base64, a form, is found.
func TestPlainDecodesNothing(t *testing.T) {
	key := "Zq8LmN3pR5sT7vW9xY2aB4cD6eF"
	r := holding(key)
	for _, name := range []string{"percent-every", "json-every", "html-decimal", "js-hex"} {
		if text := encoders[name](key); r.Plain(text) != text {
			t.Errorf("Plain changed %s of the key: %q", name, r.Plain(text))
		}
	}
	if text := "Bearer " + encoders["base64"](key); leakcheck.Find(r.Plain(text), key) != "" {
		t.Errorf("Plain left the key's base64 in %q", r.Plain(text))
	}
}

// TestAShortKeyNeverLeaks: a key shorter than MinPiece (refused at start-up,
// given anyway) is removed whole, in any case and in its written forms.
func TestAShortKeyNeverLeaks(t *testing.T) {
	for _, key := range []string{"s3cr3t", "Ab+/=", "k€y1"} {
		r := holding(key)
		for _, form := range append(writtenForms(key), fmt.Sprintf("%q", key)) {
			for _, text := range []string{"bearer " + form + "!", form} {
				if got := r.Upstream(text); strings.Contains(strings.ToLower(got), strings.ToLower(form)) {
					t.Errorf("key %q: Upstream(%q) = %q", key, text, got)
				}
			}
		}
		if got := r.Plain("bearer " + strings.ToUpper(key) + "!"); got != "bearer "+Mark+"!" {
			t.Errorf("key %q: Plain = %q", key, got)
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
		if r.Plain(key(i)) != Mark || r.Upstream(key(i)) != Mark {
			t.Errorf("key %d of %d is no longer redacted", i, MaxKeys+1)
		}
	}
	if got := r.Plain(key(0)); got != key(0) {
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
	if len(r.pieces) != 0 || len(r.short) != 0 || r.filter != [len(r.filter)]uint32{} {
		t.Errorf("after the ring was dropped, %d pieces and %d short forms are still counted", len(r.pieces), len(r.short))
	}
}

// TestRingsRedactEveryRingsKeys: a text holding the keys of several targets,
// raw and escaped, loses every one of them; a ring dropped (a target gone,
// its probes ended) is redacted no more, unless another ring holds the
// same key; a dropped ring remembers nothing.
func TestRingsRedactEveryRingsKeys(t *testing.T) {
	keysOf := []string{"Zq8LmN3pR5sT7vW9xY2aB4cD6eF", "k3J9xPq2Lm8Rt5Vw7Yz1Ab4Cd6E", "Hh7Gg6Ff5Ee4Dd3Cc2Bb1Aa0Zz9"}
	r := New()
	rings := make([]*Ring, len(keysOf))
	for i, key := range keysOf {
		rings[i] = r.NewRing()
		rings[i].Remember(key)
	}
	for _, text := range []string{
		"a=" + keysOf[0] + " b=" + encoders["json-every"](keysOf[1]) + " c=" + encoders["percent-every"](keysOf[2]),
		"a=" + keysOf[0] + " b=" + keysOf[1] + " c=" + encoders["base64"](keysOf[2]),
	} {
		got := r.Upstream(text)
		for _, key := range keysOf {
			if piece := readsKey(got, key); piece != "" {
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
	if got := r.Upstream("b=" + keysOf[1] + " a=" + keysOf[0]); got != "b="+keysOf[1]+" a="+keysOf[0] {
		t.Errorf("a dropped ring's key is still redacted: %s", got)
	}
	other := New().NewRing()
	other.Remember(keysOf[2])
	if r.Upstream(keysOf[2]) != keysOf[2] || other.Upstream(keysOf[2]) == keysOf[2] {
		t.Error("rings of two Redactors share their keys")
	}
	shared := r.NewRing()
	shared.Remember(keysOf[1])
	again := r.NewRing()
	again.Remember(keysOf[1])
	shared.Drop()
	if r.Plain(keysOf[1]) != Mark {
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
				if got := r.Upstream("x " + key + " y"); got != "x "+Mark+" y" {
					t.Errorf("Upstream = %q", got)
					return
				}
				if got := r.Plain("x " + key + " y"); got != "x "+Mark+" y" {
					t.Errorf("Plain = %q", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// BenchmarkPlainLogLine is a log line's values redacted of the keys of
// eight targets: what every line costs.
func BenchmarkPlainLogLine(b *testing.B) {
	r := New()
	for i := range 8 {
		r.NewRing().Remember(fmt.Sprintf("gsk_live_%02d_9d8c7b6a5f4e3d2c1b0a", i))
	}
	values := []string{"debug", "endpoint.go:139", "API request", "conflict", "3", "200", "183344", "12.3ms"}
	b.ReportAllocs()
	for b.Loop() {
		for _, v := range values {
			_ = r.Plain(v)
		}
	}
}
