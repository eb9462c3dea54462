package main

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

// The project's size budgets: a reviewer reads size as risk. Lower the
// production lines as the code shrinks; never raise them.
const (
	maxProductionLines = 6000    // non-test Go outside bench/ and simulator/
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
	production := 0
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
		if !strings.HasSuffix(name, "_test.go") && !strings.HasPrefix(name, "bench/") && !strings.HasPrefix(name, "simulator/") {
			production += lines
		}
	}
	if production > maxProductionLines {
		t.Errorf("%d lines of production Go, over the budget of %d", production, maxProductionLines)
	}
	t.Logf("%d lines of production Go (budget %d)", production, maxProductionLines)
}

// processWords are words about how the project was made rather than what
// it is.
var processWords = regexp.MustCompile(`(?i)\bhelper-?[0-9]+\b|\bsub-?agents?\b|\bstop [0-9]+\b|\bsession [0-9]+\b|\bissues? #?[0-9]+\b`)
