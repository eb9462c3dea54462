// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/global-stability/global_stability_exporter/client"
)

// scanned reports whether the scanner finds body one valid JSON value,
// with a token limit of limit and a window of window bytes: every value
// is walked, the containers of odd depths skipped whole and the others
// entered, every scalar of an entered one handed over as a token.
func scanned(t *testing.T, body string, limit, window int) bool {
	s := &scanner{r: strings.NewReader(body), buf: make([]byte, window), window: window, maxToken: limit}
	var walk func(depth int) error
	walk = func(depth int) error {
		c, err := s.peek()
		if err != nil || (c != '{' && c != '[') || depth%2 == 1 {
			raw, err := s.value()
			if err == nil && len(raw) > limit+7 { // cut, its closing quote, an escape kept whole
				t.Fatalf("a token of %d bytes handed over with a limit of %d", len(raw), limit)
			}
			return err
		}
		if err := s.enter(); err != nil {
			return err
		}
		for first := true; ; first = false {
			if more, err := s.more(c+2, first); err != nil || !more {
				return err
			}
			if c == '{' {
				if _, err := s.member(); err != nil {
					return err
				}
			}
			if err := walk(depth + 1); err != nil {
				return err
			}
		}
	}
	err := walk(0)
	if err == nil {
		var c byte
		if c, err = s.peek(); err == nil && c != 0 {
			return false
		}
	}
	if err != nil && !errors.Is(err, client.ErrNotJSON) {
		t.Fatalf("%q: %v is not a syntax error", body, err)
	}
	return err == nil
}

// FuzzBoundedTokensKeepValidity: a body is valid JSON to the scanner
// exactly when it is to encoding/json, with token limits small enough that
// the fuzzer's bodies pass them and windows of 1 to 20 bytes, so that tokens
// cross them, whether values are read or skipped.
func FuzzBoundedTokensKeepValidity(f *testing.F) {
	for _, s := range []string{
		`{"a":"abcdefgh","b":123456789,"c":-1.2345e+6789}`, `{"s":"ab\u0041\u00e9\n\"cd"}`, `["x\uZZZZ"]`, "[\"a\x01b\"]",
		`{"a" :    [1 ,  2]   }`, `[01234]`, `[-]`, `[1.]`, `[1e]`, `"\ud83d\ude00abc"`, `[tru]`, `[nullx]`,
		`{"a":[{"b":[[],{}]},"c"]}`, `[1,]`, `{"a":1,}`, `{"a"}`, "[\x00]", `[1 2]`, `{"a":1}{}`, "[\"a\tb\"]",
		strings.Repeat("[", maxDepth) + strings.Repeat("]", maxDepth), strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1),
	} {
		f.Add(s, uint8(3), uint8(1))
	}
	f.Fuzz(func(t *testing.T, body string, limit, window uint8) {
		l, w := int(limit%8)+1, int(window%20)+1
		if got, want := scanned(t, body, l, w), json.Valid([]byte(body)); got != want {
			t.Fatalf("the scanner says valid %v, encoding/json %v (limit %d, window %d): %q", got, want, l, w, body)
		}
	})
}

// TestLongTokensKeepTheirVerdicts: a value past the token limit is judged
// as the whole value would be: a name, an id, a cursor, a number too long;
// a skipped value dropped; a fault in what is dropped still fails the body.
func TestLongTokensKeepTheirVerdicts(t *testing.T) {
	long := strings.Repeat("x", 3*maxTokenBytes)
	event := func(field, value string) string {
		fields := map[string]string{"id": `"e1"`, "lat": "1", "lon": "1", "category": `"riot"`, "escalation": "0.5", "occurred_at": `"2026-11-22T00:00:00Z"`, "actors": `["a"]`}
		fields[field] = value
		var b strings.Builder
		b.WriteString("{")
		for _, k := range []string{"id", "lat", "lon", "category", "escalation", "occurred_at", "actors"} {
			b.WriteString(`"` + k + `":` + fields[k] + ",")
		}
		return strings.TrimSuffix(b.String(), ",") + "}"
	}
	page := func(events string, next string) string {
		return `{"events":[` + events + `],"next_cursor":` + next + `}`
	}
	for _, tc := range []struct {
		name    string
		body    string
		invalid string // the invalid detail wanted, or "" for none
		err     error  // the error class wanted, or nil
	}{
		{"a category too long", page(event("category", `"`+long+`"`), "null"), "events[0].category: longer than 128 bytes (page 1)", nil},
		{"a category too long, escaped", page(event("category", `"`+strings.Repeat(`\u0041`, maxTokenBytes)+`"`), "null"), "events[0].category: longer than 128 bytes (page 1)", nil},
		{"an id too long is only not used", page(event("id", `"`+long+`"`), "null"), "", nil},
		{"a name and a number too long in a list of names", page(event("actors", `["`+long+`", `+strings.Repeat("9", 3*maxTokenBytes)+`]`), "null"), "actors: longer than 128 bytes", nil},
		{"an escalation of many digits", page(event("escalation", "0."+strings.Repeat("1", 3*maxTokenBytes)), "null"), "events[0].escalation: a number of more than 1024 characters (page 1)", nil},
		{"a cursor too long", page("", `"`+long+`"`), "", client.ErrNotJSON},
		{"a name too long", `{"` + long + `":1,` + page("", "null")[1:], "", nil},
		{"whitespace", `{"events":[` + strings.Repeat(" \n", 3*maxTokenBytes) + `],"next_cursor":null}`, "", nil},
		{"a control character deep in a skipped string", page(event("actors", `["`+long+"\x01"+`"]`), "null"), "", client.ErrNotJSON},
		{"a bad escape deep in a skipped string", page(event("actors", `["`+long+`\q"]`), "null"), "", client.ErrNotJSON},
		{"a bad \\u deep in a skipped string", page(event("actors", `["`+long+`\u12x4"]`), "null"), "", client.ErrNotJSON},
		{"a bad number after many digits", page(event("actors", `[`+strings.Repeat("1", 3*maxTokenBytes)+`.e]`), "null"), "", client.ErrNotJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			col := Conflict.Start(Config{})
			_, err := col.Read(iotest.HalfReader(strings.NewReader(tc.body)), 1)
			switch {
			case tc.name == "a cursor too long":
				var de *client.DecodeError
				if !errors.As(err, &de) || de.Field != "next_cursor" {
					t.Fatalf("err = %v, want next_cursor too long", err)
				}
				return
			case tc.err != nil:
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			r := col.Result()
			if r.Invalid.First != tc.invalid {
				t.Errorf("invalid %q, want %q", r.Invalid.First, tc.invalid)
			}
		})
	}
}

// TestALongTokenIsNeverHeld: whatever the shape of a 16 MiB body, reading
// it allocates a small fraction of it: no token is buffered whole.
func TestALongTokenIsNeverHeld(t *testing.T) {
	const size = 16 << 20
	for name, body := range map[string][]byte{
		"one string":    []byte(`{"events":[],"next_cursor":null,"x":"` + strings.Repeat("x", size) + `"}`),
		"one number":    []byte(`{"events":[],"next_cursor":null,"x":1` + strings.Repeat("0", size) + `}`),
		"one name":      []byte(`{"` + strings.Repeat("n", size) + `":1,"events":[],"next_cursor":null}`),
		"whitespace":    []byte(`{"events":[],"next_cursor":null` + strings.Repeat(" ", size) + `}`),
		"a read string": []byte(`{"events":[{"category":"` + strings.Repeat("c", size) + `"}],"next_cursor":null}`),
	} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		col := Conflict.Start(Config{})
		if _, err := col.Read(bytes.NewReader(body), 1); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		runtime.ReadMemStats(&after)
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: reading 16 MiB allocated %d KiB, want under 1 MiB", name, got>>10)
		}
	}
}

// BenchmarkReadWorstShapes reads a 16 MiB page of each shape an upstream
// may choose within the default limit: the bytes and allocations per page
// show a regression that a friendly page would not.
func BenchmarkReadWorstShapes(b *testing.B) {
	const size = 16 << 20
	for _, tc := range []struct{ name, body string }{
		{"one skipped string", `{"events":[],"next_cursor":null,"x":"` + strings.Repeat("x", size) + `"}`},
		{"one read string", `{"events":[{"category":"` + strings.Repeat("c", size) + `"}],"next_cursor":null}`},
		{"tiny items", `{"events":[` + strings.Repeat("{},", size/3) + `{}],"next_cursor":null}`},
		{"deep nesting", `{"events":[],"next_cursor":null,"x":[` + strings.Repeat(strings.Repeat("[", 9990)+strings.Repeat("]", 9990)+",", size/19981) + `[]]}`},
		{"one long number", `{"events":[],"next_cursor":null,"x":1` + strings.Repeat("0", size) + `}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := []byte(tc.body)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				col := Conflict.Start(Config{})
				if _, err := col.Read(bytes.NewReader(body), 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestPlain8: eight bytes are plain exactly when each one is, whatever the
// byte at each place and whatever its neighbours (a borrow in one byte never
// hides a special one in another).
func TestPlain8(t *testing.T) {
	for _, fill := range []byte{'a', 0x00, 0x1f, 0x20, '"', '\\', 0x7f, 0x80, 0xff, '!', '[', ']'} {
		for at := range 8 {
			for c := range 256 {
				word := bytes.Repeat([]byte{fill}, 8)
				word[at] = byte(c)
				want := true
				for _, b := range word {
					want = want && plain[b]
				}
				if got := plain8(binary.LittleEndian.Uint64(word)); got != want {
					t.Fatalf("%q: plain8 %v, want %v", word, got, want)
				}
			}
		}
	}
}
