// SPDX-License-Identifier: Apache-2.0

package main

import (
	"cmp"
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
	"strconv"
	"strings"
	"time"

	"github.com/go-kit/log"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/collector"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/handler"
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

// writeProfiles writes a CPU profile of collections at each volume, the
// exporter's collection and /metrics run in this process against the same
// upstream as group 11 (five seconds of them, the Go and process
// collectors beside, as the exporter has them), to dir/cpu-<events>.pprof,
// and prints where each volume's CPU went: `go tool pprof -top` says more.
func writeProfiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var rows []row
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
		own := prometheus.NewRegistry()
		own.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		h := handler.New(handler.Options{
			Collections: collector.NewCollections(collector.Config{Client: cl, Logger: log.NewNopLogger(), Endpoints: endpoint.All()}),
			Gatherer:    own, Logger: log.NewNopLogger(), DefaultTimeout: time.Minute,
		})
		sizes := map[string]int{} // of the exposition, by Accept-Encoding
		scrape := func(encoding string) error {
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			r.Header.Set("Accept-Encoding", encoding)
			h.ServeHTTP(w, r)
			if w.Code != http.StatusOK {
				return fmt.Errorf("%d events: status %d", events, w.Code)
			}
			sizes[encoding] = w.Body.Len()
			return nil
		}
		path := filepath.Join(dir, fmt.Sprintf("cpu-%d.pprof", events))
		f, err := os.Create(path)
		if err == nil {
			err = errors.Join(scrape("identity"), scrape("gzip")) // warm up
		}
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		n := 0
		for start := time.Now(); time.Since(start) < 5*time.Second && err == nil; n++ {
			err = scrape("gzip")
		}
		pprof.StopCPUProfile()
		srv.Close()
		if err = errors.Join(err, f.Close()); err != nil {
			return err
		}
		r, err := whereItWent(path, events, n)
		if err != nil {
			return err
		}
		r.result += fmt.Sprintf("; /metrics %.1f KB gzipped, %.1f KB uncompressed", float64(sizes["gzip"])/1e3, float64(sizes["identity"])/1e3)
		rows = append(rows, r)
	}
	fmt.Print(render(rows))
	return nil
}

// costs are the parts of a collection, by priority: a sample is the first
// whose frames one of its own holds; the bench's own API is left out.
var costs = []struct{ name, frames string }{
	{"the bench's API", "net/http.(*conn).serve"},
	{"compress", "compress/"},
	{"encode", "prometheus/common/expfmt"},
	{"the process' series (Go and process collectors)", "prometheus.(*goCollector) prometheus.(*processCollector)"},
	{"merge with the process' series", "prometheus.Gatherers.Gather"},
	{"render", "collector.(*Collections).render endpoint.(*Collection).Result"},
	{"rules and folds", "endpoint.Number endpoint.within endpoint.Timestamp endpoint.Name endpoint.ID endpoint.shortDecimal endpoint.utcTimestamp endpoint.textBytes endpoint.plainASCII endpoint.ParseTimestamp endpoint.Count endpoint.CountBy endpoint.Cells endpoint.Max endpoint.Mean endpoint.FirstKeys endpoint.(*Collection).repeated"},
	{"read", "endpoint.(*Collection).Read"},
	{"fetch", "collector.(*Collections).start"},
	{"scrape", "handler.New"},
	{"Go runtime (GC, scheduling)", "runtime."},
}

// whereItWent reads a profile's samples (go tool pprof -traces) and makes a
// row of the shares of costs, and the CPU of a collection.
func whereItWent(path string, events, collections int) (row, error) {
	out, err := exec.Command("go", "tool", "pprof", "-traces", path).Output()
	if err != nil {
		return row{}, fmt.Errorf("go tool pprof -traces %s: %w", path, err)
	}
	spent := map[string]time.Duration{}
	for block := range strings.SplitSeq(string(out), "-----------+-------------------------------------------------------") {
		lines := strings.Split(strings.TrimSpace(block), "\n")
		value, leaf, ok := strings.Cut(strings.TrimSpace(lines[0]), " ")
		d, err := time.ParseDuration(strings.TrimSpace(value))
		if !ok || err != nil {
			continue // the header
		}
		frames := append([]string{strings.TrimSpace(leaf)}, lines[1:]...)
		spent[costOf(frames)] += d
	}
	total := time.Duration(0)
	for name, d := range spent {
		if name != costs[0].name {
			total += d
		}
	}
	var parts []string
	for _, c := range append(costs[1:], struct{ name, frames string }{"other", ""}) {
		if d := spent[c.name]; d > 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f %%", c.name, 100*float64(d)/float64(total)))
		}
	}
	return row{fmt.Sprintf("where a collection's CPU goes, %d events spread over the globe in one page (%s)", events, path), "—",
		fmt.Sprintf("%.2f ms a collection: %s", ms(total/time.Duration(collections)), strings.Join(parts, ", ")), true}, nil
}

func costOf(frames []string) string {
	for _, c := range costs {
		for _, f := range strings.Fields(c.frames) {
			for _, frame := range frames {
				if strings.Contains(frame, f) {
					return c.name
				}
			}
		}
	}
	return "other"
}
