// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"errors"
	"fmt"
	"io"
	"math/bits"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/global-stability/global_stability_exporter/client"
)

// Collection is one collection of an endpoint in progress, every page read into it.
type Collection struct {
	e      *Endpoint
	c      Config
	fields []fieldState // by index of e.Fields, for the current document
	folds  []folding
	keys   [][]byte            // List.Item's names as JSON writes a member's (`"lat":`)
	unique int                 // index of List.Unique in List.Item, or -1
	each   uint64              // List.Item's fields of Each, by bit (a list item has fewer than 64)
	needed uint64              // List.Item's fields neither Optional nor Each, by bit
	seen   map[uint64]struct{} // fingerprints of List.Unique values in this walk
	given  []string            // the keys read of the current document
	result Result
}

// fieldState is a field's value and its rule's verdict ("" when valid).
type fieldState struct {
	v     Value
	bad   string
	names []Value // of a field of Each: its valid values, each once
	left  int     // of a field of Each: its values left out, the first for bad
}

// maxRemembered bounds the List.Unique values a walk remembers, 8 bytes
// each: far past any plausible walk. Past it, later items are not checked.
const maxRemembered = 250_000

// Start begins a collection of e.
func (e *Endpoint) Start(c Config) *Collection {
	col := &Collection{e: e, c: c.withDefaults(), unique: -1, result: Result{Dropped: map[string]int{}}}
	if l := e.List; l != nil {
		for _, f := range l.Folds {
			col.folds = append(col.folds, f.start(l, col.c))
		}
		if l.Unique != "" {
			// Sized for a page of a thousand: growing from empty costs a
			// rehash per doubling (BenchmarkReadPage).
			col.unique, col.seen = l.itemIndex(l.Unique), make(map[uint64]struct{}, 1024)
		}
		for i, f := range l.Item {
			k, _ := jsontext.AppendQuote(nil, f.Name)
			col.keys = append(col.keys, append(k, ':'))
			col.each |= uint64(boolToInt(f.Each)) << i                   //nolint:gosec // G115: 0 or 1
			col.needed |= uint64(boolToInt(!f.Optional && !f.Each)) << i //nolint:gosec // G115: 0 or 1
		}
	}
	return col
}

// Read reads one document (page from 1 if paged, else 0) and returns its
// next_cursor. After an error, discard the collection.
func (col *Collection) Read(r io.Reader, page int) (next string, err error) {
	return col.readWith(newScanner(r), page)
}

func (col *Collection) readWith(s *scanner, page int) (next string, err error) {
	e := col.e
	col.fields = slices.Repeat([]fieldState{{bad: "missing"}}, len(e.Fields))
	switch c, err := s.peek(); {
	case err != nil:
		return "", err
	case c == 0:
		return "", fmt.Errorf("%w: empty body", client.ErrNotJSON)
	case c != '{':
		if c != '[' { // text that is not JSON fails as such
			if _, err := s.value(); err != nil {
				return "", err
			}
		}
		return "", &client.DecodeError{Field: "(body)", Err: fmt.Errorf("got JSON %s where an object is due", kindName(jsontext.Value{c}.Kind()))}
	}
	col.given = col.given[:0]
	err = s.each(func(_ int, name []byte) (err error) {
		switch {
		case e.List != nil && string(name) == e.List.Name:
			if err = col.once(e.List.Name); err == nil {
				err = col.readList(s, page)
			}
			return err
		case e.Paged && string(name) == "next_cursor":
			if err = col.once("next_cursor"); err == nil {
				next, err = readCursor(s)
			}
			return err
		}
		return col.readField(s, string(name))
	})
	if err != nil {
		return "", err
	}
	haveList, haveNext := e.List != nil && slices.Contains(col.given, e.List.Name), slices.Contains(col.given, "next_cursor")
	switch c, err := s.peek(); {
	case err != nil:
		return "", err
	case c != 0:
		return "", syntax("data after the JSON document")
	case e.Paged && !haveList:
		return "", &client.DecodeError{Field: e.List.Name, Err: errors.New("missing or null")}
	case e.Paged && !haveNext:
		return "", &client.DecodeError{Field: "next_cursor", Err: errors.New("missing (null is the way to say there are no more pages)")}
	case e.List != nil && !haveList:
		col.result.Invalid.add(e.List.Name, e.List.Name+": missing")
	}
	for i, f := range e.Fields {
		if f.Metric != nil && col.fields[i].bad != "" {
			col.result.Invalid.add(f.counted(), f.Name+": "+col.fields[i].bad)
		}
	}
	return next, nil
}

// readField reads the document's member key: a field, an object of fields
// (a.b), or neither, skipped. A non-object where fields a.* are due makes
// each of them bad.
func (col *Collection) readField(s *scanner, key string) error {
	fields := col.e.Fields
	if i := index(fields, key); i >= 0 {
		if err := col.once(key); err != nil {
			return err
		}
		raw, err := s.value()
		if err != nil {
			return err
		}
		f, st := fields[i], &col.fields[i]
		if st.v, st.bad = f.Rule(raw, &col.c); f.Must != "" && st.bad == "" && st.v.Str != f.Must {
			return &client.DecodeError{Field: key, Err: fmt.Errorf("names %q, not the one asked for, %q", st.v.Str, f.Must)}
		}
		return nil
	}
	var members []int
	for i, f := range fields {
		if strings.HasPrefix(f.Name, key+".") {
			members = append(members, i)
		}
	}
	if len(members) == 0 {
		return s.skip()
	}
	if err := col.once(key); err != nil {
		return err
	}
	if c, err := s.peek(); err == nil && c == '{' {
		return s.each(func(_ int, name []byte) error { return col.readField(s, key+"."+string(name)) })
	}
	raw, err := s.value()
	if err != nil {
		return err
	}
	for _, i := range members {
		col.fields[i].bad = wrongKind(raw.Kind(), "an object")
	}
	return nil
}

// readList judges and folds the items one at a time. A paged endpoint's
// list that is not an array fails the page; another's is a bad value.
func (col *Collection) readList(s *scanner, page int) error {
	l := col.e.List
	if c, err := s.peek(); err != nil || c != '[' {
		raw, err := s.value()
		switch {
		case err != nil:
			return err
		case col.e.Paged:
			return &client.DecodeError{Field: l.Name, Err: errors.New(wrongKind(raw.Kind(), "an array"))}
		}
		col.result.Invalid.add(l.Name, l.Name+": "+wrongKind(raw.Kind(), "an array"))
		return nil
	}
	item := make([]fieldState, len(l.Item))
	return s.each(func(i int, _ []byte) error {
		bad, kind, err := col.readItem(s, item)
		switch {
		case err != nil:
			return err
		case bad >= 0 || kind != 0:
			// Only the first is described: a page of a million bad items
			// costs a count each, not a message each.
			if col.result.Invalid.count(l.Name) {
				why := ": " + wrongKind(kind, "an object")
				if kind == 0 {
					why = "." + l.Item[bad].Name + ": " + item[bad].bad
				}
				col.result.Invalid.First = l.Name + "[" + strconv.Itoa(i) + "]" + why
				if page > 0 {
					col.result.Invalid.First += " (page " + strconv.Itoa(page) + ")"
				}
			}
		case col.repeated(item):
			col.result.Duplicates++
		default:
			for _, f := range col.folds {
				f.add(item)
			}
		}
		return nil
	})
}

// readItem judges one item into item. It is unusable when a required field
// is bad or any field appears twice (its index), or it is not an object
// (its kind).
func (col *Collection) readItem(s *scanner, item []fieldState) (bad int, kind jsontext.Kind, err error) {
	fields := col.e.List.Item
	if c, err := s.peek(); err != nil || c != '{' {
		return -1, jsontext.Value{c}.Kind(), s.skip()
	}
	if err := s.enter(); err != nil {
		return -1, 0, err
	}
	// Items usually name their fields in one order, as written in keys: the
	// member after the last one read is looked for first, unscanned (rather
	// than scanning each member, then looking it up among the fields).
	next, given, again, invalid := 0, uint64(0), uint64(0), uint64(0) // the fields read, read twice, bad: by bit
	for first := true; ; first = false {
		switch more, err := s.more('}', first); {
		case err != nil:
			return -1, 0, err
		case !more:
			return col.judged(item, given, again, invalid|^given), 0, nil
		}
		i := next
		if i >= len(fields) || !s.key(col.keys[i]) {
			name, err := s.member()
			if err != nil {
				return -1, 0, err
			}
			if i = index(fields, name); i < 0 {
				if err := s.skip(); err != nil {
					return -1, 0, err
				}
				continue
			}
		}
		next = i + 1
		if given&(1<<i) != 0 { // a key read twice leaves the item out (twice)
			item[i].bad, again = twice, again|1<<i
			if err := s.skip(); err != nil {
				return -1, 0, err
			}
			continue
		}
		given |= 1 << i
		raw, err := jsontext.Value(nil), error(nil)
		if col.each&(1<<i) != 0 {
			err = col.readEach(s, &fields[i], &item[i])
		} else if raw, err = s.value(); err == nil {
			item[i].v, item[i].bad = fields[i].Rule(raw, &col.c)
		}
		if err != nil {
			return -1, 0, err
		}
		invalid |= uint64(boolToInt(item[i].bad != "")) << i //nolint:gosec // G115: 0 or 1
	}
}

// judged is the index of a field that leaves item out, or -1: one read
// twice (again), or a required one bad or not read (bad). The fields not
// given become missing; a usable item's fields of Each count values left out.
func (col *Collection) judged(item []fieldState, given, again, bad uint64) int {
	for m := (1<<len(item) - 1) &^ given; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		item[i] = fieldState{bad: "missing", names: item[i].names[:0], left: 1}
	}
	if out := bad&col.needed | again; out != 0 {
		return bits.TrailingZeros64(out)
	}
	for m := bad & col.each; m != 0; m &= m - 1 { // missing, null, not an array, or bad values: those only
		i := bits.TrailingZeros64(m)
		f, st := &col.e.List.Item[i], &item[i]
		if col.result.Invalid.count(f.Name) {
			col.result.Invalid.First = f.Name + ": " + st.bad
		}
		col.result.Invalid.Counts[f.Name] += st.left - 1
	}
	return -1
}

// twice is a key the exporter reads given twice in one object: JSON leaves
// its meaning open (RFC 8259, 4), and a body read as it arrives cannot take
// back what the first one counted. The document fails; an item is left out.
const twice = "appears twice"

func (col *Collection) once(key string) error {
	if slices.Contains(col.given, key) {
		return &client.DecodeError{Field: key, Err: errors.New(twice)}
	}
	col.given = append(col.given, key)
	return nil
}

// index is the position in fields of the field named name, or -1.
func index[S string | []byte](fields []Field, name S) int {
	for i := range fields {
		if fields[i].Name == string(name) {
			return i
		}
	}
	return -1
}

// repeated reports whether item's usable Unique value was seen in the walk.
func (col *Collection) repeated(item []fieldState) bool {
	if col.unique < 0 || item[col.unique].bad != "" {
		return false
	}
	id, n := item[col.unique].v.ID, len(col.seen)
	if n >= maxRemembered {
		_, dup := col.seen[id]
		return dup
	}
	col.seen[id] = struct{}{} // one hash, whether it is new or not
	return len(col.seen) == n
}

// maxCursorBytes bounds a next_cursor: it goes back in a URL.
const maxCursorBytes = 4096

// readCursor reads next_cursor, whose format the spec leaves open: null or
// "" ends the walk, a string or a number's literal is passed back.
func readCursor(s *scanner) (string, error) {
	raw, err := s.value()
	switch {
	case err != nil:
		return "", err
	case raw.Kind() == 'n':
		return "", nil
	case raw.Kind() == '"':
		raw = s.text(raw)
	case raw.Kind() != '0':
		return "", &client.DecodeError{Field: "next_cursor", Err: errors.New("want a string, a number or null")}
	}
	if len(raw) > maxCursorBytes {
		return "", &client.DecodeError{Field: "next_cursor", Err: fmt.Errorf("longer than %d bytes", maxCursorBytes)}
	}
	return string(raw), nil
}

func kindName(k jsontext.Kind) string {
	return map[jsontext.Kind]string{'n': "null", 't': "bool", 'f': "bool", '"': "string", '0': "number", '{': "object", '[': "array"}[k]
}

// wrongKind says what a value of JSON kind k was, where want was due.
func wrongKind(k jsontext.Kind, want string) string {
	if k == 'n' {
		return "null"
	}
	return "got JSON " + kindName(k) + " where " + want + " is due"
}
