package client

import (
	"errors"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// redactedError stands in for an error whose text the door changed: it
// answers errors.Is as the original did but does not unwrap to it, so no
// caller reaches the original text.
type redactedError struct {
	msg  string
	orig error
}

func (e *redactedError) Error() string        { return e.msg }
func (e *redactedError) Is(target error) bool { return errors.Is(e.orig, target) }

// redactError passes err's text through the door: a transport's or a
// decoder's error quotes upstream bytes.
func (c *Client) redactError(err error) error {
	if err == nil || c.keys.Upstream(err.Error()) == err.Error() {
		return err
	}
	return &redactedError{msg: c.keys.Upstream(err.Error()), orig: err}
}

// Redactor holds the client's keys with every other of the process: label
// values are judged by it.
func (c *Client) Redactor() *redact.Redactor { return c.keys.Redactor }
