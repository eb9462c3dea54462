// Package redact keeps API keys out of every text the exporter writes. A
// Keyring remembers each key the process has sent and removes from a text
// any run of MinPiece or more bytes of one, wherever it sits, in the forms
// an upstream commonly echoes it: raw, Go- or JSON-escaped (`\/` too),
// HTML-escaped, percent-encoded and base64 (standard and URL alphabets, at
// any alignment), ignoring ASCII letter case, so that an upstream (or our
// own code) that lower- or upper-cases a header cannot carry a key past it.
package redact

import (
	"cmp"
	"encoding/base64"
	"encoding/json"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Mark stands in for a key, or a piece of one, in any text.
const Mark = "<redacted>"

// MinPiece is the shortest run of a key's bytes that is removed wherever it
// appears. Shorter runs would match ordinary text too often, and say too
// little about a key to matter. A key shorter than this is removed only
// whole.
const MinPiece = 8

// MaxKeys bounds how many distinct keys a Keyring remembers: each costs a
// set of its pieces (a few KiB for a 64-byte key). A process whose key file
// rotates hourly keeps its last 64 keys, more than two days of them.
const MaxKeys = 64

// Keyring is safe for concurrent use. Its zero value is ready; a nil
// *Keyring holds no key (Redact returns its input).
type Keyring struct {
	mu    sync.Mutex          // serialises Remember
	state atomic.Pointer[set] // an immutable snapshot, replaced whole
}

// set is what Redact reads: never changed once published, so a Redact
// running beside a Remember sees one consistent set.
type set struct {
	version uint64              // counts the sets published
	keys    []string            // newest first
	pieces  map[uint64]struct{} // every MinPiece-byte window of every form of every key, lower-cased
	short   []string            // keys shorter than MinPiece: removed whole
}

// Remember adds key to the keys to redact. It is cheap for a key it
// already holds, so call it for every request.
func (k *Keyring) Remember(key string) {
	if key == "" {
		return
	}
	if s := k.state.Load(); s != nil && len(s.keys) > 0 && s.keys[0] == key {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	old := k.state.Load()
	keys := []string{key}
	if old != nil {
		for _, o := range old.keys {
			if o != key && len(keys) < MaxKeys {
				keys = append(keys, o)
			}
		}
	}
	next := &set{keys: keys, pieces: map[uint64]struct{}{}, version: 1}
	if old != nil {
		next.version = old.version + 1
	}
	for _, key := range keys {
		if len(key) < MinPiece {
			next.short = append(next.short, key)
			continue
		}
		for _, form := range forms(key) {
			for i := 0; i+MinPiece <= len(form); i++ {
				next.pieces[pack(form[i:i+MinPiece])] = struct{}{}
			}
		}
	}
	k.state.Store(next)
}

// Redact returns s with every piece of MinPiece bytes or more of a
// remembered key, in any of the covered forms, replaced by Mark.
func (k *Keyring) Redact(s string) string {
	if k == nil {
		return s
	}
	return redact(s, k.state.Load())
}

// redact removes from s every piece of every key of the sets (a nil set
// holds none). The text is decoded once, whatever the number of sets: a
// process with many targets redacts each log value of all their keys.
func redact(s string, sets ...*set) string {
	if s == "" {
		return s
	}
	anyPieces := false
	for _, st := range sets {
		if st == nil {
			continue
		}
		for _, key := range st.short {
			s = strings.ReplaceAll(s, key, Mark)
		}
		anyPieces = anyPieces || len(st.pieces) > 0
	}
	if len(s) < MinPiece || !anyPieces {
		return s
	}
	isPiece := func(w uint64) bool {
		for _, st := range sets {
			if st == nil {
				continue
			}
			if _, ok := st.pieces[w]; ok {
				return true
			}
		}
		return false
	}
	// Every window of MinPiece bytes that is a piece of a key, in the text
	// as it is and in what it decodes to, marks the span of the text it
	// came from; overlapping or touching spans become one Mark.
	var spans []span
	for i := 0; i+MinPiece <= len(s); i++ {
		if isPiece(pack(s[i : i+MinPiece])) {
			spans = append(spans, span{int32(i), int32(i + MinPiece)})
		}
	}
	if mayBeEncoded(s) {
		for _, v := range decodedViews(s)[1:] {
			for i := 0; i+MinPiece <= len(v.b); i++ {
				if isPiece(packBytes(v.b[i:i+MinPiece])) && v.start[i] >= 0 && v.end[i+MinPiece-1] >= 0 {
					spans = append(spans, span{v.start[i], v.end[i+MinPiece-1]})
				}
			}
		}
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	var b strings.Builder
	copied := int32(0)
	cur := spans[0]
	flush := func() {
		b.WriteString(s[copied:cur.from])
		b.WriteString(Mark)
		copied = cur.to
	}
	for _, sp := range spans[1:] {
		if sp.from <= cur.to {
			cur.to = max(cur.to, sp.to)
			continue
		}
		flush()
		cur = sp
	}
	flush()
	b.WriteString(s[copied:])
	return b.String()
}

// span is [from, to) of a text.
type span struct{ from, to int32 }

// Version changes whenever the set of keys does, so that a caller that
// caches what it checked with Holds knows when to check again.
func (k *Keyring) Version() uint64 {
	if k == nil {
		return 0
	}
	if s := k.state.Load(); s != nil {
		return s.version
	}
	return 0
}

// Holds reports whether s holds a piece of a remembered key that Redact
// would remove, in any of the forms and escapes it undoes.
func (k *Keyring) Holds(s string) bool { return k.Redact(s) != s }

// HoldsWritten reports whether s holds a piece of a remembered key in one
// of the forms it is commonly written in (see forms), without undoing any
// escape: the check of every name of every item as it is read, cheap
// enough for a million of them. What escapes hide is Holds's to find, on
// the fewer texts that are exported.
func (k *Keyring) HoldsWritten(s string) bool {
	if k == nil {
		return false
	}
	st := k.state.Load()
	if st == nil || s == "" {
		return false
	}
	for _, key := range st.short {
		if strings.Contains(s, key) {
			return true
		}
	}
	for i := 0; i+MinPiece <= len(s); i++ {
		if _, ok := st.pieces[pack(s[i:i+MinPiece])]; ok {
			return true
		}
	}
	return false
}

// packBytes is pack for bytes.
func packBytes(w []byte) uint64 {
	var v uint64
	for i := range MinPiece {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		v = v<<8 | uint64(c)
	}
	return v
}

// pack folds ASCII letters to lower case and packs 8 bytes into a word.
func pack(w string) uint64 {
	var v uint64
	for i := range MinPiece {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		v = v<<8 | uint64(c)
	}
	return v
}

// forms lists the ways a key is commonly written back by an upstream or a
// library: raw; as Go's %q and encoding/json escape it (JSON's `\/` too);
// HTML-escaped; percent-encoded as a query value, a path segment, and every
// byte but the unreserved ones; and base64 in both alphabets at each of the
// three alignments a key can have inside a longer encoded text (after
// "Bearer ", say).
func forms(key string) []string {
	out := []string{key, html.EscapeString(key), url.QueryEscape(key), url.PathEscape(key), percentAll(key)}
	if q := strconv.Quote(key); len(q) >= 2 {
		out = append(out, q[1:len(q)-1])
	}
	if j, err := json.Marshal(key); err == nil && len(j) >= 2 {
		inner := string(j[1 : len(j)-1])
		out = append(out, inner, strings.ReplaceAll(inner, "/", `\/`))
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for pad := range 3 {
			out = append(out, base64Core(enc, key, pad))
		}
	}
	return out
}

// percentAll percent-encodes every byte that is not unreserved (RFC 3986).
func percentAll(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// base64Core is what key's base64 encoding looks like wherever it sits,
// when key starts pad bytes into a 3-byte group: the characters whose six
// bits all come from the key, in a run (those at either end that mix in a
// neighbour's bits are left out).
func base64Core(enc *base64.Encoding, key string, pad int) string {
	src := make([]byte, pad+len(key)+2) // room for the bits after the key
	copy(src[pad:], key)
	e := enc.EncodeToString(src)
	from, to := pad, pad+len(key)
	var b strings.Builder
	for j := range len(e) {
		if first, last := 6*j/8, (6*j+5)/8; first >= from && last < to {
			b.WriteByte(e[j])
		}
	}
	return b.String()
}
