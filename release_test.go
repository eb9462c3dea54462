// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v2"
)

// goreleaserConfig is the part of .goreleaser.yaml that the promises of
// docs/install.md about the release archives rest on.
type goreleaserConfig struct {
	Snapshot struct {
		VersionTemplate string `yaml:"version_template"`
	}
	Builds []struct {
		ID           string
		Targets      []string
		Env          []string
		Flags        []string
		Ldflags      []string
		ModTimestamp string `yaml:"mod_timestamp"`
	}
	Archives []struct {
		IDs          []string `yaml:"ids"`
		NameTemplate string   `yaml:"name_template"`
		Files        []archiveFile
	}
	Checksum struct {
		NameTemplate string `yaml:"name_template"`
		Algorithm    string
	}
}

type archiveFile struct {
	Src  string
	Info struct{ MTime string }
}

// TestReleaseArchives holds docs/install.md's word on the archives `make release`
// builds: the seven platforms, static, stamped like `make build` (the same
// -X flags), reproducible (no path, build id or clock in the output), each
// with LICENSE, NOTICE and README.md, summed in sha256sums.txt. `make
// release-check` (in .ci/run) proves the linux/amd64 one by building it twice.
func TestReleaseArchives(t *testing.T) {
	b, err := os.ReadFile(".goreleaser.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c goreleaserConfig
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatal(err)
	}

	if c.Snapshot.VersionTemplate != `{{ mustReadFile "VERSION" }}` {
		t.Errorf("snapshot.version_template is %q: the archives and --version would not show the VERSION file's version", c.Snapshot.VersionTemplate)
	}

	makefile, err := os.ReadFile("Makefile")
	if err != nil {
		t.Fatal(err)
	}
	var stamped []string // the variables `make build` stamps
	for _, m := range regexp.MustCompile(`-X \$\(VERSION_PKG\)\.(\w+)=`).FindAllSubmatch(makefile, -1) {
		stamped = append(stamped, string(m[1]))
	}
	if len(stamped) < 5 {
		t.Fatalf("found %d -X flags in the Makefile's LDFLAGS, want Version, Revision, Branch, BuildUser, BuildDate", len(stamped))
	}

	builds := map[string][]string{} // id → targets
	for _, bd := range c.Builds {
		builds[bd.ID] = bd.Targets
		if !slices.Contains(bd.Env, "CGO_ENABLED=0") {
			t.Errorf("build %s: no CGO_ENABLED=0, so the binary may need the C library of the machine it runs on", bd.ID)
		}
		if !slices.Contains(bd.Flags, "-trimpath") {
			t.Errorf("build %s: no -trimpath, so the binary holds the build directory and differs between machines", bd.ID)
		}
		ld := strings.Fields(strings.Join(bd.Ldflags, " "))
		if !slices.Contains(ld, "-buildid=") {
			t.Errorf("build %s: ldflags lack -buildid= (no build id)", bd.ID)
		}
		for _, v := range stamped {
			if !slices.ContainsFunc(ld, func(f string) bool {
				return strings.HasPrefix(f, "github.com/prometheus/common/version."+v+"=")
			}) {
				t.Errorf("build %s: ldflags do not stamp version.%s as the Makefile does", bd.ID, v)
			}
		}
		date := regexp.MustCompile(`version\.BuildDate=(\{\{.*?\}\}|\S*)`).FindString(strings.Join(bd.Ldflags, " "))
		if !strings.Contains(date, ".CommitDate") || regexp.MustCompile(`\btime\b|\.(Date|Now|Timestamp)\b`).MatchString(date) {
			t.Errorf("build %s: the build date must come from the commit (.CommitDate), not the clock: %s", bd.ID, date)
		}
		if bd.ModTimestamp != "{{ .CommitTimestamp }}" {
			t.Errorf("build %s: mod_timestamp is %q, so the binary's time in the archive is the build's, not the commit's", bd.ID, bd.ModTimestamp)
		}
	}
	want := []string{"darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64", "linux_arm_7", "windows_amd64", "windows_arm64"}
	got := slices.Sorted(slices.Values(builds["release"]))
	if !slices.Equal(got, want) {
		t.Errorf("build release targets %q, want %q", got, want)
	}
	if !slices.Equal(builds["check"], []string{"linux_amd64"}) {
		t.Errorf("build check (make release-check) targets %q, want [linux_amd64]", builds["check"])
	}
	if len(c.Builds) != 2 {
		t.Errorf("%d builds; the test knows release and check, and that check is release's for linux_amd64", len(c.Builds))
	} else if !slices.Equal(c.Builds[0].Ldflags, c.Builds[1].Ldflags) || !slices.Equal(c.Builds[0].Flags, c.Builds[1].Flags) ||
		!slices.Equal(c.Builds[0].Env, c.Builds[1].Env) {
		t.Error("builds release and check differ in env, flags or ldflags: make release-check would not check what make release ships")
	}

	if len(c.Archives) != 1 {
		t.Fatalf("%d archive definitions, want 1", len(c.Archives))
	}
	a := c.Archives[0]
	if !slices.Equal(slices.Sorted(slices.Values(a.IDs)), []string{"check", "release"}) {
		t.Errorf("archives take builds %q, want check and release", a.IDs)
	}
	if a.NameTemplate != `{{ .ProjectName }}-{{ .Version }}.{{ .Os }}-{{ .Arch }}{{ with .Arm }}v{{ . }}{{ end }}` {
		t.Errorf("archive name_template %q is not the official exporters' <name>-<version>.<os>-<arch>", a.NameTemplate)
	}
	// The README's own files, and what it points a user at (make
	// release-check looks for one file of each in the built archive).
	for _, f := range []string{"LICENSE", "NOTICE", "README.md", "alerts/*", "dashboards/*.json", "docs/*.md", "examples/*.yml", "examples/**/*"} {
		i := slices.IndexFunc(a.Files, func(af archiveFile) bool { return af.Src == f })
		if i < 0 {
			t.Errorf("the archives do not include %s", f)
			continue
		}
		if a.Files[i].Info.MTime != "{{ .CommitDate }}" {
			t.Errorf("%s's time in the archives is %q, not the commit's: the archives would differ between builds", f, a.Files[i].Info.MTime)
		}
		if matches, err := filepath.Glob(strings.ReplaceAll(f, "**/", "*/")); err != nil || len(matches) == 0 {
			t.Errorf("%s matches no file (%v)", f, err)
		}
	}
	if c.Checksum.NameTemplate != "sha256sums.txt" || c.Checksum.Algorithm != "sha256" {
		t.Errorf("checksum %q with %q, want sha256sums.txt with sha256 (what the README's sha256sum -c reads)", c.Checksum.NameTemplate, c.Checksum.Algorithm)
	}

	license, err := os.ReadFile("LICENSE")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(strings.TrimSpace(string(license)), "Apache License\n                           Version 2.0, January 2004") {
		t.Error("LICENSE is not the Apache License 2.0 text")
	}
}

// TestVersionIsTheNewestRelease: VERSION names the newest release of
// CHANGELOG.md ("## X.Y.Z / YYYY-MM-DD"), and changes since it are in one
// unreleased section above it, as in Prometheus' changelogs.
func TestVersionIsTheNewestRelease(t *testing.T) {
	version, err := os.ReadFile("VERSION")
	if err != nil {
		t.Fatal(err)
	}
	changelog, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	headings := regexp.MustCompile(`(?m)^## (.+)$`).FindAllStringSubmatch(string(changelog), -1)
	var releases []string
	for i, h := range headings {
		switch {
		case h[1] == "main / unreleased" && i == 0:
		case h[1] == "main / unreleased":
			t.Errorf("CHANGELOG.md: %q is not the first section: what is not released goes above every release", h[0])
		case regexp.MustCompile(`^\d+\.\d+\.\d+ / \d{4}-\d{2}-\d{2}$`).MatchString(h[1]):
			releases = append(releases, strings.Fields(h[1])[0])
		default:
			t.Errorf("CHANGELOG.md: %q: want \"## X.Y.Z / YYYY-MM-DD\" or \"## main / unreleased\"", h[0])
		}
	}
	if len(releases) == 0 || releases[0] != strings.TrimSpace(string(version)) {
		t.Errorf("VERSION is %q, the newest release of CHANGELOG.md %q: cut a release in both", strings.TrimSpace(string(version)), releases)
	}
}
