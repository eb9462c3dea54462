package client

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
)

// StaticKey returns a key source for a fixed key (from an environment
// variable, say).
func StaticKey(key string) func() (string, error) {
	return func() (string, error) { return key, nil }
}

// FileKey returns a key source that reads the key from path, trimming
// surrounding whitespace. The file is read again whenever it is replaced
// (another inode: a Kubernetes Secret's symlink swap, a rename over it) or
// its size or modification time changes, so a rotated key is picked up
// without a restart; an unchanged file costs one stat per request. Errors
// name the path, never the content.
func FileKey(path string) func() (string, error) {
	var (
		mu   sync.Mutex
		key  string
		last os.FileInfo // of the file key was read from
	)
	return func() (string, error) {
		st, err := os.Stat(path)
		if err != nil {
			return "", fmt.Errorf("API key file: %w", err)
		}
		mu.Lock()
		defer mu.Unlock()
		if last != nil && os.SameFile(last, st) && st.Size() == last.Size() && st.ModTime().Equal(last.ModTime()) {
			return key, nil
		}
		b, err := os.ReadFile(path) //nolint:gosec // G304: reading the file the operator named is the point
		if err != nil {
			return "", fmt.Errorf("API key file: %w", err)
		}
		k := strings.TrimSpace(string(b))
		if k == "" {
			return "", fmt.Errorf("API key file %s: %w", path, ErrEmptyKey)
		}
		key, last = k, st
		return key, nil
	}
}

// ErrEmptyKey is returned for a key file that holds only whitespace.
var ErrEmptyKey = errors.New("is empty")
