// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The project's size ceilings. A ceiling moves only when an issue names a
// feature and the lines it may cost (docs/development.md, "Size"); code that
// shrinks lowers it.
const (
	maxProductionLines = 5857    // non-test Go outside bench/ and simulator/
	maxSimulatorLines  = 1200    // simulator/, counted on its own: it ships in the binary for --demo
	maxFileLines       = 400     // any Go file but a test
	maxTrackedBytes    = 1 << 20 // any tracked file: every clone pays for it
)

// TestTheRepositoryKeepsItsSize holds the budgets on the files git tracks:
// the production Go lines, the lines of every Go file, and the size of
// every file (a binary committed by mistake fails here, not in a clone);
// and keeps words about how the project was made out of them.
func TestTheRepositoryKeepsItsSize(t *testing.T) {
	out, err := exec.Command("git", "ls-files", "-z").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	production, simulator := 0, 0
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		b, err := os.ReadFile(name)
		if err != nil {
			continue // deleted in the work tree
		}
		if len(b) > maxTrackedBytes {
			t.Errorf("%s: %d bytes; keep tracked files under %d (build output belongs in .gitignore)", name, len(b), maxTrackedBytes)
		}
		// History, comments and docs say what was found and why, not who
		// found it or a tracker number a reader cannot open; the
		// changelog's entries are left as they were written.
		if name != "CHANGELOG.md" && !bytes.ContainsRune(b, 0) {
			for _, w := range processWords.FindAllString(string(b), 3) {
				t.Errorf("%s: %q speaks of how the project was made, not of the project", name, w)
			}
		}
		if !strings.HasSuffix(name, ".go") {
			continue
		}
		lines := bytes.Count(b, []byte("\n"))
		if lines > maxFileLines && !strings.HasSuffix(name, "_test.go") {
			t.Errorf("%s: %d lines; split it, at most %d", name, lines, maxFileLines)
		}
		switch {
		case strings.HasSuffix(name, "_test.go"), strings.HasPrefix(name, "bench/"):
		case strings.HasPrefix(name, "simulator/"):
			simulator += lines
		default:
			production += lines
		}
	}
	if production > maxProductionLines {
		t.Errorf("%d lines of production Go, over the ceiling of %d", production, maxProductionLines)
	}
	if simulator > maxSimulatorLines {
		t.Errorf("%d lines of the simulator, over the ceiling of %d", simulator, maxSimulatorLines)
	}
	t.Logf("%d lines of production Go (ceiling %d), %d of the simulator (ceiling %d)", production, maxProductionLines, simulator, maxSimulatorLines)
}

// processWords are words about how the project was made rather than what
// it is.
var processWords = regexp.MustCompile(`(?i)\bhelper-?[0-9]+\b|\bsub-?agents?\b|\bstop [0-9]+\b|\bsession [0-9]+\b|\bissues? #?[0-9]+\b`)

// TestTestSupportStaysOutOfTheBinaries: internal/testutil is for tests only,
// so neither binary may depend on it.
func TestTestSupportStaysOutOfTheBinaries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".", "./cmd/...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.Contains(pkg, "/internal/testutil") {
			t.Errorf("a binary depends on %s, which holds code only tests need", pkg)
		}
	}
}
