package endpoint

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"time"
)

// Fold is what the valid items of a list become: one item at a time, so
// that memory is bounded by the fold (its caps), never by the list.
type Fold interface {
	metrics() []*Metric
	start(l *List, c Config) folding
}

// folding is a fold's state for one collection.
type folding interface {
	add(item []Value)
	emit(r *Result, e *Endpoint)
}

// Count counts the items.
type Count struct{ Metric *Metric }

func (f Count) metrics() []*Metric          { return []*Metric{f.Metric} }
func (f Count) start(*List, Config) folding { return &counting{metric: f.Metric} }

type counting struct {
	metric *Metric
	n      int
}

func (c *counting) add([]Value) { c.n++ }
func (c *counting) emit(r *Result, e *Endpoint) {
	r.sample(c.metric, float64(c.n), e.Labels)
}

// CountBy counts the items per value of a name field (a category), keeping
// the busiest MaxLabelValues names. Names are counted one by one for the
// first ten times that many distinct names, in the order they first
// appear (a bound on memory); the items of a name first seen after that
// count in the total only, so such a name is never exported, however busy,
// and counts as one series dropped (by an 8-byte hash, up to maxUntracked
// names: past that, the count is a floor).
type CountBy struct {
	Metric *Metric
	Field  string
}

const maxUntracked = 250_000

func (f CountBy) metrics() []*Metric { return []*Metric{f.Metric} }
func (f CountBy) start(l *List, c Config) folding {
	return &countingBy{metric: f.Metric, field: l.itemIndex(f.Field), limit: c.MaxLabelValues,
		counts: map[string]int{}, untracked: map[uint64]struct{}{}, seed: maphash.MakeSeed()}
}

type countingBy struct {
	metric    *Metric
	field     int
	limit     int
	counts    map[string]int
	untracked map[uint64]struct{}
	seed      maphash.Seed
}

func (c *countingBy) add(item []Value) {
	name := item[c.field].Str
	if _, ok := c.counts[name]; ok || len(c.counts) < 10*c.limit {
		c.counts[name]++
	} else if len(c.untracked) < maxUntracked {
		c.untracked[maphash.String(c.seed, name)] = struct{}{}
	}
}

func (c *countingBy) emit(r *Result, e *Endpoint) {
	names := busiest(c.counts, c.limit, func(a, b string) int { return cmp.Compare(a, b) })
	for _, n := range names {
		r.sample(c.metric, float64(c.counts[n]), e.Labels, map[string]string{c.metric.Labels[0]: n})
	}
	r.drop(c.metric, len(c.counts)-len(names)+len(c.untracked))
}

// busiest returns up to limit keys of counts, most counted first, ties in
// the order of less. The counts are sorted beside their keys: looked up in
// the map by the sort's comparisons, they were a quarter of a page's CPU.
func busiest[K comparable](counts map[K]int, limit int, less func(a, b K) int) []K {
	type counted struct {
		key K
		n   int
	}
	all := make([]counted, 0, len(counts))
	for k, n := range counts {
		all = append(all, counted{k, n})
	}
	slices.SortFunc(all, func(a, b counted) int { return cmp.Or(cmp.Compare(b.n, a.n), less(a.key, b.key)) })
	keys := make([]K, min(len(all), limit))
	for i := range keys {
		keys[i] = all[i].key
	}
	return keys
}

// FirstKeys exports each item's Value under its Key, for the first
// MaxLabelValues distinct keys in the API's order. Keys past that, and a
// key repeated (two series of one label set would make the scrape
// invalid), are dropped. Only the kept keys are remembered.
type FirstKeys struct {
	Metric     *Metric
	Key, Value string
}

func (f FirstKeys) metrics() []*Metric { return []*Metric{f.Metric} }
func (f FirstKeys) start(l *List, c Config) folding {
	return &firstKeys{metric: f.Metric, key: l.itemIndex(f.Key), value: l.itemIndex(f.Value), limit: c.MaxLabelValues, seen: map[string]bool{}}
}

type firstKeys struct {
	metric     *Metric
	key, value int
	limit      int
	kept       []Value // key in Str, value in Num
	seen       map[string]bool
	dropped    int
}

func (f *firstKeys) add(item []Value) {
	k := item[f.key].Str
	if f.seen[k] || len(f.kept) >= f.limit {
		f.dropped++
		return
	}
	f.seen[k] = true
	f.kept = append(f.kept, Value{Str: k, Num: item[f.value].Num})
}

func (f *firstKeys) emit(r *Result, e *Endpoint) {
	label := f.metric.Labels[len(f.metric.Labels)-1]
	for _, kv := range f.kept {
		r.sample(f.metric, kv.Num, e.Labels, map[string]string{label: kv.Str})
	}
	r.drop(f.metric, f.dropped)
}

// Cells counts the items per cell of a grid of Config.GridDegrees and
// keeps the highest Value per cell, for the busiest MaxLabelValues cells,
// labelled lat and lon with the cell's centre. Cells are aligned to
// multiples of the size (at 5°, latitudes in [-30, -25) are the cell
// -27.5); the North Pole joins the cell below it, and 180° is -180°.
// Memory is bounded by the cells on Earth, whatever the number of items.
type Cells struct {
	Count, Max      *Metric
	Lat, Lon, Value string
}

func (f Cells) metrics() []*Metric { return []*Metric{f.Count, f.Max} }
func (f Cells) start(l *List, c Config) folding {
	return &grid{Cells: f, lat: l.itemIndex(f.Lat), lon: l.itemIndex(f.Lon), value: l.itemIndex(f.Value),
		degrees: c.GridDegrees, limit: c.MaxLabelValues, cells: map[cell]*cellStats{}}
}

type cell struct{ lat, lon int } // the south-west corner, in cell sizes

type cellStats struct {
	count int
	max   float64
}

type grid struct {
	Cells
	lat, lon, value int
	degrees         float64
	limit           int
	cells           map[cell]*cellStats
}

func (g *grid) add(item []Value) {
	lat, lon, v := item[g.lat].Num, item[g.lon].Num, item[g.value].Num
	if lon == 180 {
		lon = -180
	}
	c := cell{lat: int(math.Floor(lat / g.degrees)), lon: int(math.Floor(lon / g.degrees))}
	if top := int(math.Ceil(90/g.degrees)) - 1; c.lat > top {
		c.lat = top
	}
	st := g.cells[c]
	if st == nil {
		st = &cellStats{max: v}
		g.cells[c] = st
	}
	st.count++
	st.max = math.Max(st.max, v)
}

func (g *grid) emit(r *Result, e *Endpoint) {
	counts := make(map[cell]int, len(g.cells))
	for c, st := range g.cells {
		counts[c] = st.count
	}
	kept := busiest(counts, g.limit, func(a, b cell) int { return cmp.Or(cmp.Compare(a.lat, b.lat), cmp.Compare(a.lon, b.lon)) })
	centre := func(idx int) string {
		// Rounded so that 0.1° cells read "0.15", not "0.15000000000000002".
		return strconv.FormatFloat(math.Round((float64(idx)+0.5)*g.degrees*1e6)/1e6, 'f', -1, 64)
	}
	for _, c := range kept {
		labels := map[string]string{"lat": centre(c.lat), "lon": centre(c.lon)}
		r.sample(g.Count, float64(g.cells[c].count), e.Labels, labels)
		r.sample(g.Max, g.cells[c].max, e.Labels, labels)
	}
	r.drop(g.Count, len(g.cells)-len(kept))
	r.drop(g.Max, len(g.cells)-len(kept))
}

// Max is the highest Field of the items; absent when there are none.
type Max struct {
	Metric *Metric
	Field  string
}

// Newest is the latest instant of Field: its Max, as Timestamp gives an
// instant in Unix seconds.
type Newest = Max

func (f Max) metrics() []*Metric { return []*Metric{f.Metric} }
func (f Max) start(l *List, _ Config) folding {
	return &extreme{metric: f.Metric, field: l.itemIndex(f.Field)}
}

type extreme struct {
	metric *Metric
	field  int
	max    float64
	any    bool
}

func (x *extreme) add(item []Value) {
	if v := item[x.field].Num; !x.any || v > x.max {
		x.max, x.any = v, true
	}
}

func (x *extreme) emit(r *Result, e *Endpoint) {
	if x.any {
		r.sample(x.metric, x.max, e.Labels)
	}
}

// Mean is the mean of Field; absent when there are no items. It is a
// running mean rather than sum/count: two values of 1e308 would overflow
// a sum to +Inf, while each step of a running mean is a weighted average
// of two finite values.
type Mean struct {
	Metric *Metric
	Field  string
}

func (f Mean) metrics() []*Metric { return []*Metric{f.Metric} }
func (f Mean) start(l *List, _ Config) folding {
	return &mean{metric: f.Metric, field: l.itemIndex(f.Field)}
}

type mean struct {
	metric *Metric
	field  int
	n      int
	mean   float64
}

func (m *mean) add(item []Value) {
	m.n++
	n := float64(m.n)
	m.mean += item[m.field].Num/n - m.mean/n
}

func (m *mean) emit(r *Result, e *Endpoint) {
	if m.n > 0 {
		r.sample(m.metric, m.mean, e.Labels)
	}
}

// unixSeconds keeps fractions of a second, for any year: UnixNano would
// overflow outside 1678-2262 and turn Go's zero time into a date in 1754.
func unixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/1e9
}
