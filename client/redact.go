package client

import (
	"errors"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// Redact removes from s every piece of an API key this client has sent
// (see package redact for the forms covered). Use it on any text that may
// carry upstream bytes and does not come from this package's errors, which
// are redacted already.
func (c *Client) Redact(s string) string { return c.keys.Redact(s) }

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
	if clean := c.keys.Redact(msg); clean != msg {
		return &redactedError{msg: clean, orig: err}
	}
	return err
}

// Keys is the key ring of every key the client has sent.
func (c *Client) Keys() *redact.Keyring { return c.keys }
