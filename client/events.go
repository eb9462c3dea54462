package client

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// eventPages decodes pages of /v1/conflict with the scanner instead of
// encoding/json: a page of 1,000 events is the exporter's largest unit of
// work, and reflection made it several times slower than everything else in
// a scrape together. It lives for one walk and keeps its buffers across
// pages, so the walk allocates per page, not per event:
//   - categories and actors repeat a lot and are interned (a bounded map);
//   - the IDs of a page share one string, and its actors one slice;
//   - the read buffer is reused.
//
// It accepts and rejects exactly what the encoding/json decoder of the other
// endpoints would; FuzzEventPageDecoders checks the two against each other.
type eventPages struct {
	items  []Event           // the page handed to the caller
	buf    []byte            // the scanner's read buffer
	intern map[string]string // category and actor names
	ids    []byte            // this page's IDs, back to back
	actors []string          // this page's actors, in order
	spans  []eventSpans      // per event: where its ID and actors are
}

type eventSpans struct{ idFrom, idTo, actorsFrom, actorsTo int }

// maxInterned bounds the intern map: beyond it, names are plain copies.
const maxInterned = 4096

func newEventPages() *eventPages { return &eventPages{intern: map[string]string{}} }

// Required fields of an event, in the order errors report them.
const (
	hasID = 1 << iota
	hasLat
	hasLon
	hasActors
	hasCategory
	hasEscalation
	hasOccurredAt
	hasAll = 1<<iota - 1
)

var eventFieldNames = []string{"id", "lat", "lon", "actors", "category", "escalation", "occurred_at"}

func (d *eventPages) internString(b []byte) string {
	if s, ok := d.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.intern) < maxInterned {
		d.intern[s] = s
	}
	return s
}

// decode is a pageDecoder for /v1/conflict. It decodes into its own items
// slice, reused from page to page and from walk to walk, whatever slice it
// is given.
func (d *eventPages) decode(r io.Reader, _ []Event) ([]Event, string, error) {
	items, cursor, err := d.decodeInto(r, d.items[:0])
	d.items = items
	return items, cursor, err
}

func (d *eventPages) decodeInto(r io.Reader, items []Event) ([]Event, string, error) {
	s := newScanner(r, d.buf)
	defer func() { d.buf = s.buf }()
	d.ids, d.actors, d.spans = d.ids[:0], d.actors[:0], d.spans[:0]
	first := len(items)

	c, err := s.next()
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) && s.offset+int64(s.pos) == 0 {
			return items, "", io.EOF // an empty body
		}
		return items, "", err
	}
	if c != '{' {
		if isValueStart(c) {
			return items, "", &fieldError{field: "(body)", err: errors.New("want an object")}
		}
		return items, "", s.syntax("invalid character %q looking for beginning of value", c)
	}
	s.pos++
	var (
		cursor               string
		haveEvents, haveNext bool
	)
	for firstKey := true; ; firstKey = false {
		more, err := s.more(firstKey, '}')
		if err != nil {
			return items, "", err
		}
		if !more {
			break
		}
		key, err := s.key()
		if err != nil {
			return items, "", err
		}
		switch string(key) {
		case "events":
			if haveEvents {
				return items, "", &fieldError{field: "events", err: errors.New("appears twice")}
			}
			haveEvents = true
			if items, err = d.events(s, items); err != nil {
				return items, "", err
			}
		case "next_cursor":
			haveNext = true
			if cursor, err = d.cursor(s); err != nil {
				return items, "", err
			}
		default:
			if err := s.skip(0); err != nil {
				return items, "", err
			}
		}
	}
	if err := s.finish(); err != nil {
		return items, "", err
	}
	switch {
	case !haveEvents:
		return items, "", &fieldError{field: "events", err: errMissing}
	case !haveNext:
		return items, "", &fieldError{field: "next_cursor", err: errors.New("missing (null is the way to say there are no more pages)")}
	}

	// One string for the page's IDs and one slice for its actors.
	ids := string(d.ids)
	actors := append([]string(nil), d.actors...)
	for i, sp := range d.spans {
		items[first+i].ID = ids[sp.idFrom:sp.idTo]
		items[first+i].Actors = actors[sp.actorsFrom:sp.actorsTo:sp.actorsTo]
	}
	return items, cursor, nil
}

func isValueStart(c byte) bool {
	return c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n'
}

// key reads an object key and its colon.
func (s *scanner) key() ([]byte, error) {
	c, err := s.next()
	if err != nil {
		return nil, err
	}
	if c != '"' {
		return nil, s.syntax("invalid character %q looking for beginning of object key string", c)
	}
	k, err := s.str()
	if err != nil {
		return nil, err
	}
	// The usual case: the colon is next, in the buffer, and k stays valid.
	if s.pos < s.end && s.buf[s.pos] == ':' {
		s.pos++
		return k, nil
	}
	// Reading the colon may refill the buffer and move k's bytes: keep a copy.
	s.keyBuf = append(s.keyBuf[:0], k...)
	return s.keyBuf, s.expect(':')
}

func (d *eventPages) cursor(s *scanner) (string, error) {
	c, err := s.next()
	if err != nil {
		return "", err
	}
	switch {
	case c == 'n':
		return "", s.literal()
	case c == '"':
		b, err := s.str()
		return string(b), err
	case c == '-' || (c >= '0' && c <= '9'):
		b, err := s.number()
		return string(b), err
	}
	if err := s.skip(0); err != nil {
		return "", err
	}
	return "", &fieldError{field: "next_cursor", err: errors.New("want a string, a number or null")}
}

func (d *eventPages) events(s *scanner, items []Event) ([]Event, error) {
	c, err := s.next()
	if err != nil {
		return items, err
	}
	switch c {
	case 'n':
		if err := s.literal(); err != nil {
			return items, err
		}
		return items, &fieldError{field: "events", err: errMissing}
	case '[':
		s.pos++
	default:
		if err := s.skip(0); err != nil {
			return items, err
		}
		return items, &fieldError{field: "events", err: errors.New("want an array")}
	}
	for i := 0; ; i++ {
		more, err := s.more(i == 0, ']')
		if err != nil || !more {
			return items, err
		}
		items = append(items, Event{})
		d.spans = append(d.spans, eventSpans{})
		if err := d.event(s, &items[len(items)-1], &d.spans[len(d.spans)-1], i); err != nil {
			return items, err
		}
	}
}

// event decodes one event object, or null (which lacks every field).
func (d *eventPages) event(s *scanner, ev *Event, sp *eventSpans, index int) error {
	field := func(name string) string { return "events[" + strconv.Itoa(index) + "]." + name }
	c, err := s.next()
	if err != nil {
		return err
	}
	var have int
	switch c {
	case 'n':
		if err := s.literal(); err != nil {
			return err
		}
	case '{':
		s.pos++
		var typeErr error
		for first := true; ; first = false {
			more, err := s.more(first, '}')
			if err != nil {
				return err
			}
			if !more {
				break
			}
			key, err := s.key()
			if err != nil {
				return err
			}
			// A switch rather than a loop over eventFieldNames: this is the
			// hottest loop of a scrape, and the loop measured 15% slower.
			bit, name := 0, ""
			switch string(key) {
			case "id":
				bit, name = hasID, "id"
			case "lat":
				bit, name = hasLat, "lat"
			case "lon":
				bit, name = hasLon, "lon"
			case "actors":
				bit, name = hasActors, "actors"
			case "category":
				bit, name = hasCategory, "category"
			case "escalation":
				bit, name = hasEscalation, "escalation"
			case "occurred_at":
				bit, name = hasOccurredAt, "occurred_at"
			default:
				if err := s.skip(0); err != nil {
					return err
				}
				continue
			}
			isNull, err := s.null()
			if err != nil {
				return err
			}
			if isNull {
				have &^= bit // null, like a missing field
				continue
			}
			ok, invalid, err := d.value(s, ev, sp, bit)
			if err != nil {
				return err
			}
			// A wrong type or an invalid value: like encoding/json, finish
			// the object first, so that a later syntax error wins.
			if !ok {
				invalid = fmt.Errorf("got JSON %s where %s is due", kind(s.buf[s.pos]), wantKind(bit))
				if err := s.skip(0); err != nil {
					return err
				}
			}
			if invalid != nil {
				if typeErr == nil {
					typeErr = &fieldError{field: field(name), err: invalid}
				}
				continue
			}
			have |= bit
		}
		if typeErr != nil {
			return typeErr
		}
	default:
		if err := s.skip(0); err != nil {
			return err
		}
		return &fieldError{field: "events[" + strconv.Itoa(index) + "]", err: fmt.Errorf("got JSON %s where an object is due", kind(c))}
	}
	if have != hasAll {
		for i, name := range eventFieldNames {
			if have&(1<<i) == 0 {
				return &fieldError{field: field(name), err: errMissing}
			}
		}
	}
	return nil
}

func wantKind(bit int) string {
	switch bit {
	case hasLat, hasLon, hasEscalation:
		return "a number"
	case hasActors:
		return "an array"
	default:
		return "a string"
	}
}

// value decodes the value of a known field into ev. It returns ok false,
// consuming nothing, when the JSON type is wrong; invalid when the value
// was read but is unusable (out of range, not a timestamp); err when the
// input is not JSON.
func (d *eventPages) value(s *scanner, ev *Event, sp *eventSpans, bit int) (ok bool, invalid, err error) {
	c, err := s.next()
	if err != nil {
		return false, nil, err
	}
	switch bit {
	case hasLat, hasLon, hasEscalation:
		if c != '-' && (c < '0' || c > '9') {
			return false, nil, nil
		}
		v, err := s.float()
		if err != nil && errors.Is(err, errOutOfRange) {
			return true, err, nil
		}
		switch bit {
		case hasLat:
			ev.Lat = v
		case hasLon:
			ev.Lon = v
		default:
			ev.Escalation = v
		}
		return true, nil, err
	case hasActors:
		if c != '[' {
			return false, nil, nil
		}
		return d.actorList(s, sp)
	}
	// The string fields.
	if c != '"' {
		return false, nil, nil
	}
	b, err := s.str()
	if err != nil {
		return true, nil, err
	}
	switch bit {
	case hasID:
		sp.idFrom = len(d.ids)
		d.ids = append(d.ids, b...)
		sp.idTo = len(d.ids)
	case hasCategory:
		ev.Category = d.internString(b)
	case hasOccurredAt:
		t, err := parseTimestampBytes(b)
		if err != nil {
			return true, err, nil
		}
		ev.OccurredAt = t
	}
	return true, nil, nil
}

// actorList reads an array of strings (a null element reads as "", as in
// encoding/json); an element of another type is a type error of the field.
func (d *eventPages) actorList(s *scanner, sp *eventSpans) (ok bool, invalid, err error) {
	s.pos++ // '['
	from := len(d.actors)
	for first := true; ; first = false {
		more, err := s.more(first, ']')
		if err != nil {
			return true, nil, err
		}
		if !more {
			break
		}
		c, err := s.next()
		if err != nil {
			return true, nil, err
		}
		switch c {
		case '"':
			b, err := s.str()
			if err != nil {
				return true, nil, err
			}
			d.actors = append(d.actors, d.internString(b))
		case 'n':
			if err := s.literal(); err != nil {
				return true, nil, err
			}
			d.actors = append(d.actors, "")
		default:
			invalid = fmt.Errorf("got JSON %s where a string is due", kind(c))
			if err := s.skip(0); err != nil {
				return true, nil, err
			}
		}
	}
	if invalid != nil {
		d.actors = d.actors[:from]
		return true, invalid, nil
	}
	sp.actorsFrom, sp.actorsTo = from, len(d.actors)
	return true, nil, nil
}

// parseTimestampBytes is ParseTimestamp without allocating for the usual
// form, YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM).
func parseTimestampBytes(b []byte) (time.Time, error) {
	if t, ok := parseRFC3339Fast(b); ok {
		return t, nil
	}
	return ParseTimestamp(string(b))
}

func parseRFC3339Fast(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return time.Time{}, false
	}
	num := func(from, to int) (int, bool) {
		n := 0
		for _, c := range b[from:to] {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = n*10 + int(c-'0')
		}
		return n, true
	}
	year, ok1 := num(0, 4)
	month, ok2 := num(5, 7)
	day, ok3 := num(8, 10)
	hour, ok4 := num(11, 13)
	minute, ok5 := num(14, 16)
	sec, ok6 := num(17, 19)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 || month < 1 || month > 12 || day < 1 ||
		day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 59 {
		return time.Time{}, false
	}
	i, nsec := 19, 0
	if b[i] == '.' {
		i++
		from := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		digits := i - from
		if digits == 0 || digits > 9 {
			return time.Time{}, false
		}
		nsec, _ = num(from, i)
		for range 9 - digits {
			nsec *= 10
		}
	}
	// Seconds since the epoch by arithmetic: time.Date costs more than all
	// the parsing above, and this runs for every event.
	unix := daysSinceEpoch(year, month, day)*86400 + int64(hour*3600+minute*60+sec)
	switch rest := b[i:]; {
	case len(rest) == 1 && rest[0] == 'Z':
		return time.Unix(unix, int64(nsec)).UTC(), true
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		oh, ok1 := num(i+1, i+3)
		om, ok2 := num(i+4, i+6)
		if !ok1 || !ok2 || oh > 23 || om > 59 {
			return time.Time{}, false
		}
		offset := int64(oh*60+om) * 60
		if rest[0] == '-' {
			offset = -offset
		}
		return time.Unix(unix-offset, int64(nsec)).UTC(), true
	}
	return time.Time{}, false
}

// daysIn is the number of days in a month (1-12) of a proleptic Gregorian year.
func daysIn(month, year int) int {
	if month == 2 && year%4 == 0 && (year%100 != 0 || year%400 == 0) {
		return 29
	}
	return [...]int{31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[month-1]
}

// daysSinceEpoch counts days from 1970-01-01 to a valid date of years
// 0-9999 (Howard Hinnant's days_from_civil; eras of 400 years).
func daysSinceEpoch(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400
	if year < 0 {
		era = (year - 399) / 400
	}
	yearOfEra := year - era*400
	dayOfYear := (153*((month+9)%12)+2)/5 + day - 1
	dayOfEra := yearOfEra*365 + yearOfEra/4 - yearOfEra/100 + dayOfYear
	return int64(era*146097 + dayOfEra - 719468)
}
