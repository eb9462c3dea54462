package redact

import (
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/global-stability/global_stability_exporter/internal/leakcheck"
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

// writtenForms are the forms leakcheck knows, and the key in upper and
// lower case.
func writtenForms(key string) []string {
	return append(leakcheck.Forms(key), strings.ToLower(key), strings.ToUpper(key), strings.ToLower(url.QueryEscape(key)))
}

func leak(text, key string) string { return leakcheck.Find(text, key) }

// TestNoPieceOfAKeyAnywhere puts every piece of every written form of the
// key, from MinPiece bytes to whole, anywhere in a text (start, middle,
// end, twice), and wants none of it back.
func TestNoPieceOfAKeyAnywhere(t *testing.T) {
	for _, key := range keys {
		var k Keyring
		k.Remember(key)
		for _, form := range writtenForms(key) {
			// Every start in the short keys; in the long one, a stride
			// that still meets every character class of its pattern.
			stride := 1 + len(form)/40
			for start := 0; start+MinPiece <= len(form); start += stride {
				for _, end := range []int{start + MinPiece, start + MinPiece + 1, (start + len(form) + MinPiece) / 2, len(form)} {
					if end > len(form) || end-start < MinPiece {
						continue
					}
					piece := form[start:end]
					for _, text := range []string{
						piece,
						"HTTP 401: invalid key " + piece + ", check it",
						"starting with \"" + piece,
						piece + " and again " + piece,
					} {
						if got := k.Redact(text); leak(got, key) != "" {
							t.Fatalf("key %.12q…: Redact(%q) = %q still holds %q", key, text, got, leak(got, key))
						}
					}
				}
			}
		}
	}
}

// TestOrdinaryTextIsKept: redaction removes what holds a piece of the key
// and nothing else, so log lines stay readable.
func TestOrdinaryTextIsKept(t *testing.T) {
	var k Keyring
	k.Remember(keys[0])
	for _, text := range []string{
		"", "short", "HTTP 503 Service Unavailable: try again later",
		"9f8e7d6", // 7 bytes of the key: too short to say anything
		"x9f8e7d6x",
		`{"error":"unauthorized","message":"invalid API key"}`,
	} {
		if got := k.Redact(text); got != text {
			t.Errorf("Redact(%q) = %q, want it unchanged", text, got)
		}
	}
	if got, want := k.Redact("a "+keys[0]+" b "+keys[0][3:11]+" c"), "a "+Mark+" b "+Mark+" c"; got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
	var none Keyring
	if got := none.Redact("text " + keys[0]); got != "text "+keys[0] {
		t.Errorf("an empty keyring changed %q", got)
	}
	var nilRing *Keyring
	if got := nilRing.Redact("text"); got != "text" || nilRing.Holds("text") || nilRing.Version() != 0 {
		t.Error("a nil keyring must hold nothing")
	}
}

func TestShortKeyIsRemovedWhole(t *testing.T) {
	var k Keyring
	k.Remember("s3cr3t")
	if got := k.Redact("bearer s3cr3t!"); got != "bearer "+Mark+"!" {
		t.Errorf("Redact = %q", got)
	}
}

// TestRotatedKeysStayCovered: every one of the last MaxKeys distinct keys
// is redacted, the newest and the oldest alike; a key sent again does not
// crowd another out; the one before them is dropped (the README says so).
func TestRotatedKeysStayCovered(t *testing.T) {
	var k Keyring
	key := func(i int) string { return fmt.Sprintf("rotated-key-%04d-abcdef", i) }
	for i := range MaxKeys + 1 {
		k.Remember(key(i))
		k.Remember(key(i / 2)) // an older key comes back now and then
	}
	for i := 1; i <= MaxKeys; i++ {
		if k.Redact(key(i)) != Mark {
			t.Errorf("key %d of %d is no longer redacted", i, MaxKeys+1)
		}
	}
	if v := k.Version(); v == 0 {
		t.Error("Version did not move")
	}
	k.Remember(key(MaxKeys))
	before := k.Version()
	k.Remember(key(MaxKeys)) // the newest again: nothing changes
	if k.Version() != before {
		t.Error("remembering the newest key again changed the version")
	}
}

// TestConcurrentRotationAndRedaction is for -race: keys rotate while other
// goroutines redact, as scrapes do while a key file changes.
func TestConcurrentRotationAndRedaction(t *testing.T) {
	var k Keyring
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 200 {
				key := fmt.Sprintf("key-%d-%d-0123456789", g, i)
				k.Remember(key)
				if got := k.Redact("x " + key + " y"); got != "x "+Mark+" y" {
					t.Errorf("Redact = %q", got)
					return
				}
			}
		})
	}
	wg.Wait()
}

func BenchmarkRedactLogLine(b *testing.B) {
	var k Keyring
	for _, key := range keys {
		k.Remember(key)
	}
	line := `level=debug caller=config.go:139 time=2026-11-23T10:00:00Z msg="API request" endpoint=conflict page=3 status=200 bytes=183344 duration=12.3ms`
	b.ReportAllocs()
	for b.Loop() {
		_ = k.Redact(line)
	}
}

// BenchmarkRingsRedact is an error body with escapes redacted of the keys
// of eight targets, as the logger redacts every value.
func BenchmarkRingsRedact(b *testing.B) {
	var r Rings
	for i := range 8 {
		k := &Keyring{}
		k.Remember(fmt.Sprintf("gsk_live_%02d_9d8c7b6a5f4e3d2c1b0a", i))
		r.Add(k)
	}
	body := `{"error":"unauthorized","message":"invalid API key \u0041\u0062 \u2014 see https:\/\/docs.example.com\/auth","traceId":"00-4bf92f3577b34da6b3ce929d0e0e4736-00"}`
	b.ReportAllocs()
	for b.Loop() {
		_ = r.Redact(body)
	}
}

// TestRingsRedactEveryRingsKeys: a text holding the keys of several
// targets, raw and escaped, loses every one of them; a ring removed (a
// target gone) is redacted no more.
func TestRingsRedactEveryRingsKeys(t *testing.T) {
	keysOf := []string{"Zq8LmN3pR5sT7vW9xY2aB4cD6eF", "k3J9xPq2Lm8Rt5Vw7Yz1Ab4Cd6E", "Hh7Gg6Ff5Ee4Dd3Cc2Bb1Aa0Zz9"}
	var r Rings
	rings := make([]*Keyring, len(keysOf))
	for i, key := range keysOf {
		rings[i] = &Keyring{}
		rings[i].Remember(key)
		r.Add(rings[i])
	}
	text := "a=" + keysOf[0] + " b=" + encoders["json-every"](keysOf[1]) + " c=" + encoders["percent-every"](keysOf[2])
	got := r.Redact(text)
	for _, key := range keysOf {
		if piece := leakAfterDecoding(got, key); piece != "" {
			t.Errorf("%q of %s left in %s", piece, key, got)
		}
	}
	r.Remove(rings[1])
	if got := r.Redact("b=" + keysOf[1]); got != "b="+keysOf[1] {
		t.Errorf("a removed ring's key still redacted: %s", got)
	}
}
