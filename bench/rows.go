// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// The rows of peak memory at growing volumes and near the limits, and of
// CPU per scrape against the simulator.

// eventsRow is the exporter's peak RSS over idle across 5 scrapes of the
// simulator with events in pages of 1,000.
func eventsRow(simBin, exporterBin string, events int) (row, error) {
	env, err := start(simBin, events, 1000, 0, exporter(exporterBin))
	if err != nil {
		return row{}, err
	}
	time.Sleep(200 * time.Millisecond)
	idle, err := peakRSS(env.exporter.Process.Pid)
	for i := 0; i < 5 && err == nil; i++ {
		var body string
		body, err = env.scrape()
		if err == nil && !strings.Contains(body, fmt.Sprintf("\nglobal_stability_conflict_events %d\n", events)) {
			err = fmt.Errorf("scrape at %d events did not count them all", events)
		}
	}
	peak, err2 := peakRSS(env.exporter.Process.Pid)
	env.stop()
	if err = errors.Join(err, err2); err != nil {
		return row{}, err
	}
	grown := peak - idle
	target, met := "—", true
	if events == 100000 {
		target, met = "< 20 MiB", grown < 20<<20
	}
	return row{fmt.Sprintf("peak RSS over idle, %d events (%d pages of 1,000), 5 scrapes", events, events/1000), target,
		fmt.Sprintf("%.1f MiB (idle %.1f MiB, peak %.1f MiB)", mib(grown), mib(idle), mib(peak)), met}, nil
}

// nearLimitRow runs the exporter with its default limits against
// nearLimit and reports its peak RSS over idle across three scrapes.
func nearLimitRow(exporterBin string) (row, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	api, err := newNearLimit()
	if err != nil {
		return row{}, err
	}
	upstream, err := serveHandler(ctx, api)
	if err != nil {
		return row{}, err
	}
	addr, err := freePort()
	if err != nil {
		return row{}, err
	}
	cmd := exec.Command(exporterBin, "--api.url=http://"+upstream, "--web.listen-address="+addr, "--log.level=error")
	cmd.Env = append(os.Environ(), "GLOBAL_STABILITY_API_KEY="+benchKey, "GLOBAL_STABILITY_API_SUMMARY_REFRESH_INTERVAL=0s")
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
	var walls []time.Duration
	for i := 0; i < 3 && err == nil; i++ {
		start := time.Now()
		var body string
		body, err = e.scrape()
		walls = append(walls, time.Since(start))
		if err == nil {
			err = checkFailures(body, nil) // every endpoint of the descriptions answered
		}
	}
	peak, err2 := peakRSS(cmd.Process.Pid)
	if err = errors.Join(err, err2); err != nil {
		return row{}, err
	}
	grown := peak - idle
	slices.Sort(walls)
	return row{
		fmt.Sprintf("peak RSS over idle, every endpoint answering a body just under its default limit (%d MiB documents, %d pages of %d MiB of each paged endpoint, lists of distinct items), 3 scrapes",
			client.DefaultMaxDocumentBytes>>20, nearLimitPages, client.DefaultMaxResponseBytes>>20), "< 64 MiB",
		fmt.Sprintf("%.1f MiB (idle %.1f MiB, peak %.1f MiB; median scrape %s for %.0f MiB of JSON)", mib(grown), mib(idle), mib(peak),
			walls[len(walls)/2].Round(time.Millisecond), mib(api.bytes())),
		grown < 64<<20,
	}, nil
}

const (
	cpuRuns    = 3
	cpuScrapes = 300
)

// cpuPerScrape is the user+system CPU time per scrape of the process cmd
// starts, at 1,000 events in one page, after a warm-up: the median of
// cpuRuns runs, each with fresh processes (timings on a busy machine are
// noisy), and the runs themselves.
func cpuPerScrape(simBin string, cmd command) (median time.Duration, runs string, err error) {
	var pers []time.Duration
	for range cpuRuns {
		per, err := cpuRun(simBin, cmd)
		if err != nil {
			return 0, "", err
		}
		pers = append(pers, per)
	}
	var each []string
	for _, p := range pers {
		each = append(each, fmt.Sprintf("%.2f", ms(p)))
	}
	slices.Sort(pers)
	return pers[len(pers)/2], strings.Join(each, ", "), nil
}

func cpuRun(simBin string, cmd command) (time.Duration, error) {
	env, err := start(simBin, 1000, 1000, 0, cmd)
	if err != nil {
		return 0, err
	}
	defer env.stop()
	for range 20 { // warm up: connections, buffers, the Go runtime
		if _, err := env.scrape(); err != nil {
			return 0, err
		}
	}
	cpu0, err := cpuTime(env.exporter.Process.Pid)
	for i := 0; i < cpuScrapes && err == nil; i++ {
		_, err = env.scrape()
	}
	cpu1, err2 := cpuTime(env.exporter.Process.Pid)
	if err = errors.Join(err, err2); err != nil {
		return 0, err
	}
	return (cpu1 - cpu0) / cpuScrapes, nil
}
