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
	"sync"
	"time"
)

// Group 12: scrapes at once with the store warm (the API letting every
// answer be reused for ten minutes) and every label cap filled, on the
// release build without GOMEMLIMIT: the memory of probes of several
// targets at once, and whether each of many scrapes of one target answers
// within its own deadline.

const (
	concurrentProbes  = 100
	concurrentTargets = 3
	scrapeDeadline    = 2 // seconds, each scrape's X-Prometheus-Scrape-Timeout-Seconds
)

func concurrencyRows(dir, releaseBin string) ([]row, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api, err := newCapsFilled(0, http.Header{"Cache-Control": {"max-age=600"}})
	if err != nil {
		return nil, err
	}
	upstream, err := serveHandler(ctx, api)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString("targets:\n")
	keyFile := filepath.Join(dir, "concurrent.key")
	if err := os.WriteFile(keyFile, []byte(benchKey), 0o600); err != nil {
		return nil, err
	}
	for i := range concurrentTargets {
		fmt.Fprintf(&b, "  - {name: t%d, api_url: \"http://%s\", api_key_file: %s}\n", i, upstream, keyFile)
	}
	file := filepath.Join(dir, "concurrent.yml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		return nil, err
	}

	var rows []row
	probes, err := burstRow(releaseBin, []string{"--config.file=" + file}, concurrentProbes, func(i int) string {
		return fmt.Sprintf("/probe?target=t%d", i%concurrentTargets)
	}, upstream)
	if err != nil {
		return nil, err
	}
	probes.measure = fmt.Sprintf("peak RSS over idle: %d probes at once over %d targets (each target under its own --web.max-requests of 40), the store warm, every label cap filled, 3 bursts", concurrentProbes, concurrentTargets)
	rows = append(rows, probes)
	scrapes, err := burstRow(releaseBin, nil, concurrentScrapes, func(int) string { return "/metrics" }, upstream)
	if err != nil {
		return nil, err
	}
	scrapes.measure = fmt.Sprintf("%d scrapes at once of one target (/metrics), the store warm, every label cap filled, each with a %d s deadline, 3 bursts: each answers whole within its own deadline", concurrentScrapes, scrapeDeadline)
	rows = append(rows, scrapes)
	return rows, nil
}

// burstRow starts the exporter against upstream with args, fills its store
// with one GET of each path, and sends three bursts of n GETs at once of
// path(i), each with a deadline of scrapeDeadline; every one must answer
// 200 with the API whole within it. The row says the peak RSS over idle
// and the slowest answer against the deadline, and is met when both are.
func burstRow(bin string, args []string, n int, path func(int) string, upstream string) (row, error) {
	addr, err := freePort()
	if err != nil {
		return row{}, err
	}
	single := args == nil // one account, the flags'
	if single {
		args = []string{"--api.url=http://" + upstream}
	}
	cmd := exec.Command(bin, append([]string{"--web.listen-address=" + addr, "--log.level=error"}, args...)...)
	cmd.Env = append(withoutGOMEMLIMIT(os.Environ()), "GLOBAL_STABILITY_API_SUMMARY_REFRESH_INTERVAL=0s")
	if single {
		cmd.Env = append(cmd.Env, "GLOBAL_STABILITY_API_KEY="+benchKey)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return row{}, err
	}
	e := &env{exporter: cmd, addr: addr}
	defer e.stop()
	if err := waitForListener(addr); err != nil {
		return row{}, err
	}
	time.Sleep(200 * time.Millisecond)
	idle, err := peakRSS(cmd.Process.Pid)
	// A body is checked after its burst: unzipping and parsing 7,000 series
	// a hundred times at once would slow the answers timed.
	check := func(p string, b []byte, gzipped bool, err error) error {
		body := ""
		if err == nil {
			body, err = decode(b, gzipped)
		}
		if err == nil && !strings.Contains(body, "\nglobal_stability_up 1\n") {
			err = fmt.Errorf("%s: not whole, or not 200", p)
		}
		if err == nil {
			err = checkCapsFilled(body)
		}
		return err
	}
	seen := map[string]bool{}
	for i := 0; i < n && err == nil; i++ {
		if p := path(i); !seen[p] {
			b, gzipped, ferr := e.fetch(p, scrapeDeadline, "gzip")
			seen[p], err = true, check(p, b, gzipped, ferr)
		}
	}
	var walls []time.Duration
	var failed []error
	for b := 0; b < 3 && err == nil; b++ {
		bodies, gzipped, errs, took := make([][]byte, n), make([]bool, n), make([]error, n), make([]time.Duration, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() {
				start := time.Now()
				bodies[i], gzipped[i], errs[i] = e.fetch(path(i), scrapeDeadline, "gzip")
				took[i] = time.Since(start)
			})
		}
		wg.Wait()
		for i := range n {
			if err := check(path(i), bodies[i], gzipped[i], errs[i]); err != nil {
				failed = append(failed, err)
			}
		}
		walls = append(walls, took...)
	}
	peak, err2 := peakRSS(cmd.Process.Pid)
	if err = errors.Join(err, err2); err != nil {
		return row{}, err
	}
	slices.Sort(walls)
	grown, slowest := peak-idle, walls[len(walls)-1]
	result := fmt.Sprintf("%.1f MiB (idle %.1f MiB, peak %.1f MiB); answers in %s median, %s the slowest", mib(grown), mib(idle), mib(peak),
		walls[len(walls)/2].Round(time.Millisecond), slowest.Round(time.Millisecond))
	if len(failed) > 0 {
		result += fmt.Sprintf("; %d of %d not whole (%v)", len(failed), len(walls), failed[0])
	}
	return row{"", fmt.Sprintf("< 64 MiB over idle; each whole within %d s", scrapeDeadline), result,
		grown < 64<<20 && slowest < scrapeDeadline*time.Second && len(failed) == 0}, nil
}
