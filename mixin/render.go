// Package mixin is the monitoring mixin: the jsonnet in this directory,
// rendered into the dashboards and rules by `make mixin`, and by Render
// in-process for tests, with other configs too.
package mixin

import (
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/google/go-jsonnet"
)

// Render evaluates render.jsonnet as `make mixin` does, with config (an
// object overriding config.libsonnet's fields, "{}" for none), and returns
// each file by its path from the repository's root. It reads the source tree.
func Render(config string) (map[string]string, error) {
	_, here, _, _ := runtime.Caller(0)
	vm := jsonnet.MakeVM()
	vm.StringOutput = true
	vm.TLACode("config", config)
	files, err := vm.EvaluateFileMulti(filepath.Join(filepath.Dir(here), "render.jsonnet"))
	if err != nil {
		return nil, fmt.Errorf("render the mixin: %w", err)
	}
	return files, nil
}
