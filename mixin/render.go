// Package mixin is the monitoring mixin: the jsonnet in this directory,
// rendered into the repository's dashboards and rules by `make mixin`.
// Render gives the tests of this and other packages the same files
// in-process, so that they can render them with other configs too.
package mixin

import (
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/google/go-jsonnet"
)

// Render evaluates render.jsonnet with config (jsonnet code for an object
// whose fields override config.libsonnet's, "{}" for none) as `make mixin`
// does, and returns each file's content by its path from the repository's
// root. Only tests call it: the sources are read beside this file, in the
// source tree.
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
