package client

import (
	"errors"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// redactedError stands in for an error whose text the door changed: it has
// the text without the key (or withheld) and answers errors.Is as the
// original did, but does not unwrap to it, so no caller reaches the
// original text.
type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

// redactError returns err as it is if its text passes the door unchanged,
// else a redactedError: a transport's or a decoder's error quotes upstream
// bytes.
func (c *Client) redactError(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if clean := c.keys.Redactor().Upstream(msg); clean != msg {
		return &redactedError{msg: clean, orig: err}
	}
	return err
}

// Redactor is the Redactor holding the client's keys, with every other key
// of the process: label values are judged by it.
func (c *Client) Redactor() *redact.Redactor { return c.keys.Redactor() }
