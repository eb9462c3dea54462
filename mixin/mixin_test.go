package mixin_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/global-stability/global_stability_exporter/mixin"
)

// TestRenderedFilesAreCurrent: the dashboards and rules in the repository
// are exactly what the mixin renders with its default config, so an edit to
// either side alone fails CI. `make mixin` brings them back in line.
func TestRenderedFilesAreCurrent(t *testing.T) {
	files, err := mixin.Render("{}")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 4 {
		t.Fatalf("rendered %d files, want the dashboards, the rules and the PrometheusRule", len(files))
	}
	for path, want := range files {
		got, err := os.ReadFile(filepath.Join("..", path))
		if err != nil {
			t.Errorf("%s: %v (run make mixin)", path, err)
			continue
		}
		if string(got) != want {
			t.Errorf("%s differs from what mixin/ renders: run make mixin, and edit mixin/, not the rendered file", path)
		}
	}
}
