// SPDX-License-Identifier: Apache-2.0

package endpoint

import "maps"

// Result is what a collection gives once every page has been read.
type Result struct {
	Samples    []Sample
	Invalid    Invalid
	Dropped    map[string]int // metric name → series left out by a cap
	Duplicates int            // items of List.Unique repeated across pages, counted once
}

// Sample is one series: its metric, label values in the metric's order.
type Sample struct {
	Metric *Metric
	Labels []string
	Value  float64
}

// sample adds a series, each label's value from the first of labels holding it.
func (r *Result) sample(m *Metric, v float64, labels ...map[string]string) {
	values := make([]string, len(m.Labels))
	for i, name := range m.Labels {
		for _, l := range labels {
			if s, ok := l[name]; ok {
				values[i] = s
				break
			}
		}
	}
	r.Samples = append(r.Samples, Sample{Metric: m, Labels: values, Value: v})
}

// Invalid counts the values left out by field or list, and describes the first.
type Invalid struct {
	Counts map[string]int
	First  string // e.g. "events[3].lat: 91 is not a latitude (page 2)"
}

// Total is the number of values left out.
func (v Invalid) Total() int {
	n := 0
	for _, c := range v.Counts {
		n += c
	}
	return n
}

func (v *Invalid) add(field, detail string) {
	if v.count(field) {
		v.First = detail
	}
}

// count counts a value left out and reports whether it is the first.
func (v *Invalid) count(field string) (first bool) {
	if v.Counts == nil {
		v.Counts = map[string]int{}
		first = true
	}
	v.Counts[field]++
	return first
}

// Result finishes the collection: the fields' series and the folds'.
func (col *Collection) Result() Result {
	r := col.result
	r.Dropped = maps.Clone(r.Dropped) // the folds add to it: each result its own
	for i, f := range col.e.Fields {
		if st := col.fields[i]; f.Metric != nil && st.bad == "" {
			v, own := st.v.Num, map[string]string{"endpoint": col.e.Label}
			if f.AsLabel != "" {
				v, own[f.AsLabel] = 1, st.v.Str
			}
			r.sample(f.Metric, v, own, f.Labels, col.e.Labels)
		}
	}
	for _, f := range col.folds {
		f.emit(&r, col.e.Labels)
	}
	col.onlyReadable(&r)
	return r
}

// onlyReadable leaves out, counted as invalid, each series with a label
// value from the API that Redactor.Readable would not quote as it is: a
// label value is quoted text like any other, shown as it is by /metrics and
// Grafana, so it follows the same rule (a lone & or %, as in "Riots &
// protests", is kept). Only exported series are checked: the caps bound the cost.
func (col *Collection) onlyReadable(r *Result) {
	kept := r.Samples[:0]
	for _, s := range r.Samples {
		if field := col.unreadable(s); field != "" {
			r.Invalid.add(field, field+": a name holds a piece of an API key or does not read plainly (an escape, a control character or a token that may be a key)")
		} else {
			kept = append(kept, s)
		}
	}
	r.Samples = kept
}

// unreadable is the field s counts under if a label value is not readable, or "".
func (col *Collection) unreadable(s Sample) string {
	for i, name := range s.Metric.Labels {
		if _, fixed := col.e.Labels[name]; fixed || name == "endpoint" || col.c.Keys.Readable(s.Labels[i]) == s.Labels[i] {
			continue // from the description, not the API, or readable
		}
		for _, f := range col.e.Fields {
			if f.Metric == s.Metric {
				return f.counted()
			}
		}
		for _, f := range col.e.List.Folds { // a fold's: a count by a field of Each counts under it
			if by, ok := f.(CountBy); ok && by.Metric == s.Metric && col.e.List.Item[col.e.List.itemIndex(by.Field)].Each {
				return by.Field
			}
		}
		return col.e.List.Name
	}
	return ""
}
