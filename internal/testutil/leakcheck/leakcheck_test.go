// SPDX-License-Identifier: Apache-2.0

package leakcheck

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestFindsEveryFormAndItsPieces: every form of a key, in any case, and a
// run of MinPiece bytes of one amid other text, is found; base64 of the key
// after any prefix, in either alphabet, padded or not, too; ordinary text
// is not.
func TestFindsEveryFormAndItsPieces(t *testing.T) {
	for _, key := range []string{"9f8e7d6c5b4a3f2e", `gsk_Live/eyJ+"&<>\0123`, "clé-secrète-0123456789"} {
		for _, form := range Forms(key) {
			middle := form[len(form)/2-MinPiece/2 : len(form)/2+MinPiece/2]
			for _, text := range []string{form, strings.ToUpper(form), strings.ToLower(form), "x " + middle + " y"} {
				if Find(text, key) == "" {
					t.Errorf("key %q: nothing found in %q", key, text)
				}
			}
		}
		for _, prefix := range []string{"", "a", "ab", "abc", "Bearer "} {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
				if text := enc.EncodeToString([]byte(prefix + key)); Find(text, key) == "" {
					t.Errorf("key %q: nothing found in its base64 after %q, %q", key, prefix, text)
				}
			}
		}
		if piece := Find("HTTP 401: the API key is invalid; check --api.key-file", key); piece != "" {
			t.Errorf("key %q: found %q in ordinary text", key, piece)
		}
	}
}
