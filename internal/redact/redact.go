// SPDX-License-Identifier: Apache-2.0

// Package redact keeps API keys out of everything the exporter writes. One
// Redactor holds every key of the process. Plain reads our own text for a
// key's forms; Upstream, the one door for text from the API, also undoes one
// layer of escapes and withholds any text they nest deeper in.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// Mark stands in for a key, or a piece of one, in any text.
const Mark = "<redacted>"

// MinPiece is the shortest run of a key's bytes removed wherever it appears
// (a shorter form, whole): shorter runs match ordinary text too often.
const MinPiece = 8

// MinKeyLength is twice MinPiece: what a cut excerpt can still show of a key
// (under MinPiece bytes at each end) is under half of it, and no ordinary
// word holds its pieces by chance.
const MinKeyLength = 2 * MinPiece

// MaxKeys bounds a Ring: a key file rotated hourly keeps two days covered.
const MaxKeys = 64

// Withheld is what Upstream gives instead of a text of n bytes.
func Withheld(n int) string { return "<withheld: " + strconv.Itoa(n) + " bytes>" }

// Redactor holds every key of the process; safe for concurrent use, and nil holds none.
type Redactor struct {
	mu     sync.RWMutex
	pieces map[uint64]int32 // how often each MinPiece-byte window of a form of a key held, folded, occurs
	short  map[string]int32 // how often each form shorter than MinPiece, folded, occurs
	filter [1 << 14]uint32  // the pieces by a hash: most windows of a text skip the map, which would cost most of the time
}

// New returns a Redactor holding no key.
func New() *Redactor { return &Redactor{pieces: map[uint64]int32{}, short: map[string]int32{}} }

// Ring is one target's last MaxKeys keys: a rotated key file leaves the earlier covered.
type Ring struct {
	*Redactor          // holding the ring's keys, with every other ring's
	keys      []string // newest first; guarded by mu
	gone      bool     // dropped; guarded by mu
}

// NewRing returns a ring whose keys r holds until Drop.
func (r *Redactor) NewRing() *Ring { return &Ring{Redactor: r} }

// Remember makes key the ring's newest; cheap if it is, so call it per request.
func (g *Ring) Remember(key string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if key == "" || g.gone || len(g.keys) > 0 && g.keys[0] == key {
		return
	}
	held := len(g.keys)
	if g.keys = slices.DeleteFunc(g.keys, func(k string) bool { return k == key }); len(g.keys) == held {
		g.hold(key, 1)
	}
	if g.keys = slices.Insert(g.keys, 0, key); len(g.keys) > MaxKeys {
		g.hold(g.keys[MaxKeys], -1)
		g.keys = g.keys[:MaxKeys]
	}
}

// Drop lets go of the ring's keys, once no probe of its target is left.
func (g *Ring) Drop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, k := range g.keys {
		g.hold(k, -1)
	}
	g.keys, g.gone = nil, true
}

// hold adds (by 1) or takes away (by -1) key's forms. The caller holds mu.
func (r *Redactor) hold(key string, by int32) {
	for _, f := range forms(key) {
		if f = folded(f); f != "" && len(f) < MinPiece {
			if r.short[f] += by; r.short[f] == 0 {
				delete(r.short, f)
			}
		}
		var w uint64
		for i := range len(f) {
			if w = w<<8 | uint64(f[i]); i >= MinPiece-1 {
				r.filter[hash(w)] += uint32(by) //nolint:gosec // G115: -1 wraps to a decrement
				if r.pieces[w] += by; r.pieces[w] == 0 {
					delete(r.pieces, w)
				}
			}
		}
	}
}

func hash(w uint64) uint64 { return w * 0x9E3779B97F4A7C15 >> 50 }

// Plain returns our own text s with each piece of a key held as Mark.
func (r *Redactor) Plain(s string) string { return r.redact(s, false) }

// Upstream is the door for text from the API: Plain, or Withheld(len(s)) if
// s undone once shows a key, escapes nested deeper, or what it cannot read.
func (r *Redactor) Upstream(s string) string { return r.redact(s, true) }

func (r *Redactor) redact(s string, upstream bool) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	out, found := find(r, s)
	if !found {
		out = s
	}
	if !upstream {
		return out
	}
	once, decoded := unescape([]byte(out), escapeKinds)
	holds := func(b []byte) bool { _, found := find(r, b); return found }
	if decoded && (holds(once) || hasEscape(once) || partialReadings([]byte(out), holds)) ||
		inBase64(once, func(d []byte) bool { return holds(d) || nested(d) }) {
		return Withheld(len(s))
	}
	return out
}

// find returns s with each run of bytes that is part of a piece of a key
// replaced by one Mark, if there is any.
func find[T string | []byte](r *Redactor, s T) (marked string, found bool) {
	var hit []bool
	mark := func(from, to int) {
		if hit == nil {
			hit = make([]bool, len(s))
		}
		for ; from < to; from++ {
			hit[from] = true
		}
	}
	var w uint64
	for i := 0; i < len(s); i++ {
		if w = w<<8 | uint64(folding[s[i]]); i >= MinPiece-1 && r.filter[hash(w)] > 0 && r.pieces[w] > 0 {
			mark(i+1-MinPiece, i+1)
		}
	}
	for f := range r.short {
		l := folded(string(s))
		for at, i := 0, strings.Index(l, f); i >= 0; at, i = at+i+1, strings.Index(l[at+i+1:], f) {
			mark(at+i, at+i+len(f))
		}
	}
	var b strings.Builder
	for i := range hit {
		if !hit[i] {
			b.WriteByte(s[i])
		} else if i == 0 || !hit[i-1] {
			b.WriteString(Mark)
		}
	}
	return b.String(), hit != nil
}

// forms are the ways a key is written: as our code prints it, as servers
// echo it (JSON's `\/`, percent-encoded), its UTF-8 read as Latin-1 (a Python
// WSGI server's headers, for JSON to escape as \u00XX), and base64 of either.
func forms(key string) []string {
	j, _ := json.Marshal(key)
	latin1 := make([]rune, len(key))
	for i := range len(key) {
		latin1[i] = rune(key[i])
	}
	q, a, js := strconv.Quote(key), strconv.QuoteToASCII(key), string(j[1:len(j)-1]) // without their quotes
	out := []string{key, q[1 : len(q)-1], a[1 : len(a)-1], js, strings.ReplaceAll(js, "/", `\/`), url.QueryEscape(key), url.PathEscape(key), string(latin1)}
	for _, k := range []string{key, string(latin1)} {
		for pad := range 3 {
			e := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00", pad) + k + "\x00\x00"))
			// The characters whose six bits all come from the key.
			if from, to := (8*pad+5)/6, 8*(pad+len(k))/6; from < to {
				out = append(out, e[from:to])
			}
		}
	}
	return out
}

// folding lower-cases ASCII letters (a header's case changed carries no key
// past) and reads base64url's '-' and '_' as base64's '+' and '/' (one form
// of a key's base64 covers both alphabets, mixed too).
var folding = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] += 'a' - 'A'
	}
	t['-'], t['_'] = '+', '/'
	return t
}()

// folded is s with every byte folded, each at its offset.
func folded(s string) string {
	b := []byte(s)
	for i, c := range b {
		b[i] = folding[c]
	}
	return string(b)
}
