// Package leakcheck finds pieces of an API key in text, for tests. It is
// the tests' own, independent account of "the key, whole or in part, in
// any form an upstream commonly writes it back": raw in any ASCII case,
// JSON-escaped (`\/` too), percent-encoded, Go-quoted, and base64 in both
// alphabets at any alignment. It shares no code with package redact, which
// it is there to check.
package leakcheck

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"sync"
)

// MinPiece is the shortest run of a key's bytes that counts as a leak.
const MinPiece = 8

// Forms lists the ways a key is written back.
func Forms(key string) []string {
	jsonEscaped := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(key)
	out := []string{
		key,
		jsonEscaped,
		strings.ReplaceAll(jsonEscaped, "/", `\/`),
		url.QueryEscape(key),
		url.PathEscape(key),
		strings.Trim(fmt.Sprintf("%q", key), `"`),
	}
	for _, prefix := range []string{"", "x", "xy", "Bearer "} {
		out = append(out, Base64KeyRun(base64.StdEncoding, prefix, key, ""), Base64KeyRun(base64.RawURLEncoding, prefix, key, "!"))
	}
	return out
}

// Base64KeyRun encodes prefix+key+suffix and returns the characters whose
// six bits all come from key's bytes: what the encoding says of the key
// alone, wherever it sits.
func Base64KeyRun(enc *base64.Encoding, prefix, key, suffix string) string {
	e := enc.EncodeToString([]byte(prefix + key + suffix))
	from, to := len(prefix), len(prefix)+len(key) // key's bytes
	var run []byte
	for j := range e {
		first, last := 6*j/8, (6*j+5)/8 // the bytes character j draws on
		if first >= from && last < to {
			run = append(run, e[j])
		}
	}
	return string(run)
}

var cache sync.Map // key → []string

// windows lists every run of MinPiece bytes of every form of key, in
// lower case.
func windows(key string) []string {
	if w, ok := cache.Load(key); ok {
		return w.([]string)
	}
	var out []string
	for _, form := range Forms(key) {
		for i := 0; i+MinPiece <= len(form); i++ {
			out = append(out, strings.ToLower(form[i:i+MinPiece]))
		}
	}
	cache.Store(key, out)
	return out
}

// Find returns a run of MinPiece bytes of some form of key that text holds,
// ignoring ASCII case, or "" when there is none.
func Find(text, key string) string {
	lower := strings.ToLower(text)
	for _, w := range windows(key) {
		if strings.Contains(lower, w) {
			return w
		}
	}
	return ""
}
