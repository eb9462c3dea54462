package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// capsFilled is an upstream that fills every label cap of the exporter's
// defaults a little past the cap: each drilldown has 1.1 times
// --collector.max-label-values distinct indicators, and one page of events
// spreads over every cell of the default 5° grid (2,592) and 1.1 times the
// cap of categories. Each scrape's exposition then holds the most series
// the defaults allow (about 7,000), which is what concurrent scrapes
// render.
type capsFilled struct {
	docs    map[string][]byte
	latency time.Duration
}

func newCapsFilled(latency time.Duration) *capsFilled {
	over := endpoint.DefaultMaxLabelValues * 11 / 10
	c := &capsFilled{docs: map[string][]byte{}, latency: latency}
	c.docs[endpoint.Overview.Label] = []byte(`{"score":50,"trend":"stable","pillars":{"conflict":1,"cyber":2,"supply_chain":3,"macro":4},"as_of":"` + now() + `"}`)
	for _, p := range endpoint.Pillars {
		var b bytes.Buffer
		fmt.Fprintf(&b, `{"pillar":%q,"delta_24h":1,"as_of":%q,"indicators":[`, p, now())
		for i := range over {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"key":"indicator_with_a_plausible_name_%d","value":%d.5}`, i, i)
		}
		b.WriteString(`]}`)
		c.docs[endpoint.Drilldown(p).Label] = b.Bytes()
	}
	var b bytes.Buffer
	b.WriteString(`{"events":[`)
	i := 0
	for lat := -87.5; lat < 90; lat += endpoint.DefaultGridDegrees {
		for lon := -177.5; lon < 180; lon += endpoint.DefaultGridDegrees {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"id":"evt_%d","lat":%g,"lon":%g,"actors":["a"],"category":"category_%d","escalation":0.%d,"occurred_at":%q}`,
				i, lat, lon, i%over, i%10, now())
			i++
		}
	}
	b.WriteString(`],"next_cursor":null}`)
	c.docs[endpoint.Conflict.Label] = b.Bytes()
	c.docs[endpoint.BriefingsList.Label] = []byte(`{"briefings":[{"id":"brf_1","headline":"h","summary":"s","tags":[],"published_at":"` + now() + `"}],"next_cursor":null}`)
	c.docs[endpoint.Summary.Label] = []byte(`{"summary":"s","as_of":"` + now() + `"}`)
	return c
}

func (c *capsFilled) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok := c.docs[strings.TrimPrefix(r.URL.Path, "/v1/")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	time.Sleep(c.latency) // so that every scrape of a burst overlaps
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// concurrentScrapes is how many scrapes a burst sends at once: the
// default of --web.max-requests, the most the exporter serves at once.
const concurrentScrapes = 40

// capsFilledRow sends bursts of concurrentScrapes scrapes at once to an
// exporter with default flags against capsFilled, and reports its peak
// RSS over idle.
func capsFilledRow(exporterBin string) (row, error) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	upstream, err := serveHandler(ctx, newCapsFilled(200*time.Millisecond))
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
	const bursts = 3
	var series int
	for range bursts {
		if err != nil {
			break
		}
		var wg sync.WaitGroup
		errs := make(chan error, concurrentScrapes)
		for range concurrentScrapes {
			wg.Go(func() {
				body, err := e.scrape()
				if err != nil {
					errs <- err
					return
				}
				if n := strings.Count(body, "\nglobal_stability_"); n > series {
					series = n // racy but only a figure for the row
				}
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
		fmt.Sprintf("peak RSS over idle, %d scrapes at once (the default --web.max-requests) with every label cap filled (~%d series each), %d bursts", concurrentScrapes, series, bursts), "< 64 MiB",
		fmt.Sprintf("%.1f MiB (idle %.1f MiB, peak %.1f MiB)", mib(grown), mib(idle), mib(peak)),
		grown < 64<<20,
	}, nil
}
