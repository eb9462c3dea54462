// SPDX-License-Identifier: Apache-2.0

package scanners

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Each reader does the exporter's work on a page of conflict events: the
// whole body checked to be JSON, every event's six fields handed to the
// exporter's own rules as raw JSON (endpoint.Latitude, endpoint.LabelValue…), the
// valid events folded into a count, the highest escalation and the count
// per category. "ours" is the exporter's reader itself (endpoint.Conflict),
// whose folds do more (actors, cells, mean, newest, repeats): it is not flattered.

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func config() *endpoint.Config {
	return &endpoint.Config{Now: func() time.Time { return now }}
}

// fieldNames and fieldRules are the event's one-value fields, in List.Item's
// order; the actors, a list judged element by element, are skipped as an
// unknown field is.
var fieldNames, fieldRules = func() (names []string, rules []endpoint.Rule) {
	for _, f := range endpoint.Conflict.List.Item {
		if !f.Each {
			names, rules = append(names, f.Name), append(rules, f.Rule)
		}
	}
	return names, rules
}()

type fold struct {
	c          *endpoint.Config
	seen       [6]bool
	bad        [6]string
	v          [6]endpoint.Value
	n          int
	max        float64
	categories map[string]int
}

func newFold() *fold { return &fold{c: config(), categories: map[string]int{}} }

// field judges one field of the current item by its rule, at once: a raw
// token is valid only until the reader's next step.
func (f *fold) field(name []byte, raw []byte) { f.judge(f.index(name), raw) }

func (f *fold) index(name []byte) int {
	for i, n := range fieldNames {
		if string(name) == n {
			return i
		}
	}
	return -1
}

func (f *fold) judge(i int, raw []byte) {
	if i >= 0 {
		f.v[i], f.bad[i] = fieldRules[i](raw, f.c)
		f.seen[i] = true
	}
}

// item folds the current item if its required fields are valid.
func (f *fold) item() {
	ok := true
	for i := range f.seen {
		ok = ok && (i == 0 || f.seen[i] && f.bad[i] == "") // the id is optional
	}
	if ok {
		f.n++
		f.max = max(f.max, f.v[4].Num)
		f.categories[f.v[3].Str]++
	}
	f.seen = [6]bool{}
}

// page is a conflict page of n events spread over the globe, as the bench
// harness's upstream serves them.
func page(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"events":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id":"evt_%d","lat":%g,"lon":%g,"actors":["a","b"],"category":"category_%d","escalation":0.%d,"occurred_at":"2026-11-22T%02d:%02d:00Z"}`,
			i, -87.5+5*float64(i/72%36), -177.5+5*float64(i%72), i%12, i%10, i/60%12, i%60)
	}
	b.WriteString(`],"next_cursor":null}`)
	return []byte(b.String())
}

const worst = 16 << 20

// bodies are ordinary pages and the worst shapes within the page limit.
var bodies = []struct {
	name string
	body []byte
	n    int
}{
	{"1k events", page(1000), 1000},
	{"10k events", page(10000), 10000},
	{"16 MiB: one skipped string", []byte(`{"events":[],"next_cursor":null,"x":"` + strings.Repeat("x", worst) + `"}`), 0},
	{"16 MiB: tiny items", []byte(`{"events":[` + strings.Repeat("{},", worst/3) + `{}],"next_cursor":null}`), 0},
	{"16 MiB: deep nesting", []byte(`{"events":[],"next_cursor":null,"x":[` + strings.Repeat(strings.Repeat("[", 9990)+strings.Repeat("]", 9990)+",", worst/19981) + `[]]}`), 0},
	{"16 MiB: one long number", []byte(`{"events":[],"next_cursor":null,"x":1` + strings.Repeat("0", worst) + `}`), 0},
}

// TestReadersAgree: every reader counts every event of the ordinary pages
// and reads the worst shapes, so the benchmarks compare the same work.
func TestReadersAgree(t *testing.T) {
	for _, b := range bodies {
		for _, r := range readers {
			n, err := r.read(b.body)
			if err != nil || n != b.n {
				t.Logf("%s, %s: %d events, %v", b.name, r.name, n, err)
			}
		}
	}
}

// BenchmarkReaders: CPU and allocation per body of each reader; a whole-body
// reader also holds the body itself (its size is in MB/s's denominator).
func BenchmarkReaders(b *testing.B) {
	for _, body := range bodies {
		for _, r := range readers {
			b.Run(body.name+"/"+r.name, func(b *testing.B) {
				if _, err := r.read(body.body); err != nil {
					b.Skipf("fails: %v", err)
				}
				b.SetBytes(int64(len(body.body)))
				b.ReportAllocs()
				for b.Loop() {
					if r.bench != nil {
						_ = r.bench(body.body)
					} else {
						_, _ = r.read(body.body)
					}
				}
			})
		}
	}
}
