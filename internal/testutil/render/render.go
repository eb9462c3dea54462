// SPDX-License-Identifier: Apache-2.0

// Package render renders the monitoring mixin (mixin/) in-process, as
// `make mixin` does, with any config, for the tests.
package render

import (
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/google/go-jsonnet"
)

// Mixin evaluates mixin/render.jsonnet as `make mixin` does, with config (an
// object overriding config.libsonnet's fields, "{}" for none), and returns
// each file by its path from the repository's root. It reads the source tree.
func Mixin(config string) (map[string]string, error) {
	_, here, _, _ := runtime.Caller(0)
	vm := jsonnet.MakeVM()
	vm.StringOutput = true
	vm.TLACode("config", config)
	files, err := vm.EvaluateFileMulti(filepath.Join(filepath.Dir(here), "..", "..", "..", "mixin", "render.jsonnet"))
	if err != nil {
		return nil, fmt.Errorf("render the mixin: %w", err)
	}
	return files, nil
}
