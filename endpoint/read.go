package endpoint

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
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
	quoted []string            // the names of List.Item as JSON writes them
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
		for _, f := range e.List.Item {
			col.quoted = append(col.quoted, strconv.Quote(f.Name))
		}
		if e.List.Unique != "" {
			col.unique = e.List.itemIndex(e.List.Unique)
		}
	}
	return col
}

// decoderOptions keep the exporter lenient where JSON readers differ:
// invalid UTF-8 in a string is replaced, not refused, and of a repeated
// key the last counts (and no set of names is kept per object, which a
// hostile object of a million keys would make large).
var decoderOptions = []jsontext.Options{jsontext.AllowInvalidUTF8(true), jsontext.AllowDuplicateNames(true)}

// Read reads one document (page counts from 1 on a paged endpoint, 0
// otherwise) into the collection and returns its next_cursor. An error
// means the body is not the document the spec describes: discard the
// collection.
func (col *Collection) Read(r io.Reader, page int) (next string, err error) {
	e := col.e
	d := jsontext.NewDecoder(newBoundedTokens(r), decoderOptions...)
	col.fields = make([]fieldState, len(e.Fields))
	tok, err := d.ReadToken()
	switch {
	case errors.Is(err, io.EOF):
		return "", fmt.Errorf("%w: empty body", client.ErrNotJSON)
	case err != nil:
		return "", notJSON(err)
	case tok.Kind() != '{':
		return "", &client.DecodeError{Field: "(body)", Err: fmt.Errorf("got JSON %s where an object is due", kindName(tok.Kind()))}
	}
	var haveList, haveNext bool
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return "", notJSON(err)
		}
		key := name.String()
		switch {
		case e.List != nil && key == e.List.Name:
			if haveList {
				return "", &client.DecodeError{Field: key, Err: errors.New("appears twice")}
			}
			haveList = true
			err = col.readList(d, page)
		case e.Paged && key == "next_cursor":
			haveNext = true
			next, err = readCursor(d)
		case col.isObject(key):
			err = col.readObject(d, key)
		default:
			err = col.readField(d, key, key)
		}
		if err != nil {
			return "", err
		}
	}
	if _, err := d.ReadToken(); err != nil { // the closing brace
		return "", notJSON(err)
	}
	if _, err := d.ReadToken(); !errors.Is(err, io.EOF) {
		if err == nil {
			err = errors.New("data after the JSON document")
		}
		return "", notJSON(err)
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
func (col *Collection) readField(d *jsontext.Decoder, key, path string) error {
	i := col.fieldIndex(path)
	if i < 0 {
		return skip(d)
	}
	raw, err := d.ReadValue()
	if err != nil {
		return notJSON(err)
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
func (col *Collection) isObject(key string) bool {
	for _, f := range col.e.Fields {
		if strings.HasPrefix(f.Name, key+".") {
			return true
		}
	}
	return false
}

// readObject reads object key's members; a value that is not an object
// makes each member the endpoint reads bad, for the same reason.
func (col *Collection) readObject(d *jsontext.Decoder, key string) error {
	members := func(fn func(i int)) {
		for i, f := range col.e.Fields {
			if strings.HasPrefix(f.Name, key+".") {
				fn(i)
			}
		}
	}
	members(func(i int) { col.fields[i] = fieldState{} }) // the last occurrence of key counts
	if d.PeekKind() != '{' {
		raw, err := d.ReadValue()
		if err != nil {
			return notJSON(err)
		}
		members(func(i int) { col.fields[i] = fieldState{seen: true, bad: wrongType(raw, "an object")} })
		return nil
	}
	if _, err := d.ReadToken(); err != nil {
		return notJSON(err)
	}
	for d.PeekKind() != '}' {
		name, err := d.ReadToken()
		if err != nil {
			return notJSON(err)
		}
		if err := col.readField(d, key, key+"."+name.String()); err != nil {
			return err
		}
	}
	_, err := d.ReadToken()
	return notJSON(err)
}

// readList reads the items of the list one at a time: each is judged field
// by field, then folded, or left out and counted if a required field is
// bad. The list of a paged endpoint must be an array; another one that is
// not is a bad value.
func (col *Collection) readList(d *jsontext.Decoder, page int) error {
	l := col.e.List
	if d.PeekKind() != '[' {
		raw, err := d.ReadValue()
		if err != nil {
			return notJSON(err)
		}
		if col.e.Paged {
			return &client.DecodeError{Field: l.Name, Err: errors.New(wrongType(raw, "an array"))}
		}
		col.result.Invalid.add(l.Name, l.Name+": "+wrongType(raw, "an array"))
		return nil
	}
	if _, err := d.ReadToken(); err != nil {
		return notJSON(err)
	}
	item := make([]fieldState, len(l.Item))
	values := make([]Value, len(l.Item))
	for i := 0; d.PeekKind() != ']'; i++ {
		fault, err := col.readItem(d, item)
		if err != nil {
			return err
		}
		if fault.bad() {
			// Only the first is described: a page of a million bad items
			// costs a count each, not a message each.
			if col.result.Invalid.count(l.Name) {
				col.result.Invalid.First = l.Name + "[" + strconv.Itoa(i) + "]" + fault.String()
				if page > 0 {
					col.result.Invalid.First += " (page " + strconv.Itoa(page) + ")"
				}
			}
			continue
		}
		if col.repeated(item) {
			col.result.Duplicates++
			continue
		}
		for j := range item {
			values[j] = item[j].v
		}
		for _, f := range col.folds {
			f.add(values)
		}
	}
	_, err := d.ReadToken()
	return notJSON(err)
}

// itemFault says what makes an item unusable, without building the text
// unless it is asked for (the first of a page's bad items is).
type itemFault struct {
	field string        // the item's field at fault; "" when the item is not an object
	why   string        // the field's rule's verdict, or "missing"
	kind  jsontext.Kind // the JSON kind of an item that is not an object
}

func (f itemFault) bad() bool { return f.why != "" || f.kind != 0 }

// String starts with the path inside the item (".lat: null").
func (f itemFault) String() string {
	if f.field == "" {
		return ": " + wrongKind(f.kind, "an object")
	}
	return "." + f.field + ": " + f.why
}

// readItem judges one item into item, and says what makes it unusable.
func (col *Collection) readItem(d *jsontext.Decoder, item []fieldState) (itemFault, error) {
	l := col.e.List
	clear(item)
	if k := d.PeekKind(); k != '{' {
		if err := skip(d); err != nil {
			return itemFault{}, err
		}
		return itemFault{kind: k}, nil
	}
	if _, err := d.ReadToken(); err != nil {
		return itemFault{}, notJSON(err)
	}
	for d.PeekKind() != '}' {
		// The name's raw JSON, compared as it is: this loop runs for every
		// field of every item, and a name made a string each time was a
		// third of a page's allocations.
		name, err := d.ReadValue()
		if err != nil {
			return itemFault{}, notJSON(err)
		}
		i := col.itemField(name)
		if i < 0 {
			if err := skip(d); err != nil {
				return itemFault{}, err
			}
			continue
		}
		raw, err := d.ReadValue()
		if err != nil {
			return itemFault{}, notJSON(err)
		}
		v, bad := l.Item[i].Rule(raw, &col.c)
		item[i] = fieldState{seen: true, v: v, bad: bad}
	}
	if _, err := d.ReadToken(); err != nil {
		return itemFault{}, notJSON(err)
	}
	for i, f := range l.Item {
		switch {
		case f.Optional:
		case !item[i].seen:
			return itemFault{field: f.Name, why: "missing"}, nil
		case item[i].bad != "":
			return itemFault{field: f.Name, why: item[i].bad}, nil
		}
	}
	return itemFault{}, nil
}

// itemField is the index in List.Item of the field a raw JSON name
// names, or -1.
func (col *Collection) itemField(raw jsontext.Value) int {
	if bytes.IndexByte(raw, '\\') >= 0 { // escapes: compare what they mean
		b, _ := jsontext.AppendUnquote(nil, raw)
		raw = append(append([]byte{'"'}, b...), '"')
	}
	for i, q := range col.quoted {
		if string(raw) == q {
			return i
		}
	}
	return -1
}

// repeated reports whether the item's Unique value was seen earlier in the
// walk, and remembers it.
func (col *Collection) repeated(item []fieldState) bool {
	l := col.e.List
	if l.Unique == "" {
		return false
	}
	st := item[col.unique]
	if !st.seen || st.bad != "" {
		return false // an item without a usable id still counts
	}
	if _, dup := col.seen[st.v.ID]; dup {
		return true
	}
	if len(col.seen) < maxRemembered {
		col.seen[st.v.ID] = struct{}{}
	}
	return false
}

// maxCursorBytes bounds a next_cursor: it goes back in a URL.
const maxCursorBytes = 4096

// readCursor reads next_cursor: null or "" (no more pages), a string
// (passed back verbatim) or a number (as its literal text); the spec
// leaves its format open.
func readCursor(d *jsontext.Decoder) (string, error) {
	raw, err := d.ReadValue()
	if err != nil {
		return "", notJSON(err)
	}
	switch raw.Kind() {
	case 'n':
		return "", nil
	case '"', '0':
		s := string(raw)
		if raw.Kind() == '"' {
			b, _ := jsontext.AppendUnquote(nil, raw)
			s = string(b)
		}
		if len(s) > maxCursorBytes {
			return "", &client.DecodeError{Field: "next_cursor", Err: fmt.Errorf("longer than %d bytes", maxCursorBytes)}
		}
		return s, nil
	}
	return "", &client.DecodeError{Field: "next_cursor", Err: errors.New("want a string, a number or null")}
}

// skip skips a value the exporter does not read, without keeping it.
func skip(d *jsontext.Decoder) error { return notJSON(d.SkipValue()) }

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

func kindName(k jsontext.Kind) string {
	return map[jsontext.Kind]string{'n': "null", 't': "bool", 'f': "bool", '"': "string", '0': "number", '{': "object", '[': "array"}[k]
}
