package endpoint

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

// sample adds a series, its label values looked up in labels, the first
// map holding a label winning.
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

func (r *Result) drop(m *Metric, n int) {
	if r.Dropped == nil {
		r.Dropped = map[string]int{}
	}
	r.Dropped[m.Name] += n
}

// Invalid counts the values left out, by the spec's name of their field or
// list, and describes the first of them.
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

// count counts one value left out under field, and reports whether it is
// the first, which the caller then describes in First.
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
	for i, f := range col.e.Fields {
		st := col.fields[i]
		if f.Metric == nil || !st.seen || st.bad != "" {
			continue
		}
		v, labels := st.v.Num, []map[string]string{f.Labels, col.e.Labels, {"endpoint": col.e.Label}}
		if f.AsLabel != "" {
			v = 1
			labels = append([]map[string]string{{f.AsLabel: st.v.Str}}, labels...)
		}
		r.sample(f.Metric, v, labels...)
	}
	for _, f := range col.folds {
		f.emit(&r, col.e.Labels)
	}
	col.withoutKeys(&r)
	return r
}

// withoutKeys leaves out every series whose label value, a name from the
// API's data, the door would change: a piece of a key, as it is or behind a
// layer of escapes (HTML entities, percent-encoding, base64), or escapes
// nested deeper. A label value is written to /metrics as it is, and a
// dashboard would decode it. Each is counted as an invalid value of its
// field. Only the series exported are checked, so the cost is bounded by
// the label caps, not by what the API sends.
func (col *Collection) withoutKeys(r *Result) {
	if col.c.Keys == nil {
		return
	}
	kept := r.Samples[:0]
	for _, s := range r.Samples {
		if field, bad := col.namedLabelHoldsKey(s); bad {
			r.Invalid.add(field, field+": a name holds a piece of an API key behind escapes, or escapes nested too deep to judge")
			continue
		}
		kept = append(kept, s)
	}
	r.Samples = kept
}

// namedLabelHoldsKey reports whether a label value of s that came from the
// API's data holds a piece of a key, and the field it is counted under.
func (col *Collection) namedLabelHoldsKey(s Sample) (field string, holds bool) {
	for i, name := range s.Metric.Labels {
		if _, fixed := col.e.Labels[name]; fixed || name == "endpoint" {
			continue // from the description, not the API
		}
		if col.c.Keys.Upstream(s.Labels[i]) != s.Labels[i] {
			return col.countedAs(s.Metric), true
		}
	}
	return "", false
}

// countedAs is the field of global_stability_invalid_values that a bad
// label value of m counts under: the document field it fills, or the list.
func (col *Collection) countedAs(m *Metric) string {
	for _, f := range col.e.Fields {
		if f.Metric == m {
			return f.counted()
		}
	}
	if col.e.List != nil {
		return col.e.List.Name
	}
	return m.Name
}
