package endpoint

import (
	"errors"
	"strconv"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/global-stability/global_stability_exporter/client"
)

// readList reads the items of the list one at a time: each is judged field
// by field, then folded, or left out and counted if a required field is
// bad. The list of a paged endpoint must be an array; another one that is
// not is a bad value.
func (col *Collection) readList(s *scanner, page int) error {
	l := col.e.List
	if c, err := s.peek(); err != nil || c != '[' {
		raw, err := s.value()
		if err != nil {
			return err
		}
		if col.e.Paged {
			return &client.DecodeError{Field: l.Name, Err: errors.New(wrongType(raw, "an array"))}
		}
		col.result.Invalid.add(l.Name, l.Name+": "+wrongType(raw, "an array"))
		return nil
	}
	item := make([]fieldState, len(l.Item))
	values := make([]Value, len(l.Item))
	return s.items(func(i int) error {
		fault, err := col.readItem(s, item)
		switch {
		case err != nil:
			return err
		case fault.bad():
			// Only the first is described: a page of a million bad items
			// costs a count each, not a message each.
			if col.result.Invalid.count(l.Name) {
				col.result.Invalid.First = l.Name + "[" + strconv.Itoa(i) + "]" + fault.String()
				if page > 0 {
					col.result.Invalid.First += " (page " + strconv.Itoa(page) + ")"
				}
			}
		case col.repeated(item):
			col.result.Duplicates++
		default:
			for j := range item {
				values[j] = item[j].v
			}
			for _, f := range col.folds {
				f.add(values)
			}
		}
		return nil
	})
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
func (col *Collection) readItem(s *scanner, item []fieldState) (itemFault, error) {
	l := col.e.List
	clear(item)
	c, err := s.peek()
	if err == nil && c != '{' {
		err = s.skip()
		if err == nil {
			return itemFault{kind: kindOf(c)}, nil
		}
	}
	if err == nil {
		err = s.members(func(name []byte) error {
			i := col.itemField(name)
			if i < 0 {
				return s.skip()
			}
			raw, err := s.value()
			if err == nil {
				v, bad := l.Item[i].Rule(raw, &col.c)
				item[i] = fieldState{seen: true, v: v, bad: bad}
			}
			return err
		})
	}
	if err != nil {
		return itemFault{}, err
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

// itemField is the index in List.Item of the field name names, or -1.
func (col *Collection) itemField(name []byte) int {
	for i, f := range col.e.List.Item {
		if string(name) == f.Name {
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
