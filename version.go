package main

import (
	_ "embed"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/prometheus/common/version"
)

// versionFile is the release this source tree is, for builds that are not
// stamped with -ldflags (go run, go build): Makefile and Dockerfile stamp
// the same file's content.
//
//go:embed VERSION
var versionFile string

// releaseVersion matches a module version go install records for a tagged
// release (v1.2.3, v1.2.3-rc.1), not a pseudo-version or a dirty build.
var releaseVersion = regexp.MustCompile(`^v\d+\.\d+\.\d+(-[0-9A-Za-z.]+)?$`)

// pseudoVersion matches the tail Go gives untagged commits.
var pseudoVersion = regexp.MustCompile(`\d{14}-[0-9a-f]{12}$`)

// fillInVersion sets version.Version when the build did not, so --version,
// the landing page and build_info never show an empty version: the module
// version go install recorded for a release tag, else the VERSION file.
// The revision prometheus/common already takes from the build's VCS
// information.
func fillInVersion() {
	if version.Version != "" {
		return
	}
	var moduleVersion string
	if bi, ok := debug.ReadBuildInfo(); ok {
		moduleVersion = bi.Main.Version
	}
	version.Version = fallbackVersion(moduleVersion, versionFile)
}

func fallbackVersion(moduleVersion, file string) string {
	if releaseVersion.MatchString(moduleVersion) && !pseudoVersion.MatchString(moduleVersion) {
		return strings.TrimPrefix(moduleVersion, "v")
	}
	return strings.TrimSpace(file)
}
