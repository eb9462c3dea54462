package client_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// TestFileKeyFollowsRotation: each way a key file can be rotated is picked
// up by the next call, the ones that keep its size included (a key of a
// fixed format rotated in place changes nothing but its content and
// modification time).
func TestFileKeyFollowsRotation(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "key")
	write := func(content string, mtime time.Time) {
		t.Helper()
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	want := func(key func() (string, error), expected string) {
		t.Helper()
		got, err := key()
		if err != nil || got != expected {
			t.Fatalf("key() = %q, %v; want %q", got, err, expected)
		}
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

	write("  key-aaaa-1111\n", t0)
	key := client.FileKey(path)
	want(key, "key-aaaa-1111")
	want(key, "key-aaaa-1111")

	// An unchanged file costs a stat, not a read: rewritten in place with
	// its size and modification time kept, it still gives the key read
	// before (no rotation tool does this; it shows the file is not re-read).
	write("  key-zzzz-9999\n", t0)
	want(key, "key-aaaa-1111")

	// Same size, new modification time: rotated in place.
	write("  key-bbbb-2222\n", t0.Add(time.Second))
	want(key, "key-bbbb-2222")

	// New size, same modification time (restored by a backup tool, say).
	write("key-cccc-33333", t0.Add(time.Second))
	want(key, "key-cccc-33333")

	// Same size and modification time, another file renamed over it, as
	// a Kubernetes Secret volume's symlink swap does.
	other := filepath.Join(dir, "next")
	if err := os.WriteFile(other, []byte("key-dddd-44444"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(other, t0.Add(time.Second), t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(other, path); err != nil {
		t.Fatal(err)
	}
	want(key, "key-dddd-44444")

	// Emptied, then gone: errors that name the path and never a key.
	write(" \n", t0.Add(2*time.Second))
	if _, err := key(); !errors.Is(err, client.ErrEmptyKey) {
		t.Errorf("empty key file: %v, want ErrEmptyKey", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, err := key(); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing key file: %v, want ErrNotExist", err)
	}
}
