// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Group 11: CPU per collection at 10, 1,000, 10,000 and 100,000 events
// spread over the globe, in one page, all release builds, run side by side:
// each round measures every contender once, in an order that turns each
// round, so that the machine's drift weighs on all alike. The contenders:
//   - the floor (bench/floor), serving as many series as this tree's scrape
//     holds at that volume, through promhttp with the exporter's options;
//   - the commits named with -against, built from git;
//   - json_exporter, with -json-exporter (its binary): one probe of each
//     endpoint per collection, each event a series of its own;
//   - this tree, scraped as Prometheus scrapes (gzip); the same with its
//     store warm (the API allowing every answer to be reused for ten
//     minutes: no request); and uncompressed (enable_compression: false).
// Every exporter runs with --api.max-response-bytes=64MiB, so that a page
// of any volume is read; a last row measures what a page over the default
// 16 MiB limit costs, where the endpoint fails.

var volumes = []int{10, 1000, 10000, 100000}

const volumeRounds = 3

// scrapesAt keeps each measurement near a second of CPU or more: /proc
// counts in ticks of 10 ms.
func scrapesAt(events int) int { return max(10, min(300, 3_000_000/max(events, 1))) }

type contender struct {
	name     string
	cmd      func(upstream, listen string, args ...string) *exec.Cmd
	paths    func(upstream string) []string // what a collection GETs; nil: /metrics
	encoding string                         // Accept-Encoding; "": gzip
	warm     bool                           // the API lets every answer be reused for ten minutes
	exporter bool                           // a build of the exporter: its exposition is checked
}

// Names of this tree's contenders, and of json_exporter's.
const (
	thisTree     = "this tree"
	thisWarm     = "this tree, store warm"
	thisIdentity = "this tree, uncompressed"
	jsonExporter = "json_exporter"
)

func volumeRows(dir string, against []string, jsonBin string) ([]row, error) {
	floorBin := filepath.Join(dir, "floor-release")
	build := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", floorBin, "./bench/floor")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("build the floor: %w\n%s", err, out)
	}
	floorSeries := 0 // this tree's series at the volume measured
	contenders := []contender{{name: "floor", cmd: func(upstream, listen string, _ ...string) *exec.Cmd {
		return exec.Command(floorBin, "-api-url=http://"+upstream, "-listen-address="+listen, "-series="+strconv.Itoa(floorSeries))
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
		contenders = append(contenders, contender{name: commit, cmd: exporterAt(moved), exporter: true})
	}
	if jsonBin != "" {
		c, err := jsonExporterContender(dir, jsonBin)
		if err != nil {
			return nil, err
		}
		contenders = append(contenders, c)
	}
	this, err := buildRelease(".", dir, "exporter-release")
	if err != nil {
		return nil, err
	}
	contenders = append(contenders,
		contender{name: thisTree, cmd: exporterAt(this), exporter: true},
		contender{name: thisWarm, cmd: exporterAt(this), exporter: true, warm: true},
		contender{name: thisIdentity, cmd: exporterAt(this), exporter: true, encoding: "identity"})

	var rows []row
	for _, events := range volumes {
		api, err := spread(events)
		if err != nil {
			return nil, err
		}
		if floorSeries, err = seriesAt(api, contenders[len(contenders)-3], events, "--api.max-response-bytes=64MiB"); err != nil {
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
		rows = append(rows, volumeRow(events, floorSeries, contenders, per))
		fmt.Fprintf(os.Stderr, "bench: %s: %s\n", rows[len(rows)-1].measure, rows[len(rows)-1].result) // a long run's rows as they come
	}
	// The failed read: a page of 125,000 events (about 20 MB) at the
	// default 16 MiB page limit, by the exporters as Prometheus scrapes them.
	api, err := spread(125000)
	if err != nil {
		return nil, err
	}
	var failing []contender
	for _, c := range contenders {
		if c.exporter && !c.warm && c.encoding == "" {
			failing = append(failing, c)
		}
	}
	per := make([][]time.Duration, len(failing))
	for round := range volumeRounds {
		for k := range failing {
			i := (k + round) % len(failing)
			d, err := cpuPerCollection(api, failing[i], -1)
			if err != nil {
				return nil, fmt.Errorf("%s, a page over the limit: %w", failing[i].name, err)
			}
			per[i] = append(per[i], d)
		}
	}
	var parts []string
	for i, c := range failing {
		parts = append(parts, fmt.Sprintf("%s %.2f ms (%s)", c.name, ms(median(per[i])), msList(per[i])))
	}
	rows = append(rows, row{"CPU per collection whose conflict page (125,000 events, about 20 MB) is over the default 16 MiB limit: the endpoint fails", "—", strings.Join(parts, "; "), true})
	return rows, nil
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return s[len(s)/2]
}

// volumeRow reports each contender's CPU per collection at one volume (the
// median and the runs), the ratios, and the budgets of that volume.
func volumeRow(events, series int, contenders []contender, per [][]time.Duration) row {
	at := map[string]time.Duration{}
	var parts []string
	for i, c := range contenders {
		at[c.name] = median(per[i])
		parts = append(parts, fmt.Sprintf("%s %.2f ms (%s)", c.name, ms(at[c.name]), msList(per[i])))
	}
	ratio := func(a, b string) float64 { return float64(at[a]) / float64(at[b]) }
	result := strings.Join(parts, "; ") + fmt.Sprintf("; this tree ÷ floor %.2f×", ratio(thisTree, "floor"))
	var targets []string
	met := true
	budget := func(text string, ok bool) {
		targets = append(targets, text)
		met = met && ok
	}
	if events >= 1000 {
		limit := map[bool]float64{true: 3, false: 2}[events >= 100000]
		budget(fmt.Sprintf("≤ %.0f× the floor", limit), ratio(thisTree, "floor") <= limit)
	}
	for _, c := range contenders {
		if c.exporter && c.name != thisTree && !strings.HasPrefix(c.name, thisTree) {
			result += fmt.Sprintf("; ÷ %s %.2f×", c.name, ratio(thisTree, c.name))
			if events >= 10000 {
				budget("≤ 1.0× "+c.name, ratio(thisTree, c.name) <= 1)
			}
		}
	}
	if _, ok := at[jsonExporter]; ok {
		result += fmt.Sprintf("; json_exporter ÷ this tree %.1f×", ratio(jsonExporter, thisTree))
		if events >= 100000 {
			budget("json_exporter ÷ this tree ≥ 50×", ratio(jsonExporter, thisTree) >= 50)
		}
	}
	result += fmt.Sprintf("; store warm ÷ floor %.2f×; uncompressed saves %.0f %%", ratio(thisWarm, "floor"), 100*(1-ratio(thisIdentity, thisTree)))
	budget("store warm ≤ 1.2× the floor", ratio(thisWarm, "floor") <= 1.2)
	return row{fmt.Sprintf("CPU per collection, %d events spread over the globe in one page (%d series; the floor serves as many)", events, series),
		strings.Join(targets, "; "), result, met}
}

// seriesAt is how many series c's scrape holds against api.
func seriesAt(api http.Handler, c contender, events int, args ...string) (int, error) {
	_, body, err := runContender(api, c, events, 1, args...)
	n := 0
	for line := range strings.SplitSeq(body, "\n") {
		if line != "" && !strings.HasPrefix(line, "#") {
			n++
		}
	}
	return n, err
}

// cpuPerCollection is c's CPU per collection against api, after a warm-up,
// in a fresh process: events it must count (-1: its conflict endpoint must
// fail, and the others answer).
func cpuPerCollection(api http.Handler, c contender, events int, args ...string) (time.Duration, error) {
	per, _, err := runContender(api, c, events, scrapesAt(cmp.Or(max(events, 0), 100000)), args...)
	return per, err
}

// runContender starts c against api, checks three collections (a warm-up:
// connections, buffers, the Go runtime, the store), makes n more, checks
// one last, and returns the CPU per collection of the n and the last one.
func runContender(api http.Handler, c contender, events, n int, args ...string) (time.Duration, string, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if c.warm {
		next := api
		api = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "max-age=600")
			next.ServeHTTP(w, r)
		})
	}
	upstream, err := serveHandler(ctx, api)
	if err != nil {
		return 0, "", err
	}
	addr, err := freePort()
	if err != nil {
		return 0, "", err
	}
	cmd := c.cmd(upstream, addr, args...)
	cmd.Env = append(withoutGOMEMLIMIT(os.Environ()), "GLOBAL_STABILITY_API_KEY="+benchKey, "GLOBAL_STABILITY_API_SUMMARY_REFRESH_INTERVAL=0s")
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		return 0, "", err
	}
	e := &env{exporter: cmd, addr: addr, upstream: upstream}
	defer e.stop()
	if err := waitForListener(addr); err != nil {
		return 0, "", err
	}
	check := func() (string, error) {
		body, err := collect(e, c)
		switch {
		case err != nil:
		case c.name == "floor":
			if !strings.Contains(body, "global_stability_up 1") {
				err = errors.New("the floor did not fetch every endpoint")
			}
		case c.name == jsonExporter:
			if got := strings.Count(body, "\nglobal_stability_conflict_event_escalation{"); got != events {
				err = fmt.Errorf("json_exporter exported %d events of %d", got, events)
			}
		case events < 0:
			err = checkFailures(body, []string{endpoint.Conflict.Label})
		case !strings.Contains(body, fmt.Sprintf("\nglobal_stability_conflict_events %d\n", events)):
			err = fmt.Errorf("did not count the %d events", events)
		default:
			err = checkFailures(body, nil)
		}
		return body, err
	}
	for range 3 {
		if _, err := check(); err != nil {
			return 0, "", err
		}
	}
	cpu0, err := cpuTime(cmd.Process.Pid)
	for i := 0; i < n && err == nil; i++ {
		_, err = collect(e, c)
	}
	cpu1, err2 := cpuTime(cmd.Process.Pid)
	last, err3 := check()
	if err = errors.Join(err, err2, err3); err != nil {
		return 0, "", err
	}
	return (cpu1 - cpu0) / time.Duration(n), last, nil
}

// collect makes one collection of c: its scrape, or json_exporter's probes.
func collect(e *env, c contender) (string, error) {
	paths := []string{"/metrics"}
	if c.paths != nil {
		paths = c.paths(e.upstream)
	}
	var b strings.Builder
	for _, p := range paths {
		body, err := e.get(p, 60, cmp.Or(c.encoding, "gzip"))
		if err != nil {
			return "", err
		}
		b.WriteString(body)
	}
	return b.String(), nil
}
