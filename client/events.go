package client

import (
	"cmp"
	"fmt"
	"hash/maphash"
	"io"
	"time"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// eventPages decodes pages of /v1/conflict. A page of 1,000 events is the
// exporter's largest unit of work, so its per-event loop is written out
// by hand on the scanner rather than through the closures of decode.go,
// and it allocates nothing per event: categories repeat a lot and are
// interned (a bounded map), ids are hashed and not kept, and the read
// buffer is reused from page to page and walk to walk.
type eventPages struct {
	decoder
	buf    []byte            // the scanner's read buffer
	intern map[string]string // category names, each checked by nameProblem
	keysAt uint64            // the keyring's version when intern was last valid
	seed   maphash.Seed      // for id hashes; one per client
}

// maxInterned bounds the intern map: beyond it, names are plain copies.
const maxInterned = 4096

func newEventPages(seed maphash.Seed) *eventPages {
	return &eventPages{intern: map[string]string{}, seed: seed}
}

// Fields of an event, in the order the spec lists them and the log
// reports them. id is optional: it only serves to spot an event repeated
// by a shifting page, and an event without one is still counted.
const (
	hasID = 1 << iota
	hasLat
	hasLon
	hasCategory
	hasEscalation
	hasOccurredAt
	required = hasLat | hasLon | hasCategory | hasEscalation | hasOccurredAt
)

var eventFieldNames = [...]string{"id", "lat", "lon", "category", "escalation", "occurred_at"}

// category returns a valid category name, interned, or why b is not one.
// Only valid names are interned, so a name found there needs no check.
func (d *eventPages) category(b []byte) (string, string) {
	if s, ok := d.intern[string(b)]; ok {
		return s, ""
	}
	if bad := d.nameProblem(b); bad != "" {
		return "", bad
	}
	s := string(b)
	if len(d.intern) < maxInterned {
		d.intern[s] = s
	}
	return s, ""
}

// eventWithID is an event and the hash of its id (hasID false without one).
type eventWithID struct {
	Event
	id    uint64
	hasID bool
}

// decode reads one page, handing every valid event to visit, and returns
// next_cursor. Invalid events are counted in d.inv.
func (d *eventPages) decode(r io.Reader, page int, now time.Time, maxName int, keys *redact.Keyring, visit func(eventWithID)) (string, error) {
	d.s = newScanner(r, d.buf)
	defer func() { d.buf, d.s = d.s.buf, nil }()
	d.page, d.now, d.maxName, d.keys, d.listSeen = page, now, maxName, keys, false
	if v := keys.Version(); v != d.keysAt {
		// A new key: names interned before were not checked against it.
		clear(d.intern)
		d.keysAt = v
	}
	var ev eventWithID
	return d.pageObject("events", func(i int) error {
		bad, err := d.event(&ev)
		switch {
		case err != nil:
			return err
		case bad != "":
			d.item("events", i, bad)
		default:
			visit(ev)
		}
		return nil
	})
}

// event decodes one event into ev. bad, when set, says what makes it
// unusable, starting with the path inside the event (".lat: null").
func (d *eventPages) event(ev *eventWithID) (bad string, err error) {
	s := d.s
	c, err := s.next()
	if err != nil {
		return "", err
	}
	if c != '{' {
		bad, err := s.wrongType(c, "an object")
		return ": " + bad, err
	}
	s.pos++
	*ev = eventWithID{}
	var (
		have    int
		reasons [len(eventFieldNames)]string // why each bad field is bad
	)
	for first := true; ; first = false {
		more, err := s.more(first, '}')
		if err != nil {
			return "", err
		}
		if !more {
			break
		}
		key, err := s.key()
		if err != nil {
			return "", err
		}
		// A switch rather than a loop over eventFieldNames: this is the
		// hottest loop of a scrape, and the loop measured 15% slower.
		var bit, index int
		switch string(key) {
		case "id":
			bit, index = hasID, 0
		case "lat":
			bit, index = hasLat, 1
		case "lon":
			bit, index = hasLon, 2
		case "category":
			bit, index = hasCategory, 3
		case "escalation":
			bit, index = hasEscalation, 4
		case "occurred_at":
			bit, index = hasOccurredAt, 5
		default: // actors, and anything the spec does not list
			if err := s.skip(0); err != nil {
				return "", err
			}
			continue
		}
		why, err := d.value(ev, bit)
		if err != nil {
			return "", err
		}
		// The last occurrence of a key decides, as in encoding/json.
		if why == "" {
			have |= bit
		} else {
			have &^= bit
		}
		reasons[index] = why
	}
	ev.hasID = have&hasID != 0
	if have&required == required {
		return "", nil
	}
	for i, name := range eventFieldNames {
		if i > 0 && have&(1<<i) == 0 {
			return "." + name + ": " + cmp.Or(reasons[i], "missing"), nil
		}
	}
	return "", nil // not reached: some required bit is missing
}

// value reads the value of a known event field into ev. why says what
// makes it unusable; err is for input that is not JSON.
func (d *eventPages) value(ev *eventWithID, bit int) (why string, err error) {
	s := d.s
	switch bit {
	case hasLat, hasLon, hasEscalation:
		v, bad, err := s.numberValue()
		if bad != "" || err != nil {
			return bad, err
		}
		switch {
		case bit == hasLat && !(v >= -90 && v <= 90):
			return fmt.Sprintf("%g is not a latitude", v), nil
		case bit == hasLon && !(v >= -180 && v <= 180):
			return fmt.Sprintf("%g is not a longitude", v), nil
		case bit == hasLat:
			ev.Lat = v
		case bit == hasLon:
			ev.Lon = v
		default:
			ev.Escalation = v
		}
		return "", nil
	case hasID:
		b, bad, err := s.stringValue(maxIDBytes)
		if bad == "" && err == nil && len(b) == 0 {
			bad = "empty"
		}
		if bad == "" && err == nil {
			ev.id = maphash.Bytes(d.seed, b)
		}
		return bad, err
	case hasCategory:
		b, bad, err := s.stringValue(d.maxName)
		if bad == "" && err == nil {
			ev.Category, bad = d.category(b)
		}
		return bad, err
	}
	// occurred_at
	b, bad, err := s.stringValue(maxTimestampBytes)
	if bad != "" || err != nil {
		return bad, err
	}
	t, perr := parseTimestampBytes(b)
	if why := d.checkTime(t, perr); why != "" {
		return why, nil
	}
	ev.OccurredAt = t
	return "", nil
}

func isValueStart(c byte) bool {
	return c == '[' || c == '"' || c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n'
}

// parseTimestampBytes is ParseTimestamp without allocating for the usual
// form, YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM), "t", "z", " " and ":60"
// included.
func parseTimestampBytes(b []byte) (time.Time, error) {
	if t, ok := parseRFC3339Fast(b); ok {
		return t, nil
	}
	return ParseTimestamp(string(b))
}

func parseRFC3339Fast(b []byte) (time.Time, bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != 't' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
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
		day > daysIn(month, year) || hour > 23 || minute > 59 || sec > 60 {
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
	case len(rest) == 1 && (rest[0] == 'Z' || rest[0] == 'z'):
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
