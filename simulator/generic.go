// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	described "github.com/global-stability/global_stability_exporter/endpoint"
)

// genericBody serves an endpoint described in package endpoint that the
// simulator's world does not model: every field the description reads,
// with a value its rule accepts, and a list of three items. So an endpoint
// added to the descriptions is served (and --demo shows it) before anyone
// teaches the world about it.
func genericBody(e *described.Endpoint, now time.Time) []byte {
	doc := map[string]any{}
	for i, f := range e.Fields {
		v := example(f, i, now)
		if obj, member, nested := strings.Cut(f.Name, "."); nested {
			m, _ := doc[obj].(map[string]any)
			if m == nil {
				m = map[string]any{}
				doc[obj] = m
			}
			m[member] = v
			continue
		}
		doc[f.Name] = v
	}
	if e.List != nil {
		items := []map[string]any{}
		for i := range 3 {
			item := map[string]any{}
			for _, f := range e.List.Item {
				item[f.Name] = example(f, i, now)
			}
			items = append(items, item)
		}
		doc[e.List.Name] = items
	}
	if e.Paged {
		doc["next_cursor"] = nil
	}
	return mustJSON(doc)
}

// example is a value of field f (the i-th of its kind) that the field's
// rule accepts: the first of a few plausible candidates that it does.
func example(f described.Field, i int, now time.Time) any {
	if f.Must != "" {
		return f.Must
	}
	c := &described.Config{Now: func() time.Time { return now }}
	for _, candidate := range []any{
		float64(40 + i),
		fmt.Sprintf("%s_%d", strings.ReplaceAll(f.Name, ".", "_"), i),
		now.Add(-time.Duration(i) * time.Minute).UTC().Format(time.RFC3339),
	} {
		raw, _ := json.Marshal(candidate)
		if _, bad := f.Rule(raw, c); bad == "" {
			return candidate
		}
	}
	return nil // no candidate fits: the rule will count it invalid
}
