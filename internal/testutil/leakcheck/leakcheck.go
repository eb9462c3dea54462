// SPDX-License-Identifier: Apache-2.0

// Package leakcheck finds pieces of an API key in text, for tests: an
// account of the forms an upstream writes a key back in, sharing no code
// with package redact, which it is there to check.
package leakcheck

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
)

// MinPiece is the shortest run of a key's bytes that counts as a leak.
const MinPiece = 8

// Forms lists the ways a key is written back.
func Forms(key string) []string {
	jsonEscaped := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(key)
	out := []string{key, jsonEscaped, strings.ReplaceAll(jsonEscaped, "/", `\/`),
		url.QueryEscape(key), url.PathEscape(key), strings.Trim(fmt.Sprintf("%q", key), `"`)}
	// Base64 after a prefix of each length mod 3, in both alphabets: the
	// characters whose six bits all come from the key.
	for _, prefix := range []string{"", "x", "xy", "Bearer "} {
		for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawURLEncoding} {
			var run []byte
			for j, c := range []byte(enc.EncodeToString([]byte(prefix + key))) {
				if first, last := 6*j/8, (6*j+5)/8; first >= len(prefix) && last < len(prefix)+len(key) {
					run = append(run, c)
				}
			}
			out = append(out, string(run))
		}
	}
	return out
}

// Find returns a run of MinPiece bytes of some form of key that text holds,
// ignoring case, or "" when there is none.
func Find(text, key string) string {
	text = strings.ToLower(text)
	for _, form := range Forms(key) {
		form = strings.ToLower(form)
		for i := 0; i+MinPiece <= len(form); i++ {
			if strings.Contains(text, form[i:i+MinPiece]) {
				return form[i : i+MinPiece]
			}
		}
	}
	return ""
}
