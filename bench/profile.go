// SPDX-License-Identifier: Apache-2.0

package main

import (
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
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
	{"rules and folds", "endpoint.Number endpoint.within endpoint.Timestamp endpoint.LabelValue endpoint.ID endpoint.shortDecimal endpoint.utcTimestamp endpoint.textBytes endpoint.plainASCII endpoint.ParseTimestamp endpoint.Count endpoint.CountBy endpoint.Cells endpoint.Max endpoint.Mean endpoint.FirstKeys endpoint.(*Collection).repeated"},
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
