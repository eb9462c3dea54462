// SPDX-License-Identifier: Apache-2.0

package collector_test

import (
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/global-stability/global_stability_exporter/simulator"
)

// liveHeap is the runtime's own count of live heap bytes, after a
// collection so that only what is reachable counts.
func liveHeap() uint64 {
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// bigPage streams a valid conflict page of about size bytes that is mostly
// one long string, without holding it: the test's own memory stays out of
// what it measures.
type bigPage struct{ size int }

func (p bigPage) write(w io.Writer) {
	fmt.Fprint(w, `{"events":[{"id":"e1","lat":1,"lon":1,"category":"riot","escalation":0.5,"occurred_at":"2026-11-22T00:00:00Z","actors":["`)
	chunk := []byte(strings.Repeat("x", 64<<10))
	for n := 0; n < p.size; n += len(chunk) {
		if _, err := w.Write(chunk[:min(len(chunk), p.size-n)]); err != nil {
			return
		}
	}
	fmt.Fprint(w, `"]}],"next_cursor":null}`)
}

// TestTheHeapReturnsAfterALargePage: a scrape whose conflict page is 16 MiB
// of one string leaves nothing of it behind: after a few ordinary scrapes
// the live heap is back where it was before (the runtime's own count).
func TestTheHeapReturnsAfterALargePage(t *testing.T) {
	inBubble(t, func(t *testing.T) {
		var big atomic.Bool
		sim := simulator.New(simulator.Config{Key: testKey})
		upstream := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/v1/conflict" && big.Load() {
				w.Header().Set("Content-Type", "application/json")
				bigPage{size: 16<<20 - 1024}.write(w)
				return
			}
			sim.ServeHTTP(w, r)
		})
		e := newEnv(t, simulator.Config{}, upstream)
		for range 3 {
			e.scrape(t, "")
		}
		idle := liveHeap()

		big.Store(true)
		_, body := e.scrape(t, "")
		if v := series(t, body)[`global_stability_conflict_events`]; v != 1 {
			t.Fatalf("the large page was not read: events %v\n%s\n%s", v, body, e.logs)
		}
		big.Store(false)
		for range 3 {
			e.scrape(t, "")
		}
		if after := liveHeap(); after > idle+4<<20 {
			t.Errorf("live heap %d KiB after a 16 MiB page and three scrapes, %d KiB before: something of the page is still held", after>>10, idle>>10)
		}
	})
}
