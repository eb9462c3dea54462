// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// simulatorBodies are the simulator's answers to every endpoint of the
// descriptions, each list's pages in one: a fixture that follows the
// descriptions, so that an endpoint added to them is served here too.
func simulatorBodies() (map[*endpoint.Endpoint][]byte, error) {
	sim := simulator.New(simulator.Config{Key: benchKey, Seed: 1, Events: 40, PageSize: 1000, Briefings: 10})
	bodies := map[*endpoint.Endpoint][]byte{}
	for _, e := range endpoint.All() {
		req := httptest.NewRequest(http.MethodGet, "/v1/"+e.Label, nil)
		req.Header.Set("Authorization", "Bearer "+benchKey)
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("the simulator does not serve %s (%d): the bench needs a healthy body of every endpoint", e.Label, rec.Code)
		}
		bodies[e] = rec.Body.Bytes()
	}
	return bodies, nil
}

// capsFilled is an upstream that fills every label cap of the exporter's
// defaults a little past it: each endpoint answers the simulator's body,
// and each list with a capped fold holds items made from the simulator's
// first one, the capped fields varied: 1.1 times --collector.max-label-values
// distinct keys and names (two names an item in a list of names), items
// over every cell of the default grid. Each scrape's exposition then holds
// the most series the defaults allow (--collector.max-series of the API's
// data), which is what concurrent scrapes render.
type capsFilled struct {
	docs    map[string][]byte
	latency time.Duration
	header  http.Header
}

func newCapsFilled(latency time.Duration, header http.Header) (*capsFilled, error) {
	bodies, err := simulatorBodies()
	if err != nil {
		return nil, err
	}
	c := &capsFilled{docs: map[string][]byte{}, latency: latency, header: header}
	for e, body := range bodies {
		if c.docs[e.Label], err = fillCaps(e, body, endpoint.DefaultMaxLabelValues*11/10, 0); err != nil {
			return nil, fmt.Errorf("%s: %w", e.Label, err)
		}
	}
	return c, nil
}

// fillCaps gives e's list, if a fold of it is capped, copies of its first
// item with each capped field varied: names distinct names or keys, items
// spread over every cell of the default grid, items in all (0: enough to
// pass every cap).
func fillCaps(e *endpoint.Endpoint, body []byte, names, items int) ([]byte, error) {
	if e.List == nil {
		return body, nil
	}
	cells := int(180/endpoint.DefaultGridDegrees) * int(360/endpoint.DefaultGridDegrees)
	var vary []func(item map[string]any, i int)
	n := 0
	for _, fold := range e.List.Folds {
		switch f := fold.(type) {
		case endpoint.FirstKeys:
			n = max(n, names)
			vary = append(vary, func(item map[string]any, i int) {
				item[f.Key] = fmt.Sprintf("indicator_with_a_plausible_name_%d", i%names)
			})
		case endpoint.CountBy:
			n = max(n, names)
			each := slices.ContainsFunc(e.List.Item, func(it endpoint.Field) bool { return it.Name == f.Field && it.Each })
			vary = append(vary, func(item map[string]any, i int) {
				name := func(i int) string { return fmt.Sprintf("%s_with_a_plausible_name_%d", f.Field, i%names) }
				if item[f.Field] = name(i); each {
					item[f.Field] = []string{name(i), name(i + 1)}
				}
			})
		case endpoint.Cells:
			n = max(n, cells)
			vary = append(vary, func(item map[string]any, i int) {
				row, col := float64(i%cells/int(360/endpoint.DefaultGridDegrees)), float64(i%int(360/endpoint.DefaultGridDegrees))
				item[f.Lat] = math.Round((-90+(row+0.5)*endpoint.DefaultGridDegrees)*1e6) / 1e6
				item[f.Lon] = math.Round((-180+(col+0.5)*endpoint.DefaultGridDegrees)*1e6) / 1e6
			})
		}
	}
	if items > 0 {
		n = items
	}
	if n == 0 {
		return body, nil // no capped fold
	}
	if e.List.Unique != "" {
		vary = append(vary, func(item map[string]any, i int) { item[e.List.Unique] = fmt.Sprintf("item_%d", i) })
	}
	d := json.NewDecoder(bytes.NewReader(body))
	d.UseNumber()
	var doc map[string]any
	if err := d.Decode(&doc); err != nil {
		return nil, err
	}
	list, _ := doc[e.List.Name].([]any)
	if len(list) == 0 {
		return nil, errors.New("the simulator's list has no item to copy")
	}
	template, _ := list[0].(map[string]any)
	filled := make([]any, n)
	for i := range filled {
		item := map[string]any{}
		for k, v := range template {
			item[k] = v
		}
		for _, v := range vary {
			v(item, i)
		}
		filled[i] = item
	}
	doc[e.List.Name] = filled
	if e.Paged {
		doc["next_cursor"] = nil
	}
	return json.Marshal(doc)
}

func (c *capsFilled) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := c.docs[strings.TrimPrefix(r.URL.Path, "/v1/")]
	if !ok {
		http.Error(w, "the bench's upstream serves no "+r.URL.Path, http.StatusTeapot)
		return
	}
	time.Sleep(c.latency) // so that every scrape of a burst overlaps
	for k, v := range c.header {
		w.Header()[k] = v
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	_, _ = w.Write(body)
}

// checkCapsFilled wants every endpoint of the descriptions to have
// answered and every capped metric to have left series out: the row
// measures the most series the defaults allow, or fails.
func checkCapsFilled(body string) error {
	if err := checkFailures(body, nil); err != nil {
		return err
	}
	samples, err := promtext.Parse(body)
	if err != nil {
		return err
	}
	for _, e := range endpoint.All() {
		for _, m := range e.Metrics() {
			if v, _ := samples.Get("global_stability_label_values_dropped", "metric", m.Name); m.Capped && v == 0 {
				return fmt.Errorf("%s: no series left out, so its cap was not filled", m.Name)
			}
		}
	}
	return nil
}

// concurrentScrapes is how many scrapes a burst sends at once: the
// default of --web.max-requests, the most the exporter serves at once.
const concurrentScrapes = 40

// capsFilledRow sends bursts of concurrentScrapes scrapes at once to an
// exporter with default flags against capsFilled, and reports its peak
// RSS over idle. With warm, the API allows its answers to be stored for
// ten minutes and one scrape fills the store first: the bursts' scrapes are
// then served from the store, each with a collection of its own; without,
// each burst shares one collection in flight.
func capsFilledRow(exporterBin string, warm bool) (row, error) {
	latency, header, what := 200*time.Millisecond, http.Header{}, "sharing a collection in flight"
	if warm {
		latency, what = 0, "the store warm (every answer fresh for 10 minutes)"
		header.Set("Cache-Control", "max-age=600")
	}
	api, err := newCapsFilled(latency, header)
	if err != nil {
		return row{}, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	upstream, err := serveHandler(ctx, api)
	if err != nil {
		return row{}, err
	}
	addr, err := freePort()
	if err != nil {
		return row{}, err
	}
	cmd := exec.Command(exporterBin, "--api.url=http://"+upstream, "--web.listen-address="+addr, "--log.level=error")
	cmd.Env = append(withoutGOMEMLIMIT(os.Environ()), "GLOBAL_STABILITY_API_KEY="+benchKey, "GLOBAL_STABILITY_API_SUMMARY_REFRESH_INTERVAL=0s")
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
	if err == nil && warm {
		var body string
		if body, err = e.scrape(); err == nil {
			err = checkCapsFilled(body)
		}
	}
	const bursts = 3
	var series int
	var mu sync.Mutex
	for b := 0; b < bursts && err == nil; b++ {
		var wg sync.WaitGroup
		errs := make(chan error, concurrentScrapes)
		for range concurrentScrapes {
			wg.Go(func() {
				body, err := e.scrape()
				if err == nil {
					err = checkCapsFilled(body)
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				series = max(series, strings.Count(body, "\nglobal_stability_"))
				mu.Unlock()
			})
		}
		wg.Wait()
		close(errs)
		err = errors.Join(<-errs)
	}
	peak, err2 := peakRSS(cmd.Process.Pid)
	if err = errors.Join(err, err2); err != nil {
		return row{}, err
	}
	grown := peak - idle
	return row{
		fmt.Sprintf("peak RSS over idle, release build, no GOMEMLIMIT: %d scrapes at once (the default --web.max-requests) with every label cap filled (~%d series each), %s, %d bursts", concurrentScrapes, series, what, bursts), "< 64 MiB",
		fmt.Sprintf("%.1f MiB (idle %.1f MiB, peak %.1f MiB)", mib(grown), mib(idle), mib(peak)),
		grown < 64<<20,
	}, nil
}
