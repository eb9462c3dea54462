// SPDX-License-Identifier: Apache-2.0

package endpoint_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
	"github.com/global-stability/global_stability_exporter/simulator"
)

// TestAKeyGivenTwiceIsNeverTrusted: of every key an endpoint reads, given
// twice in one object (the same value both times, the most innocent
// repeat), neither is trusted: at the document's level, a scalar, an
// object, a member of an object or a list, the document fails naming it;
// in a list's item, that item is left out and counted, as a bad item is.
// A key no description reads may repeat freely.
func TestAKeyGivenTwiceIsNeverTrusted(t *testing.T) {
	sim := simulator.New(simulator.Config{Key: testKey, Seed: 5, Events: 3, Briefings: 3, PageSize: 3, Now: func() time.Time { return fixedNow }})
	kinds := map[string]bool{}
	for _, e := range endpoint.All() {
		t.Run(e.Label, func(t *testing.T) {
			req := httptest.NewRequest(http.MethodGet, "/v1/"+e.Label, nil)
			req.Header.Set("Authorization", "Bearer "+testKey)
			rec := httptest.NewRecorder()
			sim.ServeHTTP(rec, req)
			body := rec.Body.String()
			page := 0
			if e.Paged {
				page = 1
			}
			read := func(body string) (endpoint.Result, error) {
				col := e.Start(config)
				_, err := col.Read(strings.NewReader(body), page)
				return col.Result(), err
			}
			whole, err := read(body)
			if err != nil || whole.Invalid.Total() != 0 {
				t.Fatalf("the simulator's body: %v, invalid %v", err, whole.Invalid.Counts)
			}
			if got, err := read(repeat(t, body, "unread", "1")); err != nil || fmt.Sprint(got) != fmt.Sprint(whole) {
				t.Errorf("a key no description reads, given twice: %v, %v; want what the body gives without it", got, err)
			}

			var keys []string // what the document holds that e reads, a.b the member b of a
			for _, f := range e.Fields {
				keys = append(keys, f.Name)
				if object, _, ok := strings.Cut(f.Name, "."); ok {
					keys = append(keys, object)
				}
			}
			if e.List != nil {
				keys = append(keys, e.List.Name)
			}
			if e.Paged {
				keys = append(keys, "next_cursor")
			}
			for _, key := range keys {
				repeated := repeat(t, body, key, "")
				_, err := read(repeated)
				if de, ok := errors.AsType[*client.DecodeError](err); !ok || de.Field != key || !strings.Contains(err.Error(), "appears twice") {
					t.Errorf("%s given twice: %v; want the document to fail naming %s", key, err, key)
				}
				kinds[kindOf(t, body, key)] = true
			}

			if e.List == nil {
				return
			}
			list := e.List.Name
			var doc map[string]json.RawMessage
			var items []json.RawMessage
			if json.Unmarshal([]byte(body), &doc) != nil || json.Unmarshal(doc[list], &items) != nil || len(items) == 0 {
				t.Fatalf("the simulator's %s has no %s to repeat a key in", e.Label, list)
			}
			// The first item left out, as a bad item is: what the repeat must give.
			want, err := read(strings.Replace(body, string(items[0]), "null", 1))
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range e.List.Item {
				item := repeat(t, string(items[0]), f.Name, "")
				got, err := read(strings.Replace(body, string(items[0]), item, 1))
				first := fmt.Sprintf("%s[0].%s: appears twice", list, f.Name)
				if page > 0 {
					first += " (page 1)"
				}
				if err != nil || fmt.Sprint(got.Samples, got.Invalid.Counts) != fmt.Sprint(want.Samples, want.Invalid.Counts) || got.Invalid.First != first {
					t.Errorf("%s of an item given twice: %v, %v, first %q; want the item left out and counted, first %q", f.Name, got.Samples, err, got.Invalid.First, first)
				}
			}
		})
	}
	for _, kind := range []string{"scalar", "object", "list"} {
		if !kinds[kind] {
			t.Errorf("no endpoint reads a key holding a %s: the rule went untested for it", kind)
		}
	}
}

// repeat gives body, a JSON object, with key given once more before the
// rest: with value, or with the value it has ("a.b" repeats b inside a).
func repeat(t *testing.T, body, key, value string) string {
	t.Helper()
	object, member, nested := strings.Cut(key, ".")
	if nested {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &doc); err != nil || doc[object] == nil {
			t.Fatalf("no %s to repeat %s in: %v", object, member, err)
		}
		return strings.Replace(body, string(doc[object]), repeat(t, string(doc[object]), member, value), 1)
	}
	if value == "" {
		var doc map[string]json.RawMessage
		if err := json.Unmarshal([]byte(body), &doc); err != nil || doc[key] == nil {
			t.Fatalf("no %s to repeat in %.80s: %v", key, body, err)
		}
		value = string(doc[key])
	}
	return `{"` + key + `":` + value + `,` + strings.TrimPrefix(body, "{")
}

// kindOf says what key holds in body: a scalar, an object or a list.
func kindOf(t *testing.T, body, key string) string {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(body), &doc); err != nil {
		t.Fatal(err)
	}
	switch v := strings.TrimSpace(string(doc[key])); {
	case strings.HasPrefix(v, "{"):
		return "object"
	case strings.HasPrefix(v, "["):
		return "list"
	}
	return "scalar"
}
