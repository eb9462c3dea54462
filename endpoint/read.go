package endpoint

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/global-stability/global_stability_exporter/client"
)

// Collection is one collection of an endpoint in progress: every page of
// it is read into it, one value at a time; Result says what it gives.
type Collection struct {
	e      *Endpoint
	c      Config
	fields []fieldState // by index of e.Fields, for the current document
	folds  []folding
	unique int                 // index of List.Unique in List.Item
	seen   map[uint64]struct{} // fingerprints of List.Unique values in this walk
	result Result
}

type fieldState struct {
	seen bool
	v    Value
	bad  string
}

// maxRemembered bounds the values of List.Unique a walk remembers: 8 bytes
// each in a set, a few MiB at most, far past any plausible page count times
// page size. Past it, later items are no longer checked.
const maxRemembered = 250_000

// Start begins a collection of e.
func (e *Endpoint) Start(c Config) *Collection {
	col := &Collection{e: e, c: c.withDefaults(), seen: map[uint64]struct{}{}}
	if e.List != nil {
		for _, f := range e.List.Folds {
			col.folds = append(col.folds, f.start(e.List, col.c))
		}
		if e.List.Unique != "" {
			col.unique = e.List.itemIndex(e.List.Unique)
		}
	}
	return col
}

// Read reads one document (page counts from 1 on a paged endpoint, 0
// otherwise) into the collection and returns its next_cursor. An error
// means the body is not the document the spec describes: discard the
// collection. Of a repeated key, the last counts.
func (col *Collection) Read(r io.Reader, page int) (next string, err error) {
	return col.readWith(newScanner(r), page)
}

func (col *Collection) readWith(s *scanner, page int) (next string, err error) {
	e := col.e
	col.fields = make([]fieldState, len(e.Fields))
	c, err := s.peek()
	switch {
	case err != nil:
		return "", err
	case c == 0:
		return "", fmt.Errorf("%w: empty body", client.ErrNotJSON)
	case c != '{':
		if c != '[' {
			if _, err := s.value(); err != nil {
				return "", err
			}
		}
		return "", &client.DecodeError{Field: "(body)", Err: fmt.Errorf("got JSON %s where an object is due", kindName(kindOf(c)))}
	}
	var haveList, haveNext bool
	err = s.members(func(name []byte) (err error) {
		switch {
		case e.List != nil && string(name) == e.List.Name:
			if haveList {
				return &client.DecodeError{Field: e.List.Name, Err: errors.New("appears twice")}
			}
			haveList = true
			return col.readList(s, page)
		case e.Paged && string(name) == "next_cursor":
			haveNext = true
			next, err = readCursor(s)
			return err
		case col.isObject(name):
			return col.readObject(s, string(name))
		}
		return col.readField(s, string(name), string(name))
	})
	if err != nil {
		return "", err
	}
	switch c, err := s.peek(); {
	case err != nil:
		return "", err
	case c != 0:
		return "", syntax("data after the JSON document")
	}
	switch {
	case e.Paged && !haveList:
		return "", &client.DecodeError{Field: e.List.Name, Err: errors.New("missing or null")}
	case e.Paged && !haveNext:
		return "", &client.DecodeError{Field: "next_cursor", Err: errors.New("missing (null is the way to say there are no more pages)")}
	case e.List != nil && !haveList:
		col.result.Invalid.add(e.List.Name, e.List.Name+": missing")
	}
	for i, f := range e.Fields {
		st := &col.fields[i]
		switch {
		case f.Metric == nil:
		case !st.seen:
			col.result.Invalid.add(f.counted(), f.Name+": missing")
		case st.bad != "":
			col.result.Invalid.add(f.counted(), f.Name+": "+st.bad)
		}
	}
	return next, nil
}

// readField judges the value of the document's field path (key, or a.b
// for a member of object a), or skips it if the endpoint reads no such
// field.
func (col *Collection) readField(s *scanner, key, path string) error {
	i := col.fieldIndex(path)
	if i < 0 {
		return s.skip()
	}
	raw, err := s.value()
	if err != nil {
		return err
	}
	f := col.e.Fields[i]
	v, bad := f.Rule(raw, &col.c)
	col.fields[i] = fieldState{seen: true, v: v, bad: bad}
	if f.Must != "" && bad == "" && v.Str != f.Must {
		return &client.DecodeError{Field: key, Err: fmt.Errorf("names %q, not the one asked for, %q", v.Str, f.Must)}
	}
	return nil
}

func (col *Collection) fieldIndex(path string) int {
	for i, f := range col.e.Fields {
		if f.Name == path {
			return i
		}
	}
	return -1
}

// isObject reports whether the endpoint reads members of an object key.
func (col *Collection) isObject(key []byte) bool {
	for _, f := range col.e.Fields {
		if object, _, ok := strings.Cut(f.Name, "."); ok && object == string(key) {
			return true
		}
	}
	return false
}

// readObject reads object key's members; a value that is not an object
// makes each member the endpoint reads bad, for the same reason.
func (col *Collection) readObject(s *scanner, key string) error {
	members := func(fn func(i int)) {
		for i, f := range col.e.Fields {
			if strings.HasPrefix(f.Name, key+".") {
				fn(i)
			}
		}
	}
	members(func(i int) { col.fields[i] = fieldState{} }) // the last occurrence of key counts
	if c, err := s.peek(); err != nil || c != '{' {
		raw, err := s.value()
		if err != nil {
			return err
		}
		members(func(i int) { col.fields[i] = fieldState{seen: true, bad: wrongType(raw, "an object")} })
		return nil
	}
	return s.members(func(name []byte) error { return col.readField(s, key, key+"."+string(name)) })
}

// maxCursorBytes bounds a next_cursor: it goes back in a URL.
const maxCursorBytes = 4096

// readCursor reads next_cursor: null or "" (no more pages), a string
// (passed back verbatim) or a number (as its literal text); the spec
// leaves its format open.
func readCursor(s *scanner) (string, error) {
	raw, err := s.value()
	if err != nil {
		return "", err
	}
	switch raw.Kind() {
	case 'n':
		return "", nil
	case '"', '0':
		text := raw
		if raw.Kind() == '"' {
			text = unquote(raw)
		}
		if len(text) > maxCursorBytes {
			return "", &client.DecodeError{Field: "next_cursor", Err: fmt.Errorf("longer than %d bytes", maxCursorBytes)}
		}
		return string(text), nil
	}
	return "", &client.DecodeError{Field: "next_cursor", Err: errors.New("want a string, a number or null")}
}

// notJSON marks a syntax error as the body not being JSON (nil stays nil).
func notJSON(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %w", client.ErrNotJSON, err)
}

// kindOf is the kind of the JSON value that starts with c.
func kindOf(c byte) jsontext.Kind { return jsontext.Value{c}.Kind() }

func kindName(k jsontext.Kind) string {
	return map[jsontext.Kind]string{'n': "null", 't': "bool", 'f': "bool", '"': "string", '0': "number", '{': "object", '[': "array"}[k]
}
