// SPDX-License-Identifier: Apache-2.0

package main

import (
	"go/version"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// dockerStage is one FROM … stage of a Dockerfile, its instructions with
// continuation lines joined.
type dockerStage struct {
	from         string   // the FROM line
	name         string   // after AS, if any
	instructions []string // the lines after FROM, comments left out
}

func readDockerfile(t *testing.T) []dockerStage {
	t.Helper()
	b, err := os.ReadFile("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	var stages []dockerStage
	var joined string
	for line := range strings.Lines(string(b)) {
		line = strings.TrimSpace(line)
		if joined == "" && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if rest, ok := strings.CutSuffix(line, `\`); ok {
			joined += rest + " "
			continue
		}
		joined += line
		instr := strings.Join(strings.Fields(joined), " ")
		joined = ""
		if strings.EqualFold(strings.Fields(instr)[0], "FROM") {
			s := dockerStage{from: instr}
			if f := strings.Fields(instr); len(f) >= 2 && strings.EqualFold(f[len(f)-2], "AS") {
				s.name = f[len(f)-1]
			}
			stages = append(stages, s)
			continue
		}
		if len(stages) == 0 {
			continue // ARG before the first FROM
		}
		stages[len(stages)-1].instructions = append(stages[len(stages)-1].instructions, instr)
	}
	if len(stages) < 2 {
		t.Fatalf("Dockerfile has %d stages, want a build stage and a final one", len(stages))
	}
	return stages
}

// TestDockerfileBuildsForSeveralPlatforms holds what docs/install.md promises of
// `docker buildx build --platform linux/amd64,linux/arm64,linux/arm/v7`:
// the Go stage runs natively and cross-compiles a static binary for each
// target, and the image runs as distroless nonroot. The test reads the
// Dockerfile, so it needs no Docker engine.
func TestDockerfileBuildsForSeveralPlatforms(t *testing.T) {
	stages := readDockerfile(t)
	i := slices.IndexFunc(stages, func(s dockerStage) bool { return s.name == "build" })
	if i < 0 {
		t.Fatal(`Dockerfile has no stage "AS build"`)
	}
	build := stages[i]

	if !regexp.MustCompile(`--platform=(\$BUILDPLATFORM|\$\{BUILDPLATFORM\})\s`).MatchString(build.from) {
		t.Errorf("the build stage is %q; without --platform=$BUILDPLATFORM buildx runs the Go compiler for every target platform under QEMU emulation (slow, and it crashes on some) instead of cross-compiling natively", build.from)
	}

	run := slices.IndexFunc(build.instructions, func(s string) bool {
		return strings.HasPrefix(s, "RUN ") && strings.Contains(s, "go build")
	})
	if run < 0 {
		t.Fatal("the build stage has no RUN … go build")
	}
	goBuild := build.instructions[run]
	declared := map[string]int{} // ARG name → its instruction's index
	for j, instr := range build.instructions {
		if f := strings.Fields(instr); f[0] == "ARG" {
			for _, a := range f[1:] {
				declared[strings.SplitN(a, "=", 2)[0]] = j
			}
		}
	}
	for _, c := range []struct{ env, arg string }{
		{"GOOS", "TARGETOS"},
		{"GOARCH", "TARGETARCH"},
		{"GOARM", "TARGETVARIANT"},
	} {
		if j, ok := declared[c.arg]; !ok || j > run {
			t.Errorf("the build stage does not declare ARG %s before its go build: BuildKit sets it only for stages that declare it, so every platform would get the builder's %s", c.arg, c.env)
		}
		if !regexp.MustCompile(`(^|\s)` + c.env + `=\$\{?` + c.arg + `\b`).MatchString(goBuild) {
			t.Errorf("the go build does not set %s from $%s, so the image for another platform holds a binary for the builder's: %s", c.env, c.arg, goBuild)
		}
	}
	for _, want := range []string{"CGO_ENABLED=0", "-trimpath", "version.Version=", "version.Revision=", "version.Branch=", "version.BuildDate="} {
		if !strings.Contains(goBuild, want) {
			t.Errorf("the go build lacks %s (a static, path-free, stamped binary): %s", want, goBuild)
		}
	}

	final := stages[len(stages)-1]
	if !regexp.MustCompile(`^FROM gcr\.io/distroless/static[-\w]*:nonroot(@sha256:\w+)?$`).MatchString(final.from) {
		t.Errorf("the final stage is %q, want gcr.io/distroless/static…:nonroot", final.from)
	}
	if !slices.ContainsFunc(final.instructions, func(s string) bool {
		return s == "USER nonroot" || s == "USER nonroot:nonroot"
	}) {
		t.Error("the final stage does not say USER nonroot: Kubernetes' runAsNonRoot needs the image to name a non-root user")
	}

	// golang:1.26 is the newest 1.26.x, so it serves go 1.26.0; golang:1.26.0
	// would not serve go 1.26.1.
	m := regexp.MustCompile(`\sgolang:(\d+\.\d+(\.\d+)?)`).FindStringSubmatch(build.from)
	if m == nil {
		t.Fatalf("the build stage %q is not FROM golang:<version>", build.from)
	}
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	d := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(gomod)
	if d == nil {
		t.Fatal("go.mod has no go directive")
	}
	image, directive := "go"+m[1], "go"+string(d[1])
	if m[2] == "" {
		image, directive = version.Lang(image), version.Lang(directive)
	}
	if version.Compare(image, directive) < 0 {
		t.Errorf("the build stage uses golang:%s, older than go.mod's go %s: the image build would fail or download a toolchain", m[1], d[1])
	}
}
