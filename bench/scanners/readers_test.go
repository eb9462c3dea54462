// SPDX-License-Identifier: Apache-2.0

package scanners

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"

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

// The readers compared: each does the same work on a page (see fold).

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
