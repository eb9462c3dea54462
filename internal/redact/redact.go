// SPDX-License-Identifier: Apache-2.0

// Package redact keeps API keys out of everything the exporter writes. One
// Redactor holds every key of the process: Redact takes each piece of a key
// held out of a text; Readable, which text from the API and every path, URL
// or name a message quotes passes through, also withholds a text that does
// not read plainly, so that nothing is ever decoded to be judged.
package redact

import (
	"encoding/base64"
	"encoding/json"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

const (
	// Mark stands in for a key, or a piece of one, in any text.
	Mark = "<redacted>"
	// MinPiece is the shortest run of a key's bytes removed wherever it
	// appears: shorter runs match ordinary text too often.
	MinPiece = 8
	// MinKeyLength is twice MinPiece: what a cut excerpt can still show of a
	// key (under MinPiece bytes at each end) is under half of it. Shorter
	// keys are refused where keys are read.
	MinKeyLength = 2 * MinPiece
	// MaxKeys bounds a Ring: a key file rotated hourly keeps two days covered.
	MaxKeys = 64
)

// Withheld is what a text of n bytes becomes where it may not be quoted.
func Withheld(n int) string { return "<withheld: " + strconv.Itoa(n) + " bytes>" }

// Redactor holds every key of the process; safe for concurrent use, and nil holds none.
type Redactor struct {
	mu     sync.RWMutex
	pieces map[uint64]int32 // how often each MinPiece-byte window of a form of a key held, folded, occurs
}

// New returns a Redactor holding no key.
func New() *Redactor { return &Redactor{pieces: map[uint64]int32{}} }

// Ring is one target's last MaxKeys keys: a rotated key file leaves the earlier covered.
type Ring struct {
	*Redactor          // holding the ring's keys, with every other ring's
	keys      []string // newest first; guarded by mu
	gone      bool     // dropped; guarded by mu
}

// NewRing returns a ring whose keys r holds until Drop.
func (r *Redactor) NewRing() *Ring { return &Ring{Redactor: r} }

// Remember makes key the ring's newest, true if it replaced another; cheap
// if it is, so call it per request.
func (r *Ring) Remember(key string) (replaced bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if key == "" || r.gone || len(r.keys) > 0 && r.keys[0] == key {
		return false
	}
	held := len(r.keys)
	if r.keys = slices.DeleteFunc(r.keys, func(k string) bool { return k == key }); len(r.keys) == held {
		r.hold(key, 1)
	}
	if r.keys = slices.Insert(r.keys, 0, key); len(r.keys) > MaxKeys {
		r.hold(r.keys[MaxKeys], -1)
		r.keys = r.keys[:MaxKeys]
	}
	return held > 0
}

// Drop lets go of the ring's keys, once no probe of its target is left.
func (r *Ring) Drop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, k := range r.keys {
		r.hold(k, -1)
	}
	r.keys, r.gone = nil, true
}

// hold adds (by 1) or takes away (by -1) the pieces of key's forms. The caller holds mu.
func (r *Redactor) hold(key string, by int32) {
	for _, f := range forms(key) {
		var w uint64
		for i := range len(f) {
			if w = w<<8 | uint64(folding[f[i]]); i >= MinPiece-1 {
				if r.pieces[w] += by; r.pieces[w] == 0 {
					delete(r.pieces, w)
				}
			}
		}
	}
}

// Redact returns s with each run of bytes in a piece of a form of a key held
// as one Mark. It decodes nothing: the forms are matched as they are written.
func (r *Redactor) Redact(s string) string {
	if r == nil {
		return s
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	var b strings.Builder
	to := -1 // where the last run of marked bytes ends
	var w uint64
	for i := range len(s) {
		if w = w<<8 | uint64(folding[s[i]]); i >= MinPiece-1 && r.pieces[w] > 0 {
			if start := i + 1 - MinPiece; start > to {
				b.WriteString(s[max(to, 0):start] + Mark)
			}
			to = i + 1
		}
	}
	if to < 0 {
		return s
	}
	return b.String() + s[to:]
}

// forms are the ways a key is written: as our code prints it (Go- and
// JSON-quoted), as servers echo it (JSON's `\/`, percent-encoded), and its
// base64. Escaped forms matter in our own text: the API's escapes are withheld.
func forms(key string) []string {
	j, _ := json.Marshal(key)
	q, js := strconv.Quote(key), string(j[1:len(j)-1]) // without their quotes
	out := []string{key, q[1 : len(q)-1], js, strings.ReplaceAll(js, "/", `\/`), url.QueryEscape(key), url.PathEscape(key)}
	for pad := range 3 { // the characters whose six bits all come from the key
		e := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("\x00", pad) + key + "\x00\x00"))
		out = append(out, e[(8*pad+5)/6:8*(pad+len(key))/6])
	}
	return out
}

// MaxReadable is the longest text Readable passes: an error's message, which
// may quote a URL or an error body's excerpt (256 bytes).
const MaxReadable = 512

// Readable returns s if a message may quote it as it stands, else
// Withheld(len(s)): it passes printable UTF-8 of at most MaxReadable bytes
// with no escape and no token that may be a key (keyLike); nothing decoded,
// no key known. A regexp runs only where it may match.
func Readable(s string) string {
	if len(s) > MaxReadable || !utf8.ValidString(s) || strings.ContainsAny(s, `\%&`) && escape.MatchString(s) ||
		strings.ContainsFunc(s, func(c rune) bool { return !unicode.IsPrint(c) && !unicode.IsSpace(c) }) ||
		slices.ContainsFunc(token.FindAllString(s, -1), keyLike) {
		return Withheld(len(s))
	}
	return s
}

// Readable passes text from the API and every path, URL or name a message
// quotes: s redacted, if that reads plainly, else withheld.
func (r *Redactor) Readable(s string) string {
	if out := r.Redact(s); Readable(out) == out {
		return out
	}
	return Withheld(len(s))
}

// escape is where JSON, Go, a URL or HTML would read another character: a
// backslash; % and two hex digits; & and # or two letters ("&amp" needs no
// ";", and no named reference has one letter). A lone & or % ("Riots &
// protests", "5% down") or a name's ("AT&T", "M&A") starts none.
var escape = regexp.MustCompile(`\\|%[0-9A-Fa-f]{2}|&(#|[A-Za-z]{2})`)

// token is a run of MinKeyLength or more of base64's characters, either
// alphabet, but '/': a path's parts are judged one by one.
var token = regexp.MustCompile(`[A-Za-z0-9+=_-]{` + strconv.Itoa(MinKeyLength) + `,}`)

// keyLike reports whether a token may be a key or an encoding: a part of it
// between + / = _ - of MinPiece or more is not a word. Names, paths and error
// codes are words ("violence_against_civilians", "ransomware_incidents_7d",
// "RATE_LIMIT_EXCEEDED"); keys, hex and base64 mix digits and letters of
// both cases. A key of small letters reads as words: only a Redactor finds it.
func keyLike(token string) bool {
	return slices.ContainsFunc(strings.FieldsFunc(token, func(c rune) bool { return strings.ContainsRune("+/=_-", c) }),
		func(part string) bool { return len(part) >= MinPiece && !word.MatchString(part) })
}

// word is letters only: capitals, or a word's humps ("StrategicDevelopments").
var word = regexp.MustCompile(`^(?:[A-Z]+|[A-Z]?[a-z]+(?:[A-Z][a-z]{2,})*)$`)

// folding lower-cases ASCII letters (a key's case changed is still the key)
// and reads base64url's '-' and '_' as base64's '+' and '/' (one form of a
// key's base64 covers both alphabets, mixed too).
var folding = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	copy(t['A':], "abcdefghijklmnopqrstuvwxyz")
	t['-'], t['_'] = '+', '/'
	return t
}()
