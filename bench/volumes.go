// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
)

// Group 11: CPU per collection at 10, 1,000, 10,000 and 100,000 events
// spread over the globe, in one page, for the floor, the commits named
// with -against and this tree, all release builds, run side by side: each
// round measures every binary once, in an order that turns each round,
// so that the machine's drift weighs on all alike. Every binary runs with
// --api.max-response-bytes=64MiB, so that a page of any volume is read; a
// last row measures what a page over the default 16 MiB limit costs,
// where the endpoint fails.

var volumes = []int{10, 1000, 10000, 100000}

const volumeRounds = 3

// scrapesAt keeps each measurement near a second of CPU or more: /proc
// counts in ticks of 10 ms.
func scrapesAt(events int) int { return max(10, min(300, 3_000_000/max(events, 1))) }

type contender struct {
	name string
	cmd  func(upstream, listen string, args ...string) *exec.Cmd
}

func volumeRows(dir string, against []string) ([]row, error) {
	floorBin := filepath.Join(dir, "floor-release")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", floorBin, "./bench/floor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the floor: %w\n%s", err, out)
	}
	contenders := []contender{{"floor", func(upstream, listen string, _ ...string) *exec.Cmd {
		return exec.Command(floorBin, "-api-url=http://"+upstream, "-listen-address="+listen)
	}}}
	exporterAt := func(bin string) func(string, string, ...string) *exec.Cmd {
		return func(upstream, listen string, args ...string) *exec.Cmd {
			return exec.Command(bin, append([]string{"--api.url=http://" + upstream, "--web.listen-address=" + listen, "--log.level=error", "--api.timeout=60s"}, args...)...)
		}
	}
	for _, commit := range against {
		bin, err := releaseAt(commit, dir)
		if err != nil {
			return nil, err
		}
		moved := filepath.Join(dir, "exporter-"+commit)
		if err := os.Rename(bin, moved); err != nil {
			return nil, err
		}
		contenders = append(contenders, contender{commit, exporterAt(moved)})
	}
	this, err := buildRelease(".", dir, "exporter-release")
	if err != nil {
		return nil, err
	}
	contenders = append(contenders, contender{"this tree", exporterAt(this)})

	var rows []row
	for _, events := range volumes {
		api, err := spread(events)
		if err != nil {
			return nil, err
		}
		per := make([][]time.Duration, len(contenders))
		for round := range volumeRounds {
			for k := range contenders {
				i := (k + round) % len(contenders)
				d, err := cpuPerCollection(api, contenders[i], events, "--api.max-response-bytes=64MiB")
				if err != nil {
					return nil, fmt.Errorf("%s at %d events: %w", contenders[i].name, events, err)
				}
				per[i] = append(per[i], d)
			}
		}
		rows = append(rows, volumeRow(fmt.Sprintf("CPU per collection, %d events spread over the globe in one page", events), contenders, per))
	}
	// The failed read: a page of 125,000 events (about 20 MB) at the
	// default 16 MiB page limit.
	api, err := spread(125000)
	if err != nil {
		return nil, err
	}
	per := make([][]time.Duration, len(contenders))
	for round := range volumeRounds {
		for k := range contenders[1:] {
			i := 1 + (k+round)%(len(contenders)-1)
			d, err := cpuPerCollection(api, contenders[i], -1)
			if err != nil {
				return nil, fmt.Errorf("%s, a page over the limit: %w", contenders[i].name, err)
			}
			per[i] = append(per[i], d)
		}
	}
	per[0] = nil
	rows = append(rows, volumeRow("CPU per collection whose conflict page (125,000 events, about 20 MB) is over the default 16 MiB limit: the endpoint fails", contenders, per))
	return rows, nil
}

func volumeRow(measure string, contenders []contender, per [][]time.Duration) row {
	median := func(d []time.Duration) time.Duration { s := slices.Clone(d); slices.Sort(s); return s[len(s)/2] }
	var parts []string
	for i, c := range contenders {
		if len(per[i]) == 0 {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s %.2f ms (%s)", c.name, ms(median(per[i])), msList(per[i])))
	}
	this, result := median(per[len(per)-1]), strings.Join(parts, "; ")
	if len(per[0]) > 0 {
		result += fmt.Sprintf("; this tree ÷ floor %.1f×", float64(this)/float64(median(per[0])))
	}
	for i := 1; i < len(per)-1; i++ {
		result += fmt.Sprintf("; ÷ %s %.2f×", contenders[i].name, float64(this)/float64(median(per[i])))
	}
	return row{measure, "—", result, true}
}

// cpuPerCollection is c's CPU per scrape against api, after a warm-up, in
// a fresh process: events it must count (-1: its conflict endpoint must
// fail, and the others answer).
func cpuPerCollection(api http.Handler, c contender, events int, args ...string) (time.Duration, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	upstream, err := serveHandler(ctx, api)
	if err != nil {
		return 0, err
	}
	addr, err := freePort()
	if err != nil {
		return 0, err
	}
	cmd := c.cmd(upstream, addr, args...)
	cmd.Env = append(withoutGOMEMLIMIT(os.Environ()), "GLOBAL_STABILITY_API_KEY="+benchKey, "GLOBAL_STABILITY_API_SUMMARY_REFRESH_INTERVAL=0s")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	e := &env{exporter: cmd, addr: addr}
	defer e.stop()
	if err := waitForListener(addr); err != nil {
		return 0, err
	}
	check := func() error {
		body, err := e.scrapeWithTimeout(60)
		switch {
		case err != nil:
			return err
		case c.name == "floor":
			if !strings.Contains(body, "global_stability_up 1") {
				return errors.New("the floor did not fetch every endpoint")
			}
			return nil
		case events < 0:
			return checkFailures(body, []string{endpoint.Conflict.Label})
		}
		if err := checkFailures(body, nil); err != nil {
			return err
		}
		if !strings.Contains(body, fmt.Sprintf("\nglobal_stability_conflict_events %d\n", events)) {
			return fmt.Errorf("did not count the %d events", events)
		}
		return nil
	}
	for range 3 { // warm up: connections, buffers, the Go runtime
		if err := check(); err != nil {
			return 0, err
		}
	}
	n := scrapesAt(max(events, 100000))
	if events >= 0 {
		n = scrapesAt(events)
	}
	cpu0, err := cpuTime(cmd.Process.Pid)
	for i := 0; i < n && err == nil; i++ {
		_, err = e.scrapeWithTimeout(60)
	}
	cpu1, err2 := cpuTime(cmd.Process.Pid)
	if err = errors.Join(err, err2, check()); err != nil {
		return 0, err
	}
	return (cpu1 - cpu0) / time.Duration(n), nil
}

// writeProfiles writes a CPU profile of collections at each volume, the
// exporter's collection and /metrics run in this process against the same
// upstream as group 11, to dir/cpu-<events>.pprof: `go tool pprof -top`
// says where a regression went.
func writeProfiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, events := range volumes {
		api, err := spread(events)
		if err != nil {
			return err
		}
		srv := httptest.NewServer(api)
		cl, err := client.New(client.Config{BaseURL: srv.URL, APIKey: client.StaticKey(benchKey), MaxResponseBytes: 64 << 20})
		if err != nil {
			srv.Close()
			return err
		}
		h := handler.New(handler.Options{
			Collections: collector.NewCollections(collector.Config{Client: cl, Logger: log.NewNopLogger(), Endpoints: endpoint.All()}),
			Gatherer:    prometheus.NewRegistry(), Logger: log.NewNopLogger(), DefaultTimeout: time.Minute,
		})
		scrape := func() error {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			r.Header.Set("Accept-Encoding", "gzip")
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				return fmt.Errorf("%d events: status %d", events, w.Code)
			}
			return nil
		}
		f, err := os.Create(filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", events)))
		if err == nil {
			err = scrape() // warm up
		}
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		for i := 0; i < scrapesAt(events) && err == nil; i++ {
			err = scrape()
		}
		pprof.StopCPUProfile()
		srv.Close()
		if err = errors.Join(err, f.Close()); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: wrote %s\n", f.Name())
	}
	return nil
}
