// Command bench measures the exporter against the targets of its
// performance issue, with the simulator and the exporter as separate
// processes on this machine, and prints a markdown table:
//
//	go run ./bench                        # print the table
//	go run ./bench -o bench/RESULTS.md    # also write it, with the machine it ran on
//	go run ./bench -only 11 -against 6876400   # CPU per collection at 10 to 100,000 events, side by side
//	go run ./bench -profile /tmp/prof     # CPU profiles of collections at each volume (go tool pprof -top)
//
// What it measures:
//   - scrape wall time against the longest chain of upstream requests, with
//     latency injected by the simulator (pages of one endpoint are sequential);
//   - upstream requests caused by a burst of concurrent scrapes (from the
//     exporter's own global_stability_api_requests_total);
//   - exporter CPU time per scrape, from /proc/<pid>/stat;
//   - the exporter's peak RSS (VmHWM) over idle, at growing event counts.
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

const benchKey = "bench-key"

func main() {
	out := flag.String("o", "", "also write the results to this file")
	only := flag.Int("only", 0, "run only this group of rows (1-6, 7 for the comparison with -base, 8 for the API's load, 9 for the memory of every shape of body, 10 for many targets in one process, 11 for CPU per collection at each volume against -against); 0 runs all")
	base := flag.String("base", "", "also measure the exporter built at this commit, side by side (groups 7 and 9)")
	against := flag.String("against", "", "commits to measure side by side with this tree and the floor in group 11, comma-separated")
	profiles := flag.String("profile", "", "write a CPU profile of collections at each volume of group 11 into this directory (cpu-<events>.pprof), and nothing else")
	flag.Parse()
	if *profiles != "" {
		if err := writeProfiles(*profiles); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	var commits []string
	if *against != "" {
		commits = strings.Split(*against, ",")
	}
	if err := run(*out, *only, *base, commits); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type row struct {
	measure, target, result string
	met                     bool
}

func run(out string, only int, base string, against []string) error {
	want := func(group int) bool { return only == 0 || only == group }
	dir, err := os.MkdirTemp("", "gse-bench")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	exporterBin, simBin, floorBin := filepath.Join(dir, "exporter"), filepath.Join(dir, "simulator"), filepath.Join(dir, "floor")
	for bin, pkg := range map[string]string{exporterBin: ".", simBin: "./cmd/global-stability-simulator", floorBin: "./bench/floor"} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			return fmt.Errorf("build %s: %w\n%s", pkg, err, out)
		}
	}
	var rows []row

	// 1. Wall time against the longest chain: 1,000 events in pages of 100
	// (ten sequential requests) at 100ms each; the other endpoints run
	// alongside and take one request each.
	if want(1) {
		env, err := start(simBin, 1000, 100, 100*time.Millisecond, exporter(exporterBin))
		if err != nil {
			return err
		}
		var walls []time.Duration
		for range 7 {
			start := time.Now()
			if _, err := env.scrape(); err != nil {
				env.stop()
				return err
			}
			walls = append(walls, time.Since(start))
		}
		env.stop()
		slices.Sort(walls)
		median := walls[len(walls)/2]
		chain := 10 * 100 * time.Millisecond
		ratio := float64(median) / float64(chain)
		rows = append(rows, row{"scrape wall time / longest request chain (10 pages × 100 ms)", "≤ 1.05",
			fmt.Sprintf("%.3f (median %s of 7 scrapes, chain %s)", ratio, median.Round(time.Millisecond), chain), ratio <= 1.05})
	}

	// 2. A burst of 20 concurrent scrapes: one collection's worth of
	// requests (1 overview + 4 drilldowns + 10 conflict pages + 1 + 1).
	if want(2) {
		env, err := start(simBin, 1000, 100, 100*time.Millisecond, exporter(exporterBin))
		if err != nil {
			return err
		}
		before, err := env.requestsTotal()
		if err == nil {
			var wg sync.WaitGroup
			errs := make(chan error, 20)
			for range 20 {
				wg.Go(func() {
					if _, err := env.scrape(); err != nil {
						errs <- err
					}
				})
			}
			wg.Wait()
			close(errs)
			err = errors.Join(<-errs)
		}
		after, err2 := env.requestsTotal()
		env.stop()
		if err = errors.Join(err, err2); err != nil {
			return err
		}
		// The scrape that read "after" made one more collection of its own.
		n := after - before - 17
		rows = append(rows, row{"upstream requests for 20 concurrent scrapes", "one collection (17)",
			fmt.Sprintf("%.0f", n), n == 17})
	}

	// 3. CPU per scrape at 1,000 events (one page), no injected latency;
	// then, to show where it goes, the same without the conflict endpoint,
	// the exporter serving a cached collection (no upstream requests at
	// all), and the floor: a bare Go program making the same eight requests.
	for _, c := range []struct {
		measure, target string
		cmd             command
		max             time.Duration // 0: no target
	}{
		{"exporter CPU per scrape at 1,000 events (8 requests, gzip-encoded /metrics, Go and process collectors included)", "< 2 ms",
			exporter(exporterBin), 2 * time.Millisecond},
		{"… the same without the conflict endpoint (7 requests, no events)", "—", exporter(exporterBin, "--no-collector.conflict"), 0},
		{"… serving /metrics alone: a cached collection, no upstream requests (`--api.cache-ttl=1h`)", "—", exporter(exporterBin, "--api.cache-ttl=1h"), 0},
		{"floor: a bare Go program (`bench/floor`) fetching the same 8 responses, discarding them and answering one line", "—", floor(floorBin), 0},
	} {
		if !want(3) {
			break
		}
		per, runs, err := cpuPerScrape(simBin, c.cmd)
		if err != nil {
			return err
		}
		rows = append(rows, row{c.measure, c.target,
			fmt.Sprintf("%.2f ms (median of %s; %d scrapes each)", ms(per), runs, cpuScrapes), c.max == 0 || per < c.max})
	}

	// 4. Peak RSS over idle at growing event counts, pages of 1,000.
	for _, events := range []int{1000, 10000, 100000} {
		if !want(4) {
			break
		}
		r, err := eventsRow(simBin, exporterBin, events)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}

	// 5. Peak RSS over idle when every endpoint answers with a body just
	// under its default limit, with the exporter's default flags.
	if want(5) {
		r, err := nearLimitRow(exporterBin)
		if err != nil {
			return err
		}
		rows = append(rows, r)
	}

	// 6. Peak RSS over idle when the most scrapes the exporter serves at
	// once arrive together and each exposition is as large as the label
	// caps allow.
	if want(6) {
		release, err := buildRelease(".", dir, "exporter-release")
		if err != nil {
			return err
		}
		var baseRelease string
		if base != "" {
			if baseRelease, err = releaseAt(base, dir); err != nil {
				return err
			}
		}
		for _, warm := range []bool{false, true} {
			r, err := capsFilledRow(release, warm)
			if err != nil {
				return err
			}
			if baseRelease != "" {
				b, err := capsFilledRow(baseRelease, warm)
				if err != nil {
					return err
				}
				r.result += fmt.Sprintf("; %s: %s", base, b.result)
			}
			rows = append(rows, r)
		}
	}

	// 7. This commit against an earlier one, built from git history.
	if base != "" && want(7) {
		baseBin, err := buildAt(base, dir)
		if err != nil {
			return err
		}
		compared, err := compareRows(exporterBin, baseBin, base, simBin)
		if err != nil {
			return err
		}
		rows = append(rows, compared...)
	}

	// 8. What an hour of an HA pair costs the API, with and without the
	// store, played in fake time by collector's TestAPILoad (which also
	// holds every exported as_of to what the API allowed).
	if want(8) {
		load, err := apiLoadRows(dir)
		if err != nil {
			return err
		}
		rows = append(rows, load...)
	}

	// 9. Peak RSS over idle for every shape of body an upstream can choose
	// within the default limits, on the release build without GOMEMLIMIT.
	if want(9) {
		release, err := buildRelease(".", dir, "exporter-release")
		if err != nil {
			return err
		}
		var baseRelease string
		if base != "" {
			if baseRelease, err = releaseAt(base, dir); err != nil {
				return err
			}
		}
		shaped, err := shapeRows(release, baseRelease, base)
		if err != nil {
			return err
		}
		rows = append(rows, shaped...)
	}

	// 10. Many API accounts in one process: memory per target, a probe's
	// CPU against a single account's scrape, a slow target beside another.
	if want(10) {
		release, err := buildRelease(".", dir, "exporter-release")
		if err != nil {
			return err
		}
		many, err := targetsRows(dir, simBin, release)
		if err != nil {
			return err
		}
		rows = append(rows, many...)
	}

	// 11. CPU per collection at each volume: the floor, earlier commits
	// and this tree, side by side.
	if want(11) {
		vol, err := volumeRows(dir, against)
		if err != nil {
			return err
		}
		rows = append(rows, vol...)
	}

	table := render(rows)
	fmt.Print(table)
	if out != "" && only == 0 {
		return os.WriteFile(out, []byte(resultsDoc(table)), 0o644)
	}
	return nil
}

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
		"peak RSS over idle, every endpoint answering a body just under its default limit (1 MiB documents, 10 pages of 16 MiB of each paged endpoint, lists of distinct items), 3 scrapes", "< 64 MiB",
		fmt.Sprintf("%.1f MiB (idle %.1f MiB, peak %.1f MiB; median scrape %s for %d MiB of JSON)", mib(grown), mib(idle), mib(peak),
			walls[len(walls)/2].Round(time.Millisecond), (6*client.DefaultMaxDocumentBytes+2*nearLimitPages*client.DefaultMaxResponseBytes)>>20),
		grown < 64<<20,
	}, nil
}

const (
	cpuRuns    = 3
	cpuScrapes = 300
)

// cpuPerScrape is the user+system CPU time per scrape of the process cmd
// starts, at 1,000 events in one page, after a warm-up: the median of
// cpuRuns runs, each with fresh processes (this machine is shared and
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

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

func render(rows []row) string {
	var b strings.Builder
	b.WriteString("| measure | target | result | met |\n|---|---|---|---|\n")
	for _, r := range rows {
		met := "yes"
		switch {
		case r.target == "—":
			met = "—"
		case !r.met:
			met = "**no**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.measure, r.target, r.result, met)
	}
	return b.String()
}

func resultsDoc(table string) string {
	return fmt.Sprintf(`# Benchmark results

Produced by `+"`go run ./bench -o bench/RESULTS.md`"+` on %s.

Machine: %s, %d cores, %s, %s/%s. The simulator and the exporter ran as
separate processes on this machine; timings on a shared 2-core machine are
noisy, so the harness takes medians and averages over many scrapes.

%s
The Go benchmarks (`+"`make bench`"+`) measure the same code without processes:
decoding a page of 1,000 events (the scanner beside the encoding/json
reference it replaced), a whole collection at 10, 1,000 and 100,000 events
against replayed simulator responses, and rendering /metrics.
`, time.Now().UTC().Format("2006-01-02"), cpuModel(), runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH, table)
}

// env is a simulator and an exporter, running.
type env struct {
	simulator, exporter *exec.Cmd
	addr                string
}

// waitForListener waits until something answers GET / on addr.
func waitForListener(addr string) error {
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get("http://" + addr + "/"); err == nil {
			resp.Body.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("nothing answers on %s", addr)
		}
	}
}

func freePort() (string, error) {
	ln, err := new(net.ListenConfig).Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// command builds the command line of the process under test, given the
// simulator's address and the address to listen on.
type command func(simAddr, listenAddr string) *exec.Cmd

func exporter(bin string, args ...string) command {
	return func(simAddr, listenAddr string) *exec.Cmd {
		cmd := exec.Command(bin, append([]string{"--api.url=http://" + simAddr, "--web.listen-address=" + listenAddr,
			"--api.max-pages=1000", "--api.timeout=60s", "--log.level=warn"}, args...)...)
		// Whole collections, the summary included (row 8 measures reuse). A
		// variable, not a flag: an exporter built at -base may not know it.
		cmd.Env = append(os.Environ(), "GLOBAL_STABILITY_API_SUMMARY_REFRESH_INTERVAL=0s")
		return cmd
	}
}

func floor(bin string) command {
	return func(simAddr, listenAddr string) *exec.Cmd {
		return exec.Command(bin, "-api-url=http://"+simAddr, "-listen-address="+listenAddr)
	}
}

func start(simBin string, events, pageSize int, latency time.Duration, cmd command) (*env, error) {
	simAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	exporterAddr, err := freePort()
	if err != nil {
		return nil, err
	}
	e := &env{addr: exporterAddr}
	e.simulator = exec.Command(simBin, "--listen-address="+simAddr, "--key="+benchKey,
		"--events="+strconv.Itoa(events), "--page-size="+strconv.Itoa(pageSize), "--latency="+latency.String(),
		// Rows 1 to 7 measure a whole collection: nothing reused (row 8
		// measures reuse).
		"--no-validators", "--cache-control=")
	e.exporter = cmd(simAddr, exporterAddr)
	e.exporter.Env = append(e.exporter.Env, "GLOBAL_STABILITY_API_KEY="+benchKey)
	for _, c := range []*exec.Cmd{e.simulator, e.exporter} {
		c.Stderr = os.Stderr
		if err := c.Start(); err != nil {
			e.stop()
			return nil, err
		}
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + simAddr + "/")
		if err == nil {
			resp.Body.Close()
			if resp, err = http.Get("http://" + exporterAddr + "/"); err == nil {
				resp.Body.Close()
				return e, nil
			}
		}
		if time.Now().After(deadline) {
			e.stop()
			return nil, fmt.Errorf("processes did not start: %w", err)
		}
	}
}

func (e *env) stop() {
	for _, c := range []*exec.Cmd{e.exporter, e.simulator} {
		if c != nil && c.Process != nil {
			_ = c.Process.Kill()
			_ = c.Wait()
		}
	}
}

// scrape fetches /metrics as Prometheus would.
// scrape scrapes and wants every endpoint to have answered.
func (e *env) scrape() (string, error) {
	b, err := e.scrapeWithTimeout(30)
	if err == nil && !strings.Contains(b, "\nglobal_stability_up 1\n") {
		err = errors.New("a scrape did not succeed whole")
	}
	return b, err
}

// scrapeWithTimeout scrapes with Prometheus' timeout header of seconds and
// returns the exposition, whatever the API did.
func (e *env) scrapeWithTimeout(seconds int) (string, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+e.addr+"/metrics", nil)
	if err != nil {
		return "", err
	}
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.Itoa(seconds))
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	// Ask for gzip explicitly and read the whole body before unzipping, as
	// Prometheus does: Go's transparent gzip stops reading at the end of the
	// gzip stream and so would cost the exporter a new connection per scrape.
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return "", err
	}
	if resp.Header.Get("Content-Encoding") == "gzip" { // the floor answers plain text
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return "", err
		}
		if b, err = io.ReadAll(zr); err != nil {
			return "", err
		}
	}
	return string(b), nil
}

func (e *env) requestsTotal() (float64, error) {
	body, err := e.scrape()
	if err != nil {
		return 0, err
	}
	total := 0.0
	for line := range strings.SplitSeq(body, "\n") {
		if strings.HasPrefix(line, "global_stability_api_requests_total{") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return 0, err
			}
			total += v
		}
	}
	return total, nil
}

// cpuTime is the user+system CPU time of pid, from /proc/<pid>/stat.
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15 of the whole line, in clock ticks (100 per second).
	fields := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, err1 := strconv.ParseInt(fields[11], 10, 64)
	stime, err2 := strconv.ParseInt(fields[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(utime+stime) * 10 * time.Millisecond, nil
}

// peakRSS is VmHWM of pid, in bytes.
func peakRSS(pid int) (int64, error) {
	return statusKB(fmt.Sprintf("/proc/%d/status", pid), "VmHWM:")
}

func statusKB(path, key string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), key); ok {
			kb, err := strconv.ParseInt(strings.Fields(rest)[0], 10, 64)
			return kb << 10, err
		}
	}
	return 0, fmt.Errorf("%s: no %s", path, key)
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if name, ok := strings.CutPrefix(line, "model name"); ok {
			return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(name), ":"))
		}
	}
	return "unknown CPU"
}

func memTotal() string {
	kb, err := statusKB("/proc/meminfo", "MemTotal:")
	if err != nil {
		return "unknown memory"
	}
	return fmt.Sprintf("%.0f GiB memory", float64(kb)/(1<<30))
}
