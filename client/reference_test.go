package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"hash/maphash"
	"io"
	"math"
	"strconv"
	"time"
)

// The reference decoders: encoding/json reads the body into a tree (its
// token stream keeps repeated keys, which a map would not), and the rules
// of the streaming decoders are applied to the tree in the plainest code.
// The fuzz targets hold the streaming decoders to them: both accept or
// both reject every input, and agree on every value they keep and on what
// they count as invalid.

type jnode struct {
	kind  byte // '{', '[', '"', '0' (number), 't', 'f', 'n' (null)
	keys  []string
	vals  []*jnode // of an object, in order, repeats included
	elems []*jnode
	str   string
	num   string
}

// refParse reads a body that must be one JSON value and nothing else.
func refParse(body []byte) (*jnode, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	n, err := refValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return n, nil
}

func refValue(dec *json.Decoder) (*jnode, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch v := tok.(type) {
	case json.Delim:
		if v == '{' {
			n := &jnode{kind: '{'}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				val, err := refValue(dec)
				if err != nil {
					return nil, err
				}
				n.keys, n.vals = append(n.keys, k.(string)), append(n.vals, val)
			}
			_, err := dec.Token()
			return n, err
		}
		n := &jnode{kind: '['}
		for dec.More() {
			val, err := refValue(dec)
			if err != nil {
				return nil, err
			}
			n.elems = append(n.elems, val)
		}
		_, err := dec.Token()
		return n, err
	case string:
		return &jnode{kind: '"', str: v}, nil
	case json.Number:
		return &jnode{kind: '0', num: string(v)}, nil
	case bool:
		if v {
			return &jnode{kind: 't'}, nil
		}
		return &jnode{kind: 'f'}, nil
	}
	return &jnode{kind: 'n'}, nil
}

// refRules are the value rules, applied to tree nodes.
type refRules struct {
	now     time.Time
	maxName int
	seed    maphash.Seed
}

// last returns the value of the last occurrence of key (keys longer than
// maxKeyBytes match nothing), or nil.
func (n *jnode) last(key string) *jnode {
	var v *jnode
	for i, k := range n.keys {
		if k == key && len(k) <= maxKeyBytes {
			v = n.vals[i]
		}
	}
	return v
}

func (n *jnode) count(key string) int {
	c := 0
	for _, k := range n.keys {
		if k == key {
			c++
		}
	}
	return c
}

// number is a usable number, or false.
func (r refRules) number(n *jnode) (float64, bool) {
	if n == nil || n.kind != '0' || len(n.num) > maxNumberBytes {
		return 0, false
	}
	v, err := strconv.ParseFloat(n.num, 64)
	return v, err == nil && !math.IsInf(v, 0)
}

func (r refRules) str(n *jnode, max int) (string, bool) {
	if n == nil || n.kind != '"' || len(n.str) > max {
		return "", false
	}
	return n.str, true
}

func (r refRules) name(n *jnode) (string, bool) {
	s, ok := r.str(n, r.maxName)
	return s, ok && s != ""
}

func (r refRules) score(n *jnode) (float64, bool) {
	v, ok := r.number(n)
	return v, ok && v >= 0 && v <= 100
}

func (r refRules) time(n *jnode) (time.Time, bool) {
	s, ok := r.str(n, maxTimestampBytes)
	if !ok {
		return time.Time{}, false
	}
	t, err := ParseTimestamp(s)
	return t, err == nil && !t.After(r.now.Add(MaxFutureSkew))
}

var errRefDocument = errors.New("the document fails")

func (r refRules) overview(body []byte) (Overview, error) {
	doc, err := refParse(body)
	if err != nil || doc.kind != '{' {
		return Overview{}, errRefDocument
	}
	o := Overview{Pillars: map[Pillar]float64{}}
	bad := func(field string) { o.Invalid.add(field, field) }
	if v, ok := r.score(doc.last("score")); ok {
		o.Score = &v
	} else {
		bad("score")
	}
	if v, ok := r.name(doc.last("trend")); ok {
		o.Trend = &v
	} else {
		bad("trend")
	}
	pillars := doc.last("pillars")
	for _, p := range Pillars() {
		var v float64
		ok := false
		if pillars != nil && pillars.kind == '{' {
			v, ok = r.score(pillars.last(string(p)))
		}
		if ok {
			o.Pillars[p] = v
		} else {
			bad("pillars")
		}
	}
	if v, ok := r.time(doc.last("as_of")); ok {
		o.AsOf = &v
	} else {
		bad("as_of")
	}
	return o, nil
}

func (r refRules) drilldown(body []byte, p Pillar) (Drilldown, []Indicator, error) {
	doc, err := refParse(body)
	if err != nil || doc.kind != '{' || doc.count("indicators") > 1 {
		return Drilldown{}, nil, errRefDocument
	}
	for i, k := range doc.keys {
		if s, ok := r.str(doc.vals[i], maxKeyBytes); k == "pillar" && ok && s != string(p) {
			return Drilldown{}, nil, errRefDocument
		}
	}
	d := Drilldown{Pillar: p}
	bad := func(field string) { d.Invalid.add(field, field) }
	var inds []Indicator
	if list := doc.last("indicators"); list != nil && list.kind == '[' {
		for _, item := range list.elems {
			key, okKey := "", false
			v, okValue := 0.0, false
			if item.kind == '{' {
				key, okKey = r.name(item.last("key"))
				v, okValue = r.number(item.last("value"))
			}
			if okKey && okValue {
				inds = append(inds, Indicator{Key: key, Value: v})
			} else {
				bad("indicators")
			}
		}
	} else {
		bad("indicators")
	}
	if v, ok := r.number(doc.last("delta_24h")); ok {
		d.Delta24h = &v
	} else {
		bad("delta_24h")
	}
	if v, ok := r.time(doc.last("as_of")); ok {
		d.AsOf = &v
	} else {
		bad("as_of")
	}
	return d, inds, nil
}

func (r refRules) summary(body []byte) (Summary, error) {
	doc, err := refParse(body)
	if err != nil || doc.kind != '{' {
		return Summary{}, errRefDocument
	}
	var s Summary
	if v, ok := r.time(doc.last("as_of")); ok {
		s.AsOf = &v
	} else {
		s.Invalid.add("as_of", "as_of")
	}
	return s, nil
}

// page checks a page's shape and returns its list and next_cursor.
func (r refRules) page(body []byte, listKey string) ([]*jnode, string, error) {
	doc, err := refParse(body)
	if err != nil || doc.kind != '{' || doc.count(listKey) != 1 || doc.count("next_cursor") == 0 {
		return nil, "", errRefDocument
	}
	var cursor string
	for i, k := range doc.keys {
		if k != "next_cursor" {
			continue
		}
		switch v := doc.vals[i]; {
		case v.kind == 'n':
			cursor = ""
		case v.kind == '"' && len(v.str) <= maxCursorBytes:
			cursor = v.str
		case v.kind == '0' && len(v.num) <= maxNumberBytes:
			cursor = v.num
		default:
			return nil, "", errRefDocument
		}
	}
	list := doc.last(listKey)
	if list.kind != '[' {
		return nil, "", errRefDocument
	}
	return list.elems, cursor, nil
}

func (r refRules) eventPage(body []byte) ([]eventWithID, string, Invalid, error) {
	items, cursor, err := r.page(body, "events")
	if err != nil {
		return nil, "", Invalid{}, err
	}
	var (
		events []eventWithID
		inv    Invalid
	)
	for _, item := range items {
		var ev eventWithID
		ok := item.kind == '{'
		if ok {
			var okLat, okLon, okCat, okEsc, okAt bool
			ev.Lat, okLat = r.number(item.last("lat"))
			ev.Lon, okLon = r.number(item.last("lon"))
			ev.Category, okCat = r.name(item.last("category"))
			ev.Escalation, okEsc = r.number(item.last("escalation"))
			ev.OccurredAt, okAt = r.time(item.last("occurred_at"))
			ok = okLat && okLon && okCat && okEsc && okAt && math.Abs(ev.Lat) <= 90 && math.Abs(ev.Lon) <= 180
			if id, okID := r.str(item.last("id"), maxIDBytes); okID && id != "" {
				ev.id, ev.hasID = maphash.String(r.seed, id), true
			}
		}
		if ok {
			events = append(events, ev)
		} else {
			inv.add("events", "events")
		}
	}
	return events, cursor, inv, nil
}

func (r refRules) briefingPage(body []byte) ([]Briefing, string, Invalid, error) {
	items, cursor, err := r.page(body, "briefings")
	if err != nil {
		return nil, "", Invalid{}, err
	}
	var (
		briefings []Briefing
		inv       Invalid
	)
	for _, item := range items {
		var t time.Time
		ok := item.kind == '{'
		if ok {
			t, ok = r.time(item.last("published_at"))
		}
		if ok {
			briefings = append(briefings, Briefing{PublishedAt: t})
		} else {
			inv.add("briefings", "briefings")
		}
	}
	return briefings, cursor, inv, nil
}
