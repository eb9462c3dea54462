// SPDX-License-Identifier: Apache-2.0

package main

import (
	_ "embed"
	"regexp"
	"strings"
)

// versionFile is the release this source tree is, for builds not stamped
// with -ldflags (go run, go build); Makefile and Dockerfile stamp it too.
//
//go:embed VERSION
var versionFile string

// releaseVersion matches a module version go install records for a tagged
// release (v1.2.3, v1.2.3-rc.1); a pseudo-version or a dirty build holds a
// second '-' or a '+'.
var releaseVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$`)

// fallbackVersion is the version of a build not stamped with -ldflags, so
// that --version, the landing page and build_info never show an empty one.
func fallbackVersion(moduleVersion, file string) string {
	if releaseVersion.MatchString(moduleVersion) {
		return strings.TrimPrefix(moduleVersion, "v")
	}
	return strings.TrimSpace(file)
}
