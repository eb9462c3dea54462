package client

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// This file holds the decoders of every endpoint but the conflict events
// (events.go, the hot path). All of them stream the body through the
// scanner: no list is ever held, no string or number kept beyond a small
// cap, so memory does not depend on what the upstream sends. They are
// strict about the document (valid JSON, an object, the lists a count
// depends on) and lenient about values: each exported value is checked on
// its own, and a bad one is left out and counted in Invalid rather than
// failing the response.

// Limits on the strings the decoders keep.
const (
	// DefaultMaxNameBytes is the default of Config.MaxNameBytes.
	DefaultMaxNameBytes = 128
	maxKeyBytes         = 64  // an object key longer than this matches no field
	maxTimestampBytes   = 64  // RFC 3339 needs 35 at most
	maxIDBytes          = 256 // a longer event id is not used to spot repeats
)

// MaxFutureSkew is how far ahead of the exporter's clock a timestamp may be
// and still be taken as true. A later one is invalid: an as_of a day ahead
// would keep every staleness alert quiet for a day. An hour covers clock
// skew and an as_of that names the end of the current window.
const MaxFutureSkew = time.Hour

// decoder holds what every decoder needs besides the input.
type decoder struct {
	s        *scanner
	now      time.Time       // for MaxFutureSkew
	maxName  int             // trend words, indicator keys, categories
	keys     *redact.Keyring // a name holding a piece of a key is invalid
	pillar   Pillar          // the drilldown asked for
	page     int             // of a walk, from 1; 0 for a single document
	inv      Invalid
	listSeen bool // the document's one list was read (a second one fails)
}

// document reads a body that must be one JSON object, calling field with
// each key (valid until the next scanner call); field must consume the
// value. Then only whitespace may follow.
func (d *decoder) document(field func(key []byte) error) error {
	s := d.s
	c, err := s.next()
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) && s.offset+int64(s.pos) == 0 {
			return io.EOF // an empty body
		}
		return err
	}
	if c != '{' {
		if isValueStart(c) {
			return &fieldError{field: "(body)", err: fmt.Errorf("got JSON %s where an object is due", kind(c))}
		}
		return s.syntax("invalid character %q looking for beginning of value", c)
	}
	if err := s.fields(field); err != nil {
		return err
	}
	return s.finish()
}

// fields reads an object whose '{' is next, calling field for each key.
func (s *scanner) fields(field func(key []byte) error) error {
	s.pos++
	for first := true; ; first = false {
		more, err := s.more(first, '}')
		if err != nil || !more {
			return err
		}
		key, err := s.key()
		if err != nil {
			return err
		}
		if err := field(key); err != nil {
			return err
		}
	}
}

// items reads an array whose '[' is next, calling item for each element.
func (s *scanner) items(item func(i int) error) error {
	s.pos++
	for i := 0; ; i++ {
		more, err := s.more(i == 0, ']')
		if err != nil || !more {
			return err
		}
		if err := item(i); err != nil {
			return err
		}
	}
}

// key reads an object key and its colon. A key longer than maxKeyBytes
// comes back empty: it matches no field, and its value is skipped.
func (s *scanner) key() ([]byte, error) {
	c, err := s.next()
	if err != nil {
		return nil, err
	}
	if c != '"' {
		return nil, s.syntax("invalid character %q looking for beginning of object key string", c)
	}
	k, _, err := s.str(maxKeyBytes)
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

// wrongType skips a value of the wrong JSON type and says what it was.
func (s *scanner) wrongType(c byte, want string) (string, error) {
	if c == 'n' {
		return "null", s.literal()
	}
	return fmt.Sprintf("got JSON %s where %s is due", kind(c), want), s.skip(0)
}

// numberValue reads a value that should be a number. bad says why it
// cannot be used; err is for input that is not JSON.
func (s *scanner) numberValue() (v float64, bad string, err error) {
	c, err := s.next()
	if err != nil {
		return 0, "", err
	}
	if c != '-' && (c < '0' || c > '9') {
		bad, err = s.wrongType(c, "a number")
		return 0, bad, err
	}
	v, err = s.float()
	if errors.Is(err, errOutOfRange) {
		return 0, err.Error(), nil
	}
	return v, "", err
}

// stringValue reads a value that should be a string of at most max bytes.
func (s *scanner) stringValue(max int) (v []byte, bad string, err error) {
	c, err := s.next()
	if err != nil {
		return nil, "", err
	}
	if c != '"' {
		bad, err = s.wrongType(c, "a string")
		return nil, bad, err
	}
	v, tooLong, err := s.str(max)
	if tooLong {
		return nil, "longer than " + strconv.Itoa(max) + " bytes", err
	}
	return v, "", err
}

// nameValue reads a name that becomes a label value (a trend word, an
// indicator key, a category): a string of 1 to maxName bytes.
func (d *decoder) nameValue() (string, string, error) {
	b, bad, err := d.s.stringValue(d.maxName)
	if bad != "" || err != nil {
		return "", bad, err
	}
	if bad = d.nameProblem(b); bad != "" {
		return "", bad, nil
	}
	return string(b), "", nil
}

// heldKey is why a name that holds a piece of the API key is invalid: a
// label value is written to /metrics as it is, so one echoing the key
// would publish it. The series is left out and counted instead.
const heldKey = "holds a piece of the API key"

// nameProblem says why a name read whole cannot be a label value, or "".
func (d *decoder) nameProblem(b []byte) string {
	switch {
	case len(b) == 0:
		return "empty"
	case d.keys.Holds(string(b)):
		return heldKey
	}
	return ""
}

// timeValue reads a timestamp that is no more than MaxFutureSkew ahead.
func (d *decoder) timeValue() (time.Time, string, error) {
	b, bad, err := d.s.stringValue(maxTimestampBytes)
	if bad != "" || err != nil {
		return time.Time{}, bad, err
	}
	t, perr := parseTimestampBytes(b)
	return t, d.checkTime(t, perr), nil
}

// checkTime says why a parsed timestamp cannot be used, or "".
func (d *decoder) checkTime(t time.Time, err error) string {
	switch {
	case err != nil:
		return err.Error()
	case t.After(d.now.Add(MaxFutureSkew)):
		return fmt.Sprintf("%s is more than %s ahead of this host's clock", t.UTC().Format(time.RFC3339), MaxFutureSkew)
	}
	return ""
}

// scoreValue reads a score of the spec's 0–100 scale.
func (s *scanner) scoreValue() (float64, string, error) {
	v, bad, err := s.numberValue()
	if bad == "" && err == nil && !(v >= 0 && v <= 100) {
		bad = fmt.Sprintf("%g is outside the spec's 0–100 score scale", v)
	}
	return v, bad, err
}

// field records the outcome of one field of a document; the last
// occurrence of a key decides, as in encoding/json.
type field struct {
	seen bool
	bad  string
}

func (f *field) set(bad string) { f.seen, f.bad = true, bad }

// check counts the field in inv under name if it was missing or bad, and
// reports whether its value can be used.
func (f *field) check(inv *Invalid, name string) bool { return f.checkAt(inv, name, name) }

// checkAt is check for a field at path (pillars.cyber) counted under the
// spec's name of what holds it (pillars).
func (f *field) checkAt(inv *Invalid, name, path string) bool {
	switch {
	case !f.seen:
		inv.add(name, path+": missing")
	case f.bad != "":
		inv.add(name, path+": "+f.bad)
	default:
		return true
	}
	return false
}

// item counts a list item left out, with where it was.
func (d *decoder) item(list string, i int, why string) {
	detail := list + "[" + strconv.Itoa(i) + "]" + why
	if d.page > 0 {
		detail += " (page " + strconv.Itoa(d.page) + ")"
	}
	d.inv.add(list, detail)
}

// list checks that a document's list (events, briefings, indicators) comes
// only once: its items are handed over as they are read, so a second list
// could not replace the first.
func (d *decoder) list(name string) error {
	if d.listSeen {
		return &fieldError{field: name, err: errors.New("appears twice")}
	}
	d.listSeen = true
	return nil
}

func (d *decoder) overview() (Overview, error) {
	var (
		score, trend, asOf field
		pillars            [4]field
		scoreV             float64
		trendV             string
		asOfV              time.Time
		pillarV            [4]float64
	)
	err := d.document(func(key []byte) error {
		var bad string
		var err error
		switch string(key) {
		case "score":
			scoreV, bad, err = d.s.scoreValue()
			score.set(bad)
		case "trend":
			trendV, bad, err = d.nameValue()
			trend.set(bad)
		case "as_of":
			asOfV, bad, err = d.timeValue()
			asOf.set(bad)
		case "pillars":
			pillars = [4]field{}
			return d.object("pillars", func(bad string) {
				for i := range pillars {
					pillars[i].set(bad)
				}
			}, func(key []byte) error {
				for i, p := range Pillars() {
					if string(key) == string(p) {
						var bad string
						var err error
						pillarV[i], bad, err = d.s.scoreValue()
						pillars[i].set(bad)
						return err
					}
				}
				return d.s.skip(0)
			})
		default:
			return d.s.skip(0)
		}
		return err
	})
	if err != nil {
		return Overview{}, err
	}
	o := Overview{Pillars: make(map[Pillar]float64, 4)}
	if score.check(&o.Invalid, "score") {
		o.Score = &scoreV
	}
	if trend.check(&o.Invalid, "trend") {
		o.Trend = &trendV
	}
	for i, p := range Pillars() {
		if pillars[i].checkAt(&o.Invalid, "pillars", "pillars."+string(p)) {
			o.Pillars[p] = pillarV[i]
		}
	}
	if asOf.check(&o.Invalid, "as_of") {
		o.AsOf = &asOfV
	}
	return o, nil
}

// object reads a value that should be an object, calling field for each
// key; any other value is skipped, and notAnObject told why.
func (d *decoder) object(name string, notAnObject func(bad string), field func(key []byte) error) error {
	c, err := d.s.next()
	if err != nil {
		return err
	}
	if c != '{' {
		bad, err := d.s.wrongType(c, "an object")
		notAnObject(bad)
		return err
	}
	return d.s.fields(field)
}

// array reads a value that should be an array, calling item for each
// element; any other value is skipped, and notAnArray told why.
func (d *decoder) array(notAnArray func(bad string), item func(i int) error) error {
	c, err := d.s.next()
	if err != nil {
		return err
	}
	if c != '[' {
		bad, err := d.s.wrongType(c, "an array")
		notAnArray(bad)
		return err
	}
	return d.s.items(item)
}

func (d *decoder) drilldown(indicator func(Indicator)) (Drilldown, error) {
	var (
		delta, asOf, list field
		deltaV            float64
		asOfV             time.Time
	)
	dd := Drilldown{Pillar: d.pillar}
	err := d.document(func(key []byte) error {
		var bad string
		var err error
		switch string(key) {
		case "pillar":
			// Not exported, but a drilldown of another pillar is the wrong
			// answer, not a bad value; null or another type says nothing.
			var name []byte
			if name, bad, err = d.s.stringValue(maxKeyBytes); err == nil && bad == "" && string(name) != string(d.pillar) {
				return &fieldError{field: "pillar", err: fmt.Errorf("names %q, not the pillar asked for, %q", name, d.pillar)}
			}
		case "delta_24h":
			deltaV, bad, err = d.s.numberValue()
			delta.set(bad)
		case "as_of":
			asOfV, bad, err = d.timeValue()
			asOf.set(bad)
		case "indicators":
			if err := d.list("indicators"); err != nil {
				return err
			}
			list.set("")
			return d.array(func(bad string) { list.set(bad) }, func(i int) error {
				ind, bad, err := d.indicator()
				switch {
				case err != nil:
					return err
				case bad != "":
					d.item("indicators", i, bad)
				case indicator != nil:
					indicator(ind)
				}
				return nil
			})
		default:
			return d.s.skip(0)
		}
		return err
	})
	if err != nil {
		return Drilldown{}, err
	}
	dd.Invalid = d.inv
	if delta.check(&dd.Invalid, "delta_24h") {
		dd.Delta24h = &deltaV
	}
	list.check(&dd.Invalid, "indicators")
	if asOf.check(&dd.Invalid, "as_of") {
		dd.AsOf = &asOfV
	}
	return dd, nil
}

// indicator reads one item of indicators; bad, when set, starts with the
// path of what is wrong inside the item (".value: null").
func (d *decoder) indicator() (Indicator, string, error) {
	var (
		key, value field
		ind        Indicator
		bad        string
	)
	err := d.object("", func(b string) { bad = ": " + b }, func(k []byte) error {
		var bad string
		var err error
		switch string(k) {
		case "key":
			ind.Key, bad, err = d.nameValue()
			key.set(bad)
		case "value":
			ind.Value, bad, err = d.s.numberValue()
			value.set(bad)
		default:
			return d.s.skip(0)
		}
		return err
	})
	if err != nil || bad != "" {
		return Indicator{}, bad, err
	}
	var inv Invalid
	if !key.checkAt(&inv, "", ".key") || !value.checkAt(&inv, "", ".value") {
		return Indicator{}, inv.First, nil
	}
	return ind, "", nil
}

func (d *decoder) summary() (Summary, error) {
	var (
		asOf  field
		asOfV time.Time
	)
	err := d.document(func(key []byte) error {
		if string(key) != "as_of" {
			return d.s.skip(0) // the text too: it is not exported
		}
		var bad string
		var err error
		asOfV, bad, err = d.timeValue()
		asOf.set(bad)
		return err
	})
	if err != nil {
		return Summary{}, err
	}
	var sum Summary
	if asOf.check(&sum.Invalid, "as_of") {
		sum.AsOf = &asOfV
	}
	return sum, nil
}

// briefingPage reads one page of /v1/briefings, handing each briefing with
// a valid published_at to briefing, and returns the page's next_cursor.
func (d *decoder) briefingPage(briefing func(Briefing)) (string, error) {
	return d.pageObject("briefings", func(i int) error {
		var (
			published field
			t         time.Time
			notObject string
		)
		err := d.object("", func(b string) { notObject = b }, func(k []byte) error {
			if string(k) != "published_at" {
				return d.s.skip(0) // id, headline, summary, tags: not exported
			}
			var bad string
			var err error
			t, bad, err = d.timeValue()
			published.set(bad)
			return err
		})
		var why Invalid
		switch {
		case err != nil:
			return err
		case notObject != "":
			d.item("briefings", i, ": "+notObject)
		case published.checkAt(&why, "", ".published_at"):
			briefing(Briefing{PublishedAt: t})
		default:
			d.item("briefings", i, why.First)
		}
		return nil
	})
}

// pageObject reads a page object: the list under listKey, each element through
// item, and next_cursor, which is returned. Both are required, and the
// list must be an array: without them the walk cannot know how many items
// there are.
func (d *decoder) pageObject(listKey string, item func(i int) error) (string, error) {
	var (
		cursor             string
		haveList, haveNext bool
	)
	err := d.document(func(key []byte) error {
		switch string(key) {
		case listKey:
			if err := d.list(listKey); err != nil {
				return err
			}
			haveList = true
			var notArray string
			if err := d.array(func(bad string) { notArray = bad }, item); err != nil {
				return err
			}
			if notArray != "" {
				return &fieldError{field: listKey, err: errors.New(notArray)}
			}
			return nil
		case "next_cursor":
			haveNext = true
			var err error
			cursor, err = d.cursor()
			return err
		}
		return d.s.skip(0)
	})
	switch {
	case err != nil:
		return "", err
	case !haveList:
		return "", &fieldError{field: listKey, err: errMissing}
	case !haveNext:
		return "", &fieldError{field: "next_cursor", err: errors.New("missing (null is the way to say there are no more pages)")}
	}
	return cursor, nil
}

// maxCursorBytes bounds a next_cursor: it goes back in a URL.
const maxCursorBytes = 4096

// cursor reads next_cursor: null or "" (no more pages), a string (passed
// back verbatim) or a number (as its literal text); the spec leaves the
// format open.
func (d *decoder) cursor() (string, error) {
	s := d.s
	c, err := s.next()
	if err != nil {
		return "", err
	}
	switch {
	case c == 'n':
		return "", s.literal()
	case c == '"':
		b, tooLong, err := s.str(maxCursorBytes)
		if tooLong {
			return "", &fieldError{field: "next_cursor", err: fmt.Errorf("longer than %d bytes", maxCursorBytes)}
		}
		return string(b), err
	case c == '-' || (c >= '0' && c <= '9'):
		b, tooLong, err := s.number()
		if tooLong {
			return "", &fieldError{field: "next_cursor", err: fmt.Errorf("longer than %d bytes", maxNumberBytes)}
		}
		return string(b), err
	}
	if err := s.skip(0); err != nil {
		return "", err
	}
	return "", &fieldError{field: "next_cursor", err: errors.New("want a string, a number or null")}
}
