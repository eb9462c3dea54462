// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// buildAt builds the exporter as it was at commit, from this repository's
// history (a temporary git worktree), so that a change is measured against
// what it replaced in one run, on one machine.
// releaseAt is buildAt with the release's build flags.
func releaseAt(commit, dir string) (string, error) {
	tree := filepath.Join(dir, "base-release-tree")
	if out, err := exec.Command("git", "worktree", "add", "--detach", tree, commit).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git worktree add %s: %w\n%s", commit, err, out)
	}
	defer func() { _ = exec.Command("git", "worktree", "remove", "--force", tree).Run() }()
	return buildRelease(tree, dir, "exporter-base-release")
}

func buildAt(commit, dir string) (string, error) {
	tree := filepath.Join(dir, "base-tree")
	if out, err := exec.Command("git", "worktree", "add", "--detach", tree, commit).CombinedOutput(); err != nil {
		return "", fmt.Errorf("git worktree add %s: %w\n%s", commit, err, out)
	}
	defer func() { _ = exec.Command("git", "worktree", "remove", "--force", tree).Run() }()
	bin := filepath.Join(dir, "exporter-base")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = tree
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build %s: %w\n%s", commit, err, out)
	}
	return bin, nil
}

// spread is an upstream of events spread over the globe (one per 5° cell,
// rows of the grid from the south pole up, then again), over 12 categories,
// in one page, with the simulator's healthy answers everywhere else: the
// scrape the CPU budgets are about.
func spread(events int) (http.Handler, error) {
	bodies, err := simulatorBodies()
	if err != nil {
		return nil, err
	}
	c := &capsFilled{docs: map[string][]byte{}}
	for e, body := range bodies {
		if e == endpoint.Conflict {
			if body, err = fillCaps(e, body, 12, events); err != nil {
				return nil, err
			}
		}
		c.docs[e.Label] = body
	}
	return c, nil
}

// compareRows measures this commit (bin) and the base (baseBin) side by
// side: CPU per scrape at 1,000 events spread over the globe, runs of the
// two interleaved so that the machine's drift weighs on both alike, and
// the memory rows.
func compareRows(bin, baseBin, base, simBin string) ([]row, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api, err := spread(1000)
	if err != nil {
		return nil, err
	}
	upstream, err := serveHandler(ctx, api)
	if err != nil {
		return nil, err
	}
	var now, then []time.Duration
	for range cpuRuns {
		for _, b := range []string{bin, baseBin} {
			per, err := cpuAgainst(upstream, b)
			if err != nil {
				return nil, err
			}
			if b == bin {
				now = append(now, per)
			} else {
				then = append(then, per)
			}
		}
	}
	median := func(d []time.Duration) time.Duration { s := slices.Clone(d); slices.Sort(s); return s[len(s)/2] }
	ratio := float64(median(now)) / float64(median(then))
	rows := []row{{
		fmt.Sprintf("exporter CPU per scrape at 1,000 events spread over the globe: this commit against %s", base),
		"≤ 1.5× " + base,
		fmt.Sprintf("%.2f ms against %.2f ms: %.2f× (medians of %s and %s; %d scrapes each)", ms(median(now)), ms(median(then)), ratio, msList(now), msList(then), cpuScrapes),
		ratio <= 1.5,
	}}
	for _, m := range []struct {
		name string
		row  func(bin string) (row, error)
	}{
		{"100,000 events", func(b string) (row, error) { return eventsRow(simBin, b, 100000) }},
		{"near the limits", nearLimitRow},
		{"40 at once, caps full", func(b string) (row, error) { return capsFilledRow(b, false) }},
	} {
		mine, err := m.row(bin)
		if err != nil {
			return nil, err
		}
		theirs, err := m.row(baseBin)
		if err != nil {
			return nil, err
		}
		mine.result += fmt.Sprintf("; %s: %s", base, theirs.result)
		rows = append(rows, mine)
	}
	return rows, nil
}

func msList(d []time.Duration) string {
	var s []string
	for _, x := range d {
		s = append(s, fmt.Sprintf("%.2f", ms(x)))
	}
	return strings.Join(s, ", ")
}

// cpuAgainst is the exporter's CPU per scrape against upstream, after a
// warm-up, in a fresh process.
func cpuAgainst(upstream, bin string) (time.Duration, error) {
	addr, err := freePort()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(bin, "--api.url=http://"+upstream, "--web.listen-address="+addr, "--log.level=error")
	cmd.Env = append(os.Environ(), "GLOBAL_STABILITY_API_KEY="+benchKey, "GLOBAL_STABILITY_API_SUMMARY_REFRESH_INTERVAL=0s")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	e := &env{exporter: cmd, addr: addr}
	defer e.stop()
	if err := waitForListener(addr); err != nil {
		return 0, err
	}
	for range 20 {
		if _, err := e.scrape(); err != nil {
			return 0, err
		}
	}
	cpu0, err := cpuTime(cmd.Process.Pid)
	for i := 0; i < cpuScrapes && err == nil; i++ {
		_, err = e.scrape()
	}
	cpu1, err2 := cpuTime(cmd.Process.Pid)
	if err = errors.Join(err, err2); err != nil {
		return 0, err
	}
	return (cpu1 - cpu0) / cpuScrapes, nil
}
