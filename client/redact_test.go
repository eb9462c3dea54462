package client

import (
	"strings"
	"testing"
)

func TestRedactKey(t *testing.T) {
	const key = "0123456789abcdef" // 16 bytes
	tests := []struct{ name, in, want string }{
		{"whole", "a " + key + " b", "a <redacted> b"},
		{"twice", key + key, "<redacted><redacted>"},
		{"prefix of 8 cut at the end", "body: " + key[:8], "body: <redacted>"},
		{"prefix of 15 cut at the end", "body: " + key[:15], "body: <redacted>"},
		{"suffix of 8 cut at the start", key[8:] + " rest", "<redacted> rest"},
		{"a piece shorter than 8 stays", "body: " + key[:7], "body: " + key[:7]},
		{"a piece inside the text stays", "x" + key[:10] + "x", "x" + key[:10] + "x"},
		{"nothing", "plain text", "plain text"},
		{"empty", "", ""},
	}
	for _, tt := range tests {
		if got := redactKey(tt.in, key); got != tt.want {
			t.Errorf("%s: redactKey(%q) = %q, want %q", tt.name, tt.in, got, tt.want)
		}
	}
	// As Go's %q quotes it in a transport error.
	odd := `key"with\quote`
	if got := redactKey(`malformed "key\"with\\quote"`, odd); strings.Contains(got, "with") {
		t.Errorf("the %%q form of the key survived: %q", got)
	}
	if got := redactKey("text", ""); got != "text" {
		t.Errorf("no key: %q", got)
	}
}

func TestKeyringRedactsRecentKeys(t *testing.T) {
	var k keyring
	for _, key := range []string{"first-key-0001", "second-key-002", "first-key-0001", "third-key-0003"} {
		k.remember(key)
	}
	if got := k.redact("first-key-0001 second-key-002 third-key-0003"); got != "<redacted> <redacted> <redacted>" {
		t.Errorf("redact = %q, want every recent key gone", got)
	}
	for i := range 10 {
		k.remember(strings.Repeat("x", 10) + string(rune('a'+i)))
	}
	if len(k.keys) != keyringSize {
		t.Errorf("keyring holds %d keys, want at most %d", len(k.keys), keyringSize)
	}
}

// TestKeyringRemembersTheLastFourDistinctKeys: a key used again moves to
// the front without crowding out another; four distinct keys are kept.
func TestKeyringRemembersTheLastFourDistinctKeys(t *testing.T) {
	var k keyring
	keys := []string{"key-one-11111111", "key-two-22222222", "key-three-3333333", "key-four-44444444"}
	for _, key := range keys {
		k.remember(key)
	}
	k.remember(keys[1]) // rotated back
	text := strings.Join(keys, " ")
	if got := k.redact(text); strings.Contains(got, "key-") {
		t.Errorf("redact(%q) = %q: a remembered key is left", text, got)
	}
	k.remember("key-five-55555555")
	if got := k.redact(keys[0]); got != keys[0] {
		t.Errorf("the oldest of five keys is still remembered: %q", got)
	}
}
