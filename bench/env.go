// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// The processes under test: the simulator, the exporter or the floor,
// started, scraped and measured from /proc.

// env is a simulator and an exporter, running.
type env struct {
	simulator, exporter *exec.Cmd
	addr                string
	upstream            string // the API's address, when the bench serves it
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
	return e.get("/metrics", seconds, "gzip")
}

// get GETs path as Prometheus would, with its timeout header of seconds and
// Accept-Encoding encoding (Prometheus' enable_compression: false sends
// identity), and returns the body.
func (e *env) get(path string, seconds int, encoding string) (string, error) {
	b, gzipped, err := e.fetch(path, seconds, encoding)
	if err != nil {
		return "", err
	}
	return decode(b, gzipped)
}

// decode is a body of get, unzipped if gzipped.
func decode(b []byte, gzipped bool) (string, error) {
	if gzipped { // the floor's one line is plain text
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

// fetch is get's request: the body as sent, and whether it is gzipped.
func (e *env) fetch(path string, seconds int, encoding string) ([]byte, bool, error) {
	req, err := http.NewRequest(http.MethodGet, "http://"+e.addr+path, nil)
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("X-Prometheus-Scrape-Timeout-Seconds", strconv.Itoa(seconds))
	req.Header.Set("Accept", "text/plain;version=0.0.4;q=0.5,*/*;q=0.1")
	// Ask for gzip explicitly and read the whole body before unzipping, as
	// Prometheus does: Go's transparent gzip stops reading at the end of the
	// gzip stream and so would cost the exporter a new connection per scrape.
	req.Header.Set("Accept-Encoding", encoding)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, false, err
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	return b, resp.Header.Get("Content-Encoding") == "gzip", err
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

// collectionRequests is how many requests one collection of every endpoint
// of the descriptions (but those of the groups skipped) takes against a
// simulator started as start starts it: one per page, the pages counted by
// walking an in-process simulator of the same configuration.
func collectionRequests(events, pageSize int, skip ...string) (int, error) {
	sim := simulator.New(simulator.Config{Key: benchKey, Seed: 1, Events: events, PageSize: pageSize})
	n := 0
	for _, e := range endpoint.All() {
		if slices.Contains(skip, e.Group) {
			continue
		}
		for cursor, more := "", true; more; n++ {
			req := httptest.NewRequest(http.MethodGet, "/v1/"+e.Label+"?cursor="+url.QueryEscape(cursor), nil)
			req.Header.Set("Authorization", "Bearer "+benchKey)
			rec := httptest.NewRecorder()
			sim.ServeHTTP(rec, req)
			var page struct {
				Next *string `json:"next_cursor"`
			}
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &page) != nil {
				return 0, fmt.Errorf("the simulator answers %s with %d: the bench needs every endpoint", e.Label, rec.Code)
			}
			more = page.Next != nil && *page.Next != ""
			if more {
				cursor = *page.Next
			}
		}
	}
	return n, nil
}
