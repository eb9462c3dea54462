// SPDX-License-Identifier: Apache-2.0

// Command bench measures the exporter against the targets of its
// performance issue, with the simulator and the exporter as separate
// processes on this machine, and prints a markdown table:
//
//	go run ./bench                        # print the table
//	go run ./bench -o bench/RESULTS.md    # also write it, with the machine it ran on
//	go run ./bench -only 11 -against 6876400 -json-exporter ~/go/bin/json_exporter
//	                                      # CPU per collection at 10 to 100,000 events, side by side
//	go run ./bench -only 12               # scrapes at once with the store warm: memory, deadlines
//	go run ./bench -profile /tmp/prof     # CPU profiles of collections at each volume, and where each went
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
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

const benchKey = "bench-key-0123456789"

func main() {
	out := flag.String("o", "", "also write the results to this file")
	only := flag.Int("only", 0, "run only this group of rows (1-6, 7 for the comparison with -base, 8 for the API's load, 9 for the memory of every shape of body, 10 for many targets in one process, 11 for CPU per collection at each volume against -against, 12 for scrapes at once with the store warm); 0 runs all")
	base := flag.String("base", "", "also measure the exporter built at this commit, side by side (groups 6, 7, 9 and 12)")
	against := flag.String("against", "", "commits to measure side by side with this tree and the floor in group 11, comma-separated")
	profiles := flag.String("profile", "", "write a CPU profile of collections at each volume of group 11 into this directory (cpu-<events>.pprof), print where each went, and nothing else")
	jsonBin := flag.String("json-exporter", "", "also measure this json_exporter binary in group 11 (go install github.com/prometheus-community/json_exporter@v0.7.0)")
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
	if err := run(*out, *only, *base, commits, *jsonBin); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type row struct {
	measure, target, result string
	met                     bool
}

func run(out string, only int, base string, against []string, jsonBin string) error {
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
	// requests (a request per page of every endpoint).
	if want(2) {
		one, err := collectionRequests(1000, 100)
		if err != nil {
			return err
		}
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
		n := after - before - float64(one)
		rows = append(rows, row{"upstream requests for 20 concurrent scrapes", fmt.Sprintf("one collection (%d)", one),
			fmt.Sprintf("%.0f", n), n == float64(one)})
	}

	// 3. CPU per scrape at 1,000 events (one page), no injected latency;
	// then, to show where it goes, the same without the conflict endpoint,
	// the exporter serving a cached collection (no upstream requests at
	// all), and the floor: a bare Go program making the same requests.
	var all, noConflict int
	if want(3) {
		if all, err = collectionRequests(1000, 1000); err == nil {
			noConflict, err = collectionRequests(1000, 1000, endpoint.Conflict.Group)
		}
		if err != nil {
			return err
		}
	}
	for _, c := range []struct {
		measure, target string
		cmd             command
		max             time.Duration // 0: no target
	}{
		{fmt.Sprintf("exporter CPU per scrape at 1,000 events (%d requests, gzip-encoded /metrics, Go and process collectors included)", all), "< 2 ms",
			exporter(exporterBin), 2 * time.Millisecond},
		{fmt.Sprintf("… the same without the conflict endpoint (%d requests, no events)", noConflict), "—", exporter(exporterBin, "--no-collector."+endpoint.Conflict.Group), 0},
		{"… serving /metrics alone: a cached collection, no upstream requests (`--api.cache-ttl=1h`)", "—", exporter(exporterBin, "--api.cache-ttl=1h"), 0},
		{fmt.Sprintf("floor: a bare Go program (`bench/floor`) fetching each endpoint's first answer (%d requests), discarding them and answering one line", len(endpoint.All())), "—", floor(floorBin), 0},
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
		vol, err := volumeRows(dir, against, jsonBin)
		if err != nil {
			return err
		}
		rows = append(rows, vol...)
	}

	// 12. Scrapes at once with the store warm: probes of several targets,
	// and scrapes of one target against their deadlines.
	if want(12) {
		release, err := buildRelease(".", dir, "exporter-release")
		if err != nil {
			return err
		}
		concurrent, err := concurrencyRows(dir, release)
		if err != nil {
			return err
		}
		if base != "" {
			baseRelease, err := releaseAt(base, dir)
			if err != nil {
				return err
			}
			then, err := concurrencyRows(dir, baseRelease)
			if err != nil {
				return err
			}
			for i := range concurrent {
				concurrent[i].result += fmt.Sprintf("; %s: %s", base, then[i].result)
			}
		}
		rows = append(rows, concurrent...)
	}

	table := render(rows)
	fmt.Print(table)
	if out != "" && only == 0 {
		return os.WriteFile(out, []byte(resultsDoc(table)), 0o644)
	}
	return nil
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
separate processes on this machine; timings are noisy on a busy machine,
so the harness takes medians and averages over many scrapes.

%s
The Go benchmarks (`+"`make bench`"+`) measure the same code without processes:
decoding a page of 1,000 events (the scanner beside the encoding/json
reference it replaced), a whole collection at 10, 1,000 and 100,000 events
against replayed simulator responses, and rendering /metrics.
`, time.Now().UTC().Format("2006-01-02"), cpuModel(), runtime.NumCPU(), memTotal(), runtime.GOOS, runtime.GOARCH, table)
}
