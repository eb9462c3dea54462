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
	if v.Counts == nil {
		v.Counts = map[string]int{}
		v.First = detail
	}
	v.Counts[field]++
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
		f.emit(&r, col.e)
	}
	return r
}
