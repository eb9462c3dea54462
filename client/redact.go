package client

import (
	"errors"
	"strconv"
	"strings"
	"sync"
)

// redactedMark stands in for the API key, or a piece of it, in any text
// that came from the wire.
const redactedMark = "<redacted>"

// minKeyPiece is the shortest piece of the key that redaction removes when
// an excerpt's start or end cuts the key: shorter pieces would match
// ordinary text too often, and say too little about the key to matter.
const minKeyPiece = 8

// redactKey returns s without key: every whole occurrence (raw, and as Go's
// %q escapes it, which transport errors use to quote a bad header line),
// a prefix of the key of minKeyPiece bytes or more that ends s, and a
// suffix of that length that starts s. The last two are what an excerpt
// cut inside the key leaves of it.
func redactKey(s, key string) string {
	if key == "" || s == "" {
		return s
	}
	s = strings.ReplaceAll(s, key, redactedMark)
	if q := strconv.Quote(key); q[1:len(q)-1] != key {
		s = strings.ReplaceAll(s, q[1:len(q)-1], redactedMark)
	}
	for n := min(len(key)-1, len(s)); n >= minKeyPiece; n-- {
		if strings.HasSuffix(s, key[:n]) {
			s = s[:len(s)-n] + redactedMark
			break
		}
	}
	for n := min(len(key)-1, len(s)); n >= minKeyPiece; n-- {
		if strings.HasPrefix(s, key[len(key)-n:]) {
			s = redactedMark + s[n:]
			break
		}
	}
	return s
}

// keyring remembers the last few distinct keys sent, newest first, so that
// text from the wire is redacted of a rotated key too: an idle connection
// or a slow upstream may echo a key that the file no longer holds.
type keyring struct {
	mu   sync.Mutex
	keys []string
}

const keyringSize = 4

func (k *keyring) remember(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.keys) > 0 && k.keys[0] == key {
		return
	}
	for i, old := range k.keys {
		if old == key {
			k.keys = append(k.keys[:i], k.keys[i+1:]...)
			break
		}
	}
	k.keys = append([]string{key}, k.keys...)
	if len(k.keys) > keyringSize {
		k.keys = k.keys[:keyringSize]
	}
}

func (k *keyring) redact(s string) string {
	k.mu.Lock()
	keys := k.keys
	k.mu.Unlock()
	for _, key := range keys {
		s = redactKey(s, key)
	}
	return s
}

// Redact removes from s every API key this client has sent (the last few,
// if the key rotated), whole or cut at s's start or end. Use it on any text
// that may carry upstream bytes and does not come from this package's
// errors, which are redacted already: the standard library's log output,
// say.
func (c *Client) Redact(s string) string { return c.keys.redact(s) }

// redactedError stands in for an error whose text carried the key: it has
// the text without the key and answers errors.Is as the original did, but
// does not unwrap to it, so no caller can reach the original text.
type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

// redactError returns err unchanged when its text holds no key, else a
// redactedError.
func (c *Client) redactError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := c.keys.redact(msg); clean != msg {
		return &redactedError{msg: clean, orig: err}
	}
	return err
}
