// SPDX-License-Identifier: Apache-2.0

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/internal/testutil/promtext"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// Group 9: the memory of every shape an upstream can choose within the
// default body limits. The near-limit row of group 5 fills
// bodies with many ordinary values; a hostile upstream can instead make a
// body mostly one long string (in a field the exporter reads, or one it
// skips), many tiny items, nesting to the decoder's depth limit, long
// names, numbers of maximal length, a body cut at the limit, or all of it
// on every endpoint at once. Each row runs the release build (as `make
// build` makes it) with no GOMEMLIMIT in its environment, against an
// upstream whose every endpoint, from the descriptions, answers in that
// shape, and checks that exactly the endpoints the row expects to fail
// fail: a fixture that silently 404s an endpoint it does not know would
// make a row measure less than it says.

// shape is how one row's upstream answers.
type shape struct {
	name string
	// doc is the body of a document endpoint: base (the simulator's
	// answer) with the shape worked in, at most limit bytes.
	doc func(e *endpoint.Endpoint, base []byte, limit int) []byte
	// page is the body of a page of a paged endpoint, at most limit bytes.
	page func(e *endpoint.Endpoint, base []byte, limit int) []byte
	// pages of each paged endpoint; a cut body is one page.
	pages int
	// cut sends this many bytes for the conflict endpoint's page, more
	// than its limit: the exporter must stop reading at the limit.
	cut int
	// fails lists the endpoints the row expects to fail.
	fails []string
}

// margin keeps a body under its limit once the shape is worked in.
const margin = 4 << 10

// withField inserts `"name":value,` after the first '{' of body.
func withField(body []byte, name string, value []byte) []byte {
	i := bytes.IndexByte(body, '{')
	var b bytes.Buffer
	b.Grow(len(body) + len(name) + len(value) + 8)
	b.Write(body[:i+1])
	b.WriteString(strconv.Quote(name) + ":")
	b.Write(value)
	b.WriteByte(',')
	b.Write(body[i+1:])
	return b.Bytes()
}

// fill is n bytes of unit repeated, cut to a whole unit.
func fill(unit string, n int) []byte {
	return bytes.Repeat([]byte(unit), max(n, 0)/len(unit))
}

// longString is a JSON string of about n bytes.
func longString(n int) []byte { return append(append([]byte{'"'}, fill("x", n-2)...), '"') }

// readFields matches a string value of a field the endpoint's description
// reads and needs, but none that must hold one value (a drilldown's
// pillar: another would make the answer the wrong one, not a long string).
func readFields(e *endpoint.Endpoint) *regexp.Regexp {
	var names []string
	fields := e.Fields
	if e.List != nil {
		fields = append(slices.Clone(fields), e.List.Item...)
	}
	for _, f := range fields {
		if f.Must == "" && !f.Optional {
			_, member, nested := strings.Cut(f.Name, ".")
			if !nested {
				member = f.Name
			}
			names = append(names, regexp.QuoteMeta(member))
		}
	}
	return regexp.MustCompile(`"(` + strings.Join(names, "|") + `)":"[^"]*"`)
}

// replaceRead makes the first string value of a field e reads a long
// string; a body with none gets the string in a field it skips.
func replaceRead(e *endpoint.Endpoint, body []byte, limit int) []byte {
	loc := readFields(e).FindIndex(body)
	if loc == nil {
		return withField(body, "padding", longString(limit-len(body)-margin))
	}
	name := body[loc[0] : bytes.IndexByte(body[loc[0]+1:], '"')+loc[0]+2]
	var b bytes.Buffer
	b.Write(body[:loc[0]])
	b.Write(name)
	b.WriteByte(':')
	b.Write(longString(limit - len(body) - margin))
	b.Write(body[loc[1]:])
	return b.Bytes()
}

// inList inserts items at the start of the page's list.
func inList(e *endpoint.Endpoint, body, items []byte) []byte {
	open := []byte(strconv.Quote(e.List.Name) + ":[")
	i := bytes.Index(body, open) + len(open)
	var b bytes.Buffer
	b.Write(body[:i])
	b.Write(items)
	if body[i] != ']' {
		b.WriteByte(',')
	}
	b.Write(body[i:])
	return b.Bytes()
}

// nested is deep arrays, each `depth` levels, side by side, about n bytes.
func nested(n, depth int) []byte {
	one := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	var b bytes.Buffer
	b.WriteByte('[')
	for b.Len()+len(one)+2 < n {
		if b.Len() > 1 {
			b.WriteByte(',')
		}
		b.WriteString(one)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// manyNames makes the first list of names (an event's actors) of the page
// one array of distinct names, about the page's limit: an item keeps its
// first 32, the rest are skipped and counted. A page without one gets the
// bytes as a long string in a field it skips.
func manyNames(e *endpoint.Endpoint, base []byte, limit int) []byte {
	for _, f := range e.List.Item {
		open := []byte(strconv.Quote(f.Name) + ":[")
		if !f.Each || !bytes.Contains(base, open) {
			continue
		}
		var names bytes.Buffer
		for i := 0; names.Len() < limit-len(base)-margin; i++ {
			fmt.Fprintf(&names, `"name %d",`, i)
		}
		// The item's own array follows, as a field no description reads.
		return bytes.Replace(base, open, append(append(open, names.Bytes()...), `"last"],"skipped":[`...), 1)
	}
	return withField(base, "padding", longString(limit-len(base)-margin))
}

// maxDepth stays under jsontext's nesting limit (10,000), counting the
// body's own levels.
const maxDepth = 9990

var shapes = []shape{
	{name: "one long string in a field the exporter reads", pages: nearLimitPages,
		doc:  func(e *endpoint.Endpoint, base []byte, limit int) []byte { return replaceRead(e, base, limit) },
		page: func(e *endpoint.Endpoint, base []byte, limit int) []byte { return replaceRead(e, base, limit) }},
	{name: "one long string in a field it skips", pages: nearLimitPages,
		doc: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, "padding", longString(limit-len(base)-margin))
		},
		page: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, "padding", longString(limit-len(base)-margin))
		}},
	{name: "many tiny items (`{}`, each left out and counted)", pages: nearLimitPages,
		doc: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, "padding", append(append([]byte{'['}, fill("{},", limit-len(base)-margin)...), '{', '}', ']'))
		},
		page: func(e *endpoint.Endpoint, base []byte, limit int) []byte {
			return inList(e, base, append(fill("{},", limit-len(base)-margin), '{', '}'))
		}},
	{name: "nesting to the decoder's depth limit", pages: nearLimitPages,
		doc: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, "padding", nested(limit-len(base)-margin, maxDepth))
		},
		page: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, "padding", nested(limit-len(base)-margin, maxDepth))
		}},
	{name: "one long name", pages: nearLimitPages,
		doc: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, string(fill("n", limit-len(base)-margin)), []byte("1"))
		},
		page: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, string(fill("n", limit-len(base)-margin)), []byte("1"))
		}},
	{name: "one number of maximal length", pages: nearLimitPages,
		doc: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, "padding", append([]byte("1."), fill("7", limit-len(base)-margin)...))
		},
		page: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, "padding", append([]byte("-9"), fill("9", limit-len(base)-margin)...))
		}},
	{name: "one item per page naming a page's worth of distinct names", pages: nearLimitPages,
		doc: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			return withField(base, "padding", longString(limit-len(base)-margin))
		},
		page: manyNames},
	{name: "a 200 MB conflict page, cut at the limit (the endpoint fails, as it must)", pages: 1, cut: 200 << 20, fails: []string{endpoint.Conflict.Label},
		doc:  func(_ *endpoint.Endpoint, base []byte, _ int) []byte { return base },
		page: func(_ *endpoint.Endpoint, base []byte, _ int) []byte { return base }},
	{name: "every endpoint at once, each body one long string in a field it skips, a blank run and a long name", pages: nearLimitPages,
		doc: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			third := (limit - len(base) - margin) / 3
			return withField(withField(withField(base, "padding", longString(third)), "blank", append(fill(" ", third), '1')), string(fill("n", third)), []byte("2"))
		},
		page: func(_ *endpoint.Endpoint, base []byte, limit int) []byte {
			third := (limit - len(base) - margin) / 3
			return withField(withField(withField(base, "padding", longString(third)), "blank", append(fill(" ", third), '1')), string(fill("n", third)), []byte("2"))
		}},
}

// shapedAPI answers every endpoint of the descriptions in one shape.
type shapedAPI struct {
	shape shape
	docs  map[string][]byte   // by endpoint label
	pages map[string][][]byte // by endpoint label
}

func newShapedAPI(s shape) (*shapedAPI, error) {
	sim := simulator.New(simulator.Config{Key: benchKey, Seed: 1, Events: 40, PageSize: 40, Briefings: 10})
	api := &shapedAPI{shape: s, docs: map[string][]byte{}, pages: map[string][][]byte{}}
	for _, e := range endpoint.All() {
		req := httptest.NewRequest(http.MethodGet, "/v1/"+e.Label, nil)
		req.Header.Set("Authorization", "Bearer "+benchKey)
		rec := httptest.NewRecorder()
		sim.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			return nil, fmt.Errorf("the simulator does not serve %s (%d): the shapes need a healthy body of every endpoint", e.Label, rec.Code)
		}
		base := rec.Body.Bytes()
		if !e.Paged {
			api.docs[e.Label] = s.doc(e, base, client.DefaultMaxDocumentBytes)
			continue
		}
		base = regexp.MustCompile(`"next_cursor":[^,}]*`).ReplaceAll(base, []byte(`"next_cursor":null`))
		for p := range s.pages {
			body := s.page(e, base, client.DefaultMaxResponseBytes)
			if p < s.pages-1 {
				body = bytes.Replace(body, []byte(`"next_cursor":null`), []byte(`"next_cursor":"`+strconv.Itoa(p+1)+`"`), 1)
			}
			api.pages[e.Label] = append(api.pages[e.Label], body)
		}
	}
	return api, nil
}

func (a *shapedAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	label := strings.TrimPrefix(r.URL.Path, "/v1/")
	w.Header().Set("Content-Type", "application/json")
	if a.shape.cut > 0 && label == endpoint.Conflict.Label {
		chunk := bytes.Repeat([]byte(`{"id":"e","lat":1,"lon":1,"category":"c","escalation":0.5,"occurred_at":"2026-01-01T00:00:00Z"},`), 1<<10)
		_, _ = io.WriteString(w, `{"events":[`)
		for n := 0; n < a.shape.cut; n += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
		return
	}
	if body, ok := a.docs[label]; ok {
		_, _ = w.Write(body)
		return
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("cursor"))
	if pages, ok := a.pages[label]; ok && page < len(pages) {
		_, _ = w.Write(pages[page])
		return
	}
	// Every endpoint of the descriptions is served above: a request for
	// anything else is the bench's own mistake.
	http.Error(w, "the bench's shaped API serves no "+label, http.StatusTeapot)
}

// buildRelease builds the exporter in tree as `make build` does: static,
// stripped, the release's own flags; into dir, named name.
func buildRelease(tree, dir, name string) (string, error) {
	bin := filepath.Join(dir, name)
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags", "-s -w", "-o", bin, ".")
	cmd.Dir = tree
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("release build: %w\n%s", err, out)
	}
	return bin, nil
}

// withoutGOMEMLIMIT is the environment without GOMEMLIMIT: the rows hold
// for a release archive, the systemd unit and docker run, which set none.
func withoutGOMEMLIMIT(env []string) []string {
	return slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, "GOMEMLIMIT=") })
}

// shapeRows runs every shape and reports each one's peak RSS over idle;
// with a base binary (built at -base), the same for it beside.
func shapeRows(releaseBin, baseBin, base string) ([]row, error) {
	var rows []row
	for _, s := range shapes {
		r, err := shapeRow(releaseBin, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		if baseBin != "" {
			b, err := shapeRow(baseBin, s)
			if err != nil {
				r.result += fmt.Sprintf("; %s: %v", base, err)
			} else {
				r.result += fmt.Sprintf("; %s: %s", base, b.result)
			}
		}
		rows = append(rows, r)
	}
	return rows, nil
}

func shapeRow(bin string, s shape) (row, error) {
	api, err := newShapedAPI(s)
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
	cmd := exec.Command(bin, "--api.url=http://"+upstream, "--web.listen-address="+addr, "--log.level=error", "--api.timeout=60s")
	cmd.Env = append(withoutGOMEMLIMIT(os.Environ()), "GLOBAL_STABILITY_API_KEY="+benchKey, "GLOBAL_STABILITY_API_SUMMARY_REFRESH_INTERVAL=0s", "GLOBAL_STABILITY_API_HTTP_CACHE=false")
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
		body, err = e.scrapeWithTimeout(60)
		walls = append(walls, time.Since(start))
		if err == nil {
			err = checkFailures(body, s.fails)
		}
	}
	peak, err2 := peakRSS(cmd.Process.Pid)
	if err = errors.Join(err, err2); err != nil {
		return row{}, err
	}
	grown := peak - idle
	slices.Sort(walls)
	return row{
		"peak RSS over idle, release build, no GOMEMLIMIT: " + s.name + ", every endpoint at its default limit, 3 scrapes", "< 64 MiB",
		fmt.Sprintf("%.1f MiB (idle %.1f MiB, peak %.1f MiB; median scrape %s)", mib(grown), mib(idle), mib(peak), walls[len(walls)/2].Round(time.Millisecond)),
		grown < 64<<20,
	}, nil
}

// checkFailures wants exactly the endpoints of fails to have failed.
func checkFailures(body string, fails []string) error {
	samples, err := promtext.Parse(body)
	if err != nil {
		return err
	}
	for _, e := range endpoint.All() {
		v, ok := samples.Get("global_stability_scrape_success", "endpoint", e.Label)
		if want := !slices.Contains(fails, e.Label); !ok || (v == 1) != want {
			return fmt.Errorf("endpoint %s: scrape_success %v (present %v), want success %v: the row would not measure what it says", e.Label, v, ok, want)
		}
	}
	return nil
}
