// SPDX-License-Identifier: Apache-2.0

package targets

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"syscall"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// MaxKeyBytes is the most a key file may hold; KeyEnv is where the key may
// come from instead of --api.key-file, never a flag: flag values show up in
// ps and /proc.
const (
	MaxKeyBytes = 4 << 10
	KeyEnv      = "GLOBAL_STABILITY_API_KEY"
)

// readFile reads a regular file of at most limit bytes. Anything else is
// refused unread: a FIFO or a device would block for ever (opened without
// blocking, to be refused), a huge file cost its size in memory.
func readFile(path string, limit int64) ([]byte, error) {
	shown := "file " + redact.Readable(path)                       // a key pasted where its file's path belongs is not shown
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0) //nolint:gosec // G304: the operator's own files
	if err != nil {
		return nil, fmt.Errorf("%s: %w", shown, errors.Unwrap(err)) // not "open": a file not there
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file: want a file", shown)
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = fmt.Errorf("%s holds more than %d bytes: want at most that", shown, limit)
	}
	return b, err
}

// KeySource is the key's source, where it reads (for the log, never the
// key) and whether it reads now: the file at path, read on every request
// so that a rotated key is used without a restart, or without a path the
// KeyEnv variable; whitespace around it trimmed. A key too short to be
// redacted without garbling the log is refused (an empty one too), rather
// than a 401 that hints at the wrong thing.
func KeySource(path string) (key func() (string, error), from string, err error) {
	from = "environment variable " + KeyEnv
	if path != "" {
		from = "file " + redact.Readable(path)
	}
	key = func() (string, error) {
		b, err := []byte(os.Getenv(KeyEnv)), error(nil)
		if path != "" {
			b, err = readFile(path, MaxKeyBytes)
		}
		key := strings.TrimSpace(string(b))
		if err == nil && len(key) < redact.MinKeyLength {
			err = fmt.Errorf("%s holds a key of %d characters: want at least %d (a key that short could not be told from ordinary text)", from, len(key), redact.MinKeyLength)
		}
		return key, err
	}
	_, err = key()
	return key, from, err
}
