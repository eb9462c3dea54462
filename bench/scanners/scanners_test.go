package scanners

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/buger/jsonparser"
	"github.com/bytedance/sonic"
	"github.com/bytedance/sonic/ast"
	"github.com/go-json-experiment/json/jsontext"
	jsoniter "github.com/json-iterator/go"
	"github.com/minio/simdjson-go"
	"github.com/tidwall/gjson"
	"github.com/valyala/fastjson"

	"github.com/global-stability/global_stability_exporter/endpoint"
)

// Each reader does the exporter's work on a page of conflict events: the
// whole body checked to be JSON, every event's six fields handed to the
// exporter's own rules as raw JSON (endpoint.Latitude, endpoint.Name…), the
// valid events folded into a count, the highest escalation and the count
// per category. "ours" is the exporter's reader itself (endpoint.Conflict),
// whose folds do more (cells, mean, newest, repeats): it is not flattered.

var now = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

func config() *endpoint.Config {
	return &endpoint.Config{Now: func() time.Time { return now }, MaxNameBytes: endpoint.DefaultMaxNameBytes}
}

// fieldNames and fieldRules are the event's fields, in List.Item's order.
var fieldNames, fieldRules = func() (names []string, rules []endpoint.Rule) {
	for _, f := range endpoint.Conflict.List.Item {
		names, rules = append(names, f.Name), append(rules, f.Rule)
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

type reader struct {
	name  string
	whole bool // needs the whole body in memory
	read  func(body []byte) (int, error)
	// bench, if set, is read without what only the test needs.
	bench func(body []byte) error
}

var errInvalid = errors.New("not JSON")

// sameFolds is the conflict endpoint with the folds the libraries' readers
// do (a count, the highest escalation, the count per category) and no check
// for repeats: the exporter's scanner and rules doing exactly their work.
var sameFolds = &endpoint.Endpoint{Label: "conflict", Paged: true, List: &endpoint.List{
	Name: "events", Item: endpoint.Conflict.List.Item,
	Folds: []endpoint.Fold{
		endpoint.Count{Metric: endpoint.ConflictEvents},
		endpoint.Max{Metric: endpoint.ConflictEscalationMax, Field: "escalation"},
		endpoint.CountBy{Metric: endpoint.ConflictEventsByCategory, Field: "category"},
	},
}}

func count(col *endpoint.Collection) (int, error) {
	for _, s := range col.Result().Samples {
		if s.Metric == endpoint.ConflictEvents {
			return int(s.Value), nil
		}
	}
	return 0, errors.New("no count")
}

var readers = []reader{
	{"ours (the scanner and the same folds)", false, func(body []byte) (int, error) {
		col := sameFolds.Start(*config())
		if _, err := col.Read(bytes.NewReader(body), 1); err != nil {
			return 0, err
		}
		return count(col)
	}, func(body []byte) error {
		_, err := sameFolds.Start(*config()).Read(bytes.NewReader(body), 1)
		return err
	}},
	{"ours, the exporter's whole reader (endpoint.Conflict: cells, mean, newest, repeats too)", false, func(body []byte) (int, error) {
		col := endpoint.Conflict.Start(*config())
		if _, err := col.Read(bytes.NewReader(body), 1); err != nil {
			return 0, err
		}
		return count(col)
	}, func(body []byte) error {
		// Read, judge and fold; not Result, which emits the series (the
		// others emit none).
		_, err := endpoint.Conflict.Start(*config()).Read(bytes.NewReader(body), 1)
		return err
	}},
	{"jsontext + the token filter (streaming; the exporter before)", false, func(body []byte) (int, error) {
		return readJSONText(newBoundedTokens(bytes.NewReader(body)))
	}, nil},
	{"jsontext alone (streaming; a 16 MiB token held whole)", false, func(body []byte) (int, error) {
		return readJSONText(bytes.NewReader(body))
	}, nil},
	{"encoding/json Decoder.Token (streaming)", false, func(body []byte) (int, error) {
		f := newFold()
		d := json.NewDecoder(bytes.NewReader(body))
		d.UseNumber()
		var events []json.RawMessage
		var doc struct {
			Events *[]json.RawMessage `json:"events"`
		}
		doc.Events = &events
		if err := d.Decode(&doc); err != nil {
			return 0, err
		}
		for _, e := range events {
			var item map[string]json.RawMessage
			if err := json.Unmarshal(e, &item); err != nil {
				continue
			}
			for k, v := range item {
				f.field([]byte(k), v)
			}
			f.item()
		}
		return f.n, nil
	}, nil},
	{"json-iterator (streaming)", false, func(body []byte) (int, error) {
		f := newFold()
		it := jsoniter.Parse(jsoniter.ConfigDefault, bytes.NewReader(body), 16<<10)
		it.ReadObjectCB(func(it *jsoniter.Iterator, key string) bool {
			if key != "events" {
				it.Skip()
				return true
			}
			return it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
				it.ReadObjectCB(func(it *jsoniter.Iterator, key string) bool {
					f.field([]byte(key), it.SkipAndReturnBytes())
					return true
				})
				f.item()
				return true
			})
		})
		if it.Error != nil && it.Error != io.EOF {
			return 0, it.Error
		}
		return f.n, nil
	}, nil},
	{"gjson (whole body, + its Valid)", true, func(body []byte) (int, error) {
		if !gjson.ValidBytes(body) {
			return 0, errInvalid
		}
		f := newFold()
		gjson.GetBytes(body, "events").ForEach(func(_, e gjson.Result) bool {
			e.ForEach(func(k, v gjson.Result) bool {
				f.field([]byte(k.Str), []byte(v.Raw))
				return true
			})
			f.item()
			return true
		})
		return f.n, nil
	}, nil},
	{"jsonparser (whole body, + encoding/json's Valid)", true, func(body []byte) (int, error) {
		if !json.Valid(body) {
			return 0, errInvalid
		}
		f := newFold()
		_, err := jsonparser.ArrayEach(body, func(e []byte, _ jsonparser.ValueType, _ int, _ error) {
			_ = jsonparser.ObjectEach(e, func(k, v []byte, t jsonparser.ValueType, off int) error {
				if t == jsonparser.String {
					v = e[off-len(v)-2 : off]
				}
				f.field(k, v)
				return nil
			})
			f.item()
		}, "events")
		return f.n, err
	}, nil},
	{"fastjson (whole body, validating)", true, func(body []byte) (int, error) {
		var p fastjson.Parser
		v, err := p.ParseBytes(body)
		if err != nil {
			return 0, err
		}
		f := newFold()
		var buf []byte
		for _, e := range v.GetArray("events") {
			o, err := e.Object()
			if err != nil {
				continue
			}
			o.Visit(func(k []byte, v *fastjson.Value) {
				buf = v.MarshalTo(buf[:0]) // the rules take raw JSON
				f.field(k, buf)
			})
			f.item()
		}
		return f.n, nil
	}, nil},
	{"sonic (whole body, JIT on amd64, + its Valid)", true, func(body []byte) (int, error) {
		if !sonic.Valid(body) {
			return 0, errInvalid
		}
		events, err := sonic.Get(body, "events")
		if err != nil {
			return 0, err
		}
		f := newFold()
		err = events.ForEach(func(_ ast.Sequence, e *ast.Node) bool {
			_ = e.ForEach(func(p ast.Sequence, v *ast.Node) bool {
				raw, _ := v.Raw()
				f.field([]byte(*p.Key), []byte(raw))
				return true
			})
			f.item()
			return true
		})
		return f.n, err
	}, nil},
	{"simdjson-go (whole body, SIMD on amd64 only, validating)", true, func(body []byte) (int, error) {
		pj, err := simdjson.Parse(body, nil)
		if err != nil {
			return 0, err
		}
		f := newFold()
		var root, events simdjson.Iter
		var obj simdjson.Object
		var arr simdjson.Array
		iter := pj.Iter()
		iter.AdvanceInto()
		if _, _, err := iter.Root(&root); err != nil {
			return 0, err
		}
		o, err := root.Object(&obj)
		if err != nil {
			return 0, err
		}
		el := o.FindKey("events", nil)
		if el == nil {
			return 0, errors.New("no events")
		}
		events = el.Iter
		a, err := events.Array(&arr)
		if err != nil {
			return 0, err
		}
		var buf []byte
		var item simdjson.Object
		a.ForEach(func(e simdjson.Iter) {
			obj, err := e.Object(&item)
			if err != nil {
				return
			}
			_ = obj.ForEach(func(k []byte, v simdjson.Iter) {
				// Its own encoder marshals the rest of the object: each
				// scalar written back by type instead.
				switch v.Type() {
				case simdjson.TypeString:
					s, _ := v.StringBytes()
					buf = append(append(append(buf[:0], '"'), s...), '"')
				case simdjson.TypeFloat:
					x, _ := v.Float()
					buf = strconv.AppendFloat(buf[:0], x, 'g', -1, 64)
				case simdjson.TypeInt:
					x, _ := v.Int()
					buf = strconv.AppendInt(buf[:0], x, 10)
				default:
					buf = append(buf[:0], "[]"...)
				}
				f.field(k, buf)
			}, nil)
			f.item()
		})
		return f.n, nil
	}, nil},
}

// readJSONText reads a page with jsontext, a token at a time.
func readJSONText(r io.Reader) (int, error) {
	f := newFold()
	d := jsontext.NewDecoder(r, jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true))
	if _, err := d.ReadToken(); err != nil {
		return 0, err
	}
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return 0, err
		}
		if name.String() != "events" {
			if err := d.SkipValue(); err != nil {
				return 0, err
			}
			continue
		}
		if _, err := d.ReadToken(); err != nil {
			return 0, err
		}
		for d.PeekKind() == '{' {
			d.ReadToken()
			for d.PeekKind() != '}' {
				k, err := d.ReadValue()
				if err != nil {
					return 0, err
				}
				i := f.index(bytes.Trim(k, `"`)) // k is valid until the next read
				v, err := d.ReadValue()
				if err != nil {
					return 0, err
				}
				f.judge(i, v)
			}
			d.ReadToken()
			f.item()
		}
		if _, err := d.ReadToken(); err != nil {
			return 0, err
		}
	}
	_, err := d.ReadToken()
	return f.n, err
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
