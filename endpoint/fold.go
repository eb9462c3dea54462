// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"cmp"
	"hash/maphash"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Fold is what a list's valid items become, one at a time: memory is
// bounded by the fold's caps, never by the list.
type Fold interface {
	metrics() []*Metric
	start(l *List, c Config) folding
}

// folding is a fold's state in one collection.
type folding struct {
	add  func(item []fieldState)
	emit func(r *Result, labels map[string]string)
}

// Count counts the items.
type Count struct{ Metric *Metric }

func (f Count) metrics() []*Metric { return []*Metric{f.Metric} }
func (f Count) start(*List, Config) folding {
	n := 0
	return folding{func([]fieldState) { n++ }, func(r *Result, labels map[string]string) { r.sample(f.Metric, float64(n), labels) }}
}

// CountBy counts the items per name in Field (of a field of Each: per
// name it holds, an item once per name), exporting the busiest
// MaxLabelValues, ties by name. For memory only the first
// max(10×MaxLabelValues, minTracked) names are counted; later ones,
// however busy, count as dropped, by hash, up to maxUntracked (past it,
// the count is a floor).
type CountBy struct {
	Metric *Metric
	Field  string
}

const (
	minTracked   = 10_000
	maxUntracked = 250_000
)

func (f CountBy) metrics() []*Metric { return []*Metric{f.Metric} }
func (f CountBy) start(l *List, c Config) folding {
	field, counts, untracked, seed := l.itemIndex(f.Field), map[string]int{}, map[uint64]struct{}{}, maphash.MakeSeed()
	each, limit := l.Item[field].Each, max(10*c.MaxLabelValues, minTracked)
	// A label value numbered is counted by its number, its text not hashed
	// again; counts holds the others until the end.
	type named struct {
		name string
		n    int
	}
	var numbered []named
	tracked := 0
	count := func(v Value) {
		if k := v.name - 1; k >= 0 {
			if k >= len(numbered) {
				numbered = append(numbered, make([]named, k+1-len(numbered))...)
			}
			if numbered[k].n > 0 || tracked < limit {
				tracked += boolToInt(numbered[k].n == 0)
				numbered[k] = named{v.Str, numbered[k].n + 1}
				return
			}
		} else if _, ok := counts[v.Str]; ok || tracked < limit {
			tracked += boolToInt(!ok)
			counts[v.Str]++
			return
		}
		if len(untracked) < maxUntracked {
			untracked[maphash.String(seed, v.Str)] = struct{}{}
		}
	}
	return folding{func(item []fieldState) {
		if !each {
			count(item[field].v)
		}
		for _, v := range item[field].names {
			count(v)
		}
	}, func(r *Result, labels map[string]string) {
		for _, e := range numbered {
			if e.n > 0 {
				counts[e.name] = e.n
			}
		}
		names := busiest(counts, func(n int) int { return n }, c.MaxLabelValues, strings.Compare)
		for _, n := range names {
			r.sample(f.Metric, float64(counts[n]), labels, map[string]string{f.Metric.Labels[0]: n})
		}
		r.Dropped[f.Metric.Name] += len(counts) - len(names) + len(untracked)
	}}
}

// CapsKeep says what a cap keeps of each capped metric, by its fold, for the
// help texts: the busiest series, or the first keys in the API's order.
func CapsKeep() string {
	kept := map[bool][]string{} // by whether the fold keeps the first keys
	for _, e := range All() {
		if e.List == nil {
			continue
		}
		for _, f := range e.List.Folds {
			_, firstKeys := f.(FirstKeys)
			for _, m := range f.metrics() {
				if m.Capped && !slices.Contains(kept[firstKeys], m.Name) {
					kept[firstKeys] = append(kept[firstKeys], m.Name)
				}
			}
		}
	}
	return "the busiest series of " + strings.Join(kept[false], ", ") + " are kept, and the first keys of " + strings.Join(kept[true], ", ") + " in the API's order"
}

// busiest returns up to limit keys of m, most counted first, ties by less;
// counts sit beside their keys (a map lookup a comparison would slow the sort).
func busiest[K comparable, V any](m map[K]V, count func(V) int, limit int, less func(a, b K) int) []K {
	type counted struct {
		key K
		n   int
	}
	all := make([]counted, 0, len(m))
	for k, v := range m {
		all = append(all, counted{k, count(v)})
	}
	slices.SortFunc(all, func(a, b counted) int { return cmp.Or(cmp.Compare(b.n, a.n), less(a.key, b.key)) })
	keys := make([]K, min(len(all), limit))
	for i := range keys {
		keys[i] = all[i].key
	}
	return keys
}

// FirstKeys exports each item's Value under its Key, for the first
// MaxLabelValues distinct keys; a repeated key is dropped (two series of
// one label set would make the scrape invalid).
type FirstKeys struct {
	Metric     *Metric
	Key, Value string
}

func (f FirstKeys) metrics() []*Metric { return []*Metric{f.Metric} }
func (f FirstKeys) start(l *List, c Config) folding {
	key, value, seen, dropped := l.itemIndex(f.Key), l.itemIndex(f.Value), map[string]bool{}, 0
	var kept []Value // key in Str, value in Num
	return folding{func(item []fieldState) {
		if k := item[key].v.Str; !seen[k] && len(kept) < c.MaxLabelValues {
			seen[k] = true
			kept = append(kept, Value{Str: k, Num: item[value].v.Num})
		} else {
			dropped++
		}
	}, func(r *Result, labels map[string]string) {
		for _, kv := range kept {
			r.sample(f.Metric, kv.Num, labels, map[string]string{f.Metric.Labels[len(f.Metric.Labels)-1]: kv.Str})
		}
		r.Dropped[f.Metric.Name] += dropped
	}}
}

// Cells counts the items and keeps the highest Value per cell of a grid of
// Config.GridDegrees, for the busiest MaxLabelValues cells, labelled with
// the cell's centre (at 5°, latitudes in [-30, -25) are -27.5). The North
// Pole joins the cell below it, and 180° is -180°.
type Cells struct {
	Count, Max      *Metric
	Lat, Lon, Value string
}

type cell struct{ lat, lon int32 } // the south-west corner, in cell sizes: a map key of 8 bytes hashes fastest

func (f Cells) metrics() []*Metric { return []*Metric{f.Count, f.Max} }
func (f Cells) start(l *List, c Config) folding {
	lat, lon, value, size := l.itemIndex(f.Lat), l.itemIndex(f.Lon), l.itemIndex(f.Value), c.GridDegrees
	type stats struct {
		at    cell
		count int
		max   float64
	}
	// Each cell's stats by their index in all: no allocation per cell.
	cells, all, top := make(map[cell]int, 1024), []stats{}, int32(math.Ceil(90/size))-1
	centres := map[int32]string{} // a row's or a column's, formatted once, not once a cell
	centre := func(idx int32) string {
		if _, ok := centres[idx]; !ok {
			// Rounded so that 0.1° cells read "0.15", not "0.15000000000000002".
			centres[idx] = strconv.FormatFloat(math.Round((float64(idx)+0.5)*size*1e6)/1e6, 'f', -1, 64)
		}
		return centres[idx]
	}
	return folding{func(item []fieldState) {
		x, v := item[lon].v.Num, item[value].v.Num
		if x == 180 {
			x = -180
		}
		k := cell{lat: min(int32(math.Floor(item[lat].v.Num/size)), top), lon: int32(math.Floor(x / size))}
		i, ok := cells[k]
		if !ok {
			i, cells[k], all = len(all), len(all), append(all, stats{at: k, max: v})
		}
		all[i].count, all[i].max = all[i].count+1, math.Max(all[i].max, v)
	}, func(r *Result, labels map[string]string) {
		kept := all // in the order met: sorting a thousand cells costs as much as reading their events
		if len(all) > c.MaxLabelValues {
			kept = nil
			for _, k := range busiest(cells, func(i int) int { return all[i].count }, c.MaxLabelValues, func(a, b cell) int { return cmp.Or(cmp.Compare(a.lat, b.lat), cmp.Compare(a.lon, b.lon)) }) {
				kept = append(kept, all[cells[k]])
			}
		}
		at := map[string]string{} // a cell's labels, copied by sample
		for _, st := range kept {
			at["lat"], at["lon"] = centre(st.at.lat), centre(st.at.lon)
			r.sample(f.Count, float64(st.count), labels, at)
			r.sample(f.Max, st.max, labels, at)
		}
		r.Dropped[f.Count.Name] += len(all) - len(kept)
		r.Dropped[f.Max.Name] += len(all) - len(kept)
	}}
}

// Max is the highest Field of the items; absent when there are none.
type Max struct {
	Metric *Metric
	Field  string
}

// Newest is the latest instant of Field: its Max (Timestamp gives seconds).
type Newest = Max

func (f Max) metrics() []*Metric { return []*Metric{f.Metric} }
func (f Max) start(l *List, _ Config) folding {
	field, highest := l.itemIndex(f.Field), math.Inf(-1) // the rules let no infinity through
	return folding{func(item []fieldState) {
		if v := item[field].v.Num; v > highest {
			highest = v
		}
	}, func(r *Result, labels map[string]string) {
		if !math.IsInf(highest, -1) {
			r.sample(f.Metric, highest, labels)
		}
	}}
}

// Mean is the mean of Field, described as Max is; absent when there are
// no items. A running mean: a sum of two values of 1e308 would overflow.
type Mean Max

func (f Mean) metrics() []*Metric { return []*Metric{f.Metric} }
func (f Mean) start(l *List, _ Config) folding {
	field, n, mean := l.itemIndex(f.Field), 0.0, 0.0
	return folding{func(item []fieldState) { n++; mean += item[field].v.Num/n - mean/n }, func(r *Result, labels map[string]string) {
		if n > 0 {
			r.sample(f.Metric, mean, labels)
		}
	}}
}
