// SPDX-License-Identifier: Apache-2.0

package endpoint_test

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/endpoint"
)

// FuzzRead holds the reader of every endpoint to encoding/json: a body
// encoding/json finds invalid is never accepted, one it finds valid is
// never refused as not JSON, and whatever is read yields only finite
// values and label values of valid UTF-8, never a panic.
func FuzzRead(f *testing.F) {
	seeds := []string{
		okOverview, `{}`, `[]`, `null`, `{"score":07}`, `{"score":1e400}`, `{"trend":"\ud800"}`, "{\"trend\":\"\xff\"}",
		`{"pillar":"cyber","indicators":[{"key":"a","value":1},{"key":"a","value":2},7],"delta_24h":-0,"as_of":"2026-11-22t00:00:00z"}`,
		`{"events":[` + event("a") + `,{"lat":"x"},[]],"next_cursor":17}`,
		`{"briefings":[{"published_at":"2016-12-31T23:59:60Z","tags":["x","\ud800",["y"],"x"]}],"next_cursor":null}`,
		`{"events":[{"lat":1,"lon":1,"actors":["a","\u00e9",7,{"b":[]},"a"],"category":"c","escalation":1,"occurred_at":"2026-11-22T00:00:00Z","actors":null}],"next_cursor":null}`,
		`{"pillars":{"cyber":5,"cyber":6},"pillars":[1]}`, `{"a":[[[[[[]]]]]]}`, `{"events":[],"next_cursor":"` + strings.Repeat("c", 5000) + `"}`,
	}
	for _, s := range seeds {
		for i := 0; i <= len(s); i += 1 + len(s)/8 {
			f.Add(s[:i], uint8(i))
		}
	}
	all := endpoint.All()
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		e := all[int(which)%len(all)]
		col := e.Start(config)
		_, err := col.Read(strings.NewReader(body), 1)
		valid := json.Valid([]byte(body))
		if valid && errors.Is(err, client.ErrNotJSON) || !valid && err == nil {
			t.Fatalf("%s: json.Valid %v, but the reader says %v", e.Label, valid, err)
		}
		if err != nil {
			return
		}
		for _, s := range col.Result().Samples {
			if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
				t.Fatalf("%s: %s = %v", e.Label, s.Metric.Name, s.Value)
			}
			for _, l := range s.Labels {
				if !utf8.ValidString(l) {
					t.Fatalf("%s: label %q is not UTF-8", e.Label, l)
				}
			}
		}
	})
}
