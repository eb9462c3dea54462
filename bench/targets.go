// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Group 10: many API accounts in one process, on the release
// build without GOMEMLIMIT: the memory each target costs once probed, a
// probe's CPU against /metrics of a single account, and what a slow
// target adds to another's probe.

const benchTargets = 100

// targetsEnv is a simulator serving n accounts (keys key-0 … key-n-1, each
// 1,000 events an hour in pages of 1,000) and, if slow, a second one whose
// one account (key-slow) answers after latency; and an exporter reading a
// targets' file of them all.
type targetsEnv struct {
	sims     []*exec.Cmd
	exporter *exec.Cmd
	addr     string
}

func (e *targetsEnv) stop() {
	for _, c := range append([]*exec.Cmd{e.exporter}, e.sims...) {
		if c != nil && c.Process != nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
}

func startTargets(dir, simBin, exporterBin string, n int, slow time.Duration) (*targetsEnv, error) {
	e := &targetsEnv{}
	simAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	// Whole collections, as the single account of cpuRun gets them: no
	// validators, no Cache-Control.
	args := []string{"--listen-address=" + simAddr, "--events=1000", "--page-size=1000", "--no-validators", "--cache-control="}
	var b strings.Builder
	b.WriteString("targets:\n")
	for i := range n {
		key := fmt.Sprintf("key-%d-0123456789abcdef", i)
		args = append(args, "--key="+key)
		if err := os.WriteFile(filepath.Join(dir, key), []byte(key), 0o600); err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "  - {name: t%d, api_url: \"http://%s\", api_key_file: %s}\n", i, simAddr, key)
	}
	e.sims = append(e.sims, exec.Command(simBin, args...))
	if slow > 0 {
		slowAddr, err := freePort()
		if err != nil {
			return nil, err
		}
		e.sims = append(e.sims, exec.Command(simBin, "--listen-address="+slowAddr, "--key=key-slow-0123456789", "--latency="+slow.String()))
		if err := os.WriteFile(filepath.Join(dir, "key-slow"), []byte("key-slow-0123456789"), 0o600); err != nil {
			return nil, err
		}
		fmt.Fprintf(&b, "  - {name: slow, api_url: \"http://%s\", api_key_file: key-slow, timeout: 30s}\n", slowAddr)
	}
	file := filepath.Join(dir, "targets.yml")
	if err := os.WriteFile(file, []byte(b.String()), 0o600); err != nil {
		return nil, err
	}
	if e.addr, err = freePort(); err != nil {
		return nil, err
	}
	e.exporter = exec.Command(exporterBin, "--config.file="+file, "--web.listen-address="+e.addr, "--log.level=warn", "--web.max-requests=0")
	e.exporter.Env = withoutGOMEMLIMIT(os.Environ())
	for _, c := range append(slices.Clone(e.sims), e.exporter) {
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			e.stop()
			return nil, err
		}
	}
	if err := waitForListener(e.addr); err != nil {
		e.stop()
		return nil, err
	}
	return e, nil
}

// probe GETs /probe?target=name and wants the target's API whole.
func (e *targetsEnv) probe(name string) error {
	req, err := http.NewRequest(http.MethodGet, "http://"+e.addr+"/probe?target="+name, nil)
	if err != nil {
		return err
	}
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", "30")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err == nil && !strings.Contains(string(b), "\nglobal_stability_up 1\n") {
		err = fmt.Errorf("probe of %s: not whole (%d)", name, resp.StatusCode)
	}
	return err
}

// rss is VmRSS of pid, in bytes: what the process holds now.
func rss(pid int) (int64, error) { return statusKB(fmt.Sprintf("/proc/%d/status", pid), "VmRSS:") }

func targetsRows(dir, simBin, releaseBin string) ([]row, error) {
	var rows []row

	// Memory: every target probed once, then held.
	e, err := startTargets(dir, simBin, releaseBin, benchTargets, 0)
	if err != nil {
		return nil, err
	}
	time.Sleep(500 * time.Millisecond)
	idle, err := rss(e.exporter.Process.Pid)
	for i := 0; i < benchTargets && err == nil; i++ {
		err = e.probe(fmt.Sprintf("t%d", i))
	}
	// The runtime returns freed memory to the system in the background:
	// what is left a few seconds later is what the targets hold.
	time.Sleep(5 * time.Second)
	held, err2 := rss(e.exporter.Process.Pid)
	peak, err3 := peakRSS(e.exporter.Process.Pid)
	if err = errors.Join(err, err2, err3); err != nil {
		e.stop()
		return nil, err
	}
	perTarget := (held - idle) / benchTargets
	rows = append(rows, row{
		fmt.Sprintf("memory over idle per target, %d targets of 1,000 events each, every target probed once (release build, no GOMEMLIMIT)", benchTargets), "< 1 MiB",
		fmt.Sprintf("%.0f KiB (RSS idle %.1f MiB, held after the probes %.1f MiB, peak %.1f MiB)", float64(perTarget)/1024, mib(idle), mib(held), mib(peak)),
		perTarget < 1<<20,
	})

	// CPU: one target's probe, in that process of 100 targets, against a
	// single account's /metrics, interleaved run by run.
	single := exporter(releaseBin)
	var probes, metrics []time.Duration
	for range cpuRuns {
		p, err := cpuOfProbes(e, "t0")
		if err != nil {
			e.stop()
			return nil, err
		}
		probes = append(probes, p)
		m, err := cpuRun(simBin, single)
		if err != nil {
			e.stop()
			return nil, err
		}
		metrics = append(metrics, m)
	}
	e.stop()
	slices.Sort(probes)
	slices.Sort(metrics)
	ratio := float64(probes[cpuRuns/2]) / float64(metrics[cpuRuns/2])
	rows = append(rows, row{
		fmt.Sprintf("exporter CPU of one probe (%d targets in the process) against /metrics of a single account, 1,000 events", benchTargets), "≤ 1.2×",
		fmt.Sprintf("%.2f ms against %.2f ms: %.2f× (medians of %d runs of %d scrapes each, interleaved)", ms(probes[cpuRuns/2]), ms(metrics[cpuRuns/2]), ratio, cpuRuns, cpuScrapes),
		ratio <= 1.2,
	})

	// A slow target beside: the other target's probe, alone and while the
	// slow one's probes hang on its API.
	e, err = startTargets(dir, simBin, releaseBin, 1, 3*time.Second)
	if err != nil {
		return nil, err
	}
	defer e.stop()
	for range 20 {
		if err := e.probe("t0"); err != nil {
			return nil, err
		}
	}
	alone, err := probeLatencies(e, "t0", 200)
	if err != nil {
		return nil, err
	}
	var stopSlow atomic.Bool
	var slowProbes sync.WaitGroup
	for range 4 {
		slowProbes.Go(func() {
			for !stopSlow.Load() {
				_ = e.probe("slow")
			}
		})
	}
	time.Sleep(500 * time.Millisecond) // the slow probes are in flight
	beside, err := probeLatencies(e, "t0", 200)
	stopSlow.Store(true)
	slowProbes.Wait()
	if err != nil {
		return nil, err
	}
	added := beside[len(beside)/2] - alone[len(alone)/2]
	rows = append(rows, row{
		"what a target whose API takes 3 s adds to another target's probe (median of 200 probes each, 4 slow probes in flight)", "≤ 1 ms",
		fmt.Sprintf("%+.2f ms (median %.2f ms alone, %.2f ms beside; p99 %.2f ms and %.2f ms)", ms(added), ms(alone[len(alone)/2]), ms(beside[len(beside)/2]), ms(alone[len(alone)*99/100]), ms(beside[len(beside)*99/100])),
		added <= time.Millisecond,
	})
	return rows, nil
}

// cpuOfProbes is the exporter's CPU time per probe of target, after a
// warm-up.
func cpuOfProbes(e *targetsEnv, target string) (time.Duration, error) {
	for range 20 {
		if err := e.probe(target); err != nil {
			return 0, err
		}
	}
	cpu0, err := cpuTime(e.exporter.Process.Pid)
	for i := 0; i < cpuScrapes && err == nil; i++ {
		err = e.probe(target)
	}
	cpu1, err2 := cpuTime(e.exporter.Process.Pid)
	if err = errors.Join(err, err2); err != nil {
		return 0, err
	}
	return (cpu1 - cpu0) / cpuScrapes, nil
}

// probeLatencies probes target n times and returns the times, sorted.
func probeLatencies(e *targetsEnv, target string, n int) ([]time.Duration, error) {
	var out []time.Duration
	for range n {
		start := time.Now()
		if err := e.probe(target); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	slices.Sort(out)
	return out, nil
}
