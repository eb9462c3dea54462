// SPDX-License-Identifier: Apache-2.0

// Package endpoint holds the rules about the API's data: one description
// per endpoint (api.go) of what is read, how each value is judged and what
// series it becomes, and the streaming reader and folds that follow from it.
//
// Strict about the document, lenient about values: a body that is not the
// spec's document (not a JSON object, a page without its list or
// next_cursor, another pillar's drilldown) fails whole; a bad value is left
// out and counted under its field, a bad item costs that item only. A key
// read given twice in one object, whatever it holds, is trusted in neither
// place: the document fails, or in a list's item, the item is left out and
// counted.
package endpoint

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/global-stability/global_stability_exporter/client"
	"github.com/global-stability/global_stability_exporter/internal/redact"
)

// Endpoint describes one endpoint of the API.
type Endpoint struct {
	Label   string            // the path after /v1/, its parameter filled in: the endpoint label of its series
	Group   string            // the collector that fetches it, off with --no-collector.<Group>; "" is always on
	Limit   client.Limit      // the body limit that applies: a document's or a page's
	Paged   bool              // it answers pages of List with next_cursor, walked to the last; List is required
	Labels  map[string]string // label values every series of it carries (a drilldown's pillar)
	Fields  []Field           // the values of the document read beside its list
	List    *List             // the document's list of items, if it has one
	Refresh time.Duration     // the spec's refresh interval, the setting's default (Config.Refresh holds what applies)
}

// Field is one value of a document or of a list item.
type Field struct {
	Name     string            // the spec's; "a.b" is member b of object a, counted as a when bad
	Rule     Rule              // judges the raw JSON value
	Metric   *Metric           // a valid document value's series; nil for an item's field or a value only checked
	Labels   map[string]string // label values of that series beyond the endpoint's
	AsLabel  string            // the label of Metric the value fills (the trend word); the sample is then 1
	Must     string            // the value a valid document field must have, or the document is the wrong answer
	Optional bool              // an item field that may be missing or bad without costing the item
	Each     bool              // an item field that is an array, Rule judging each value: a bad one costs itself only
}

// counted is the field label a bad value counts under.
func (f Field) counted() string {
	name, _, _ := strings.Cut(f.Name, ".")
	return name
}

// List is a list of items, read one item at a time, never held whole.
type List struct {
	Name   string
	Item   []Field // an item with a required one bad is left out, counted under Name
	Unique string  // an item field whose repeats (an event a shifting list puts on two pages) count once
	Folds  []Fold  // what the valid items become
}

// Metric is one series name with its labels.
type Metric struct {
	Name   string
	Help   string
	Labels []string
	Capped bool // label values from upstream data, under --collector.max-label-values
}

// Config is what judging and folding need at run time.
type Config struct {
	MaxLabelValues int                      // series of a capped metric per scrape (per pillar for indicators)
	MaxSeries      int                      // series of the API's data per scrape, all endpoints together (the collector shares them)
	GridDegrees    float64                  // cell size of Cells
	Keys           *redact.Redactor         // a name holding a piece of a key is invalid
	Now            func() time.Time         // time.Now if nil
	Store          *Store                   // keeps answers for reuse while the API allows; nil asks every time
	Refresh        map[string]time.Duration // by endpoint label: as_of T is not asked for before T+Refresh; none or 0 is off

	interned map[string]Value // of a collection: names checked valid (see LabelValue)
	latest   time.Time        // of a collection: its start + MaxFutureSkew, what its timestamps are judged by
}

// Defaults of Config, for a field left 0 (the settings refuse less than 1).
const (
	DefaultMaxLabelValues = 1000
	DefaultMaxSeries      = 5000
	DefaultGridDegrees    = 5.0
)

// withDefaults gives each setting left unset (0, or below 1) its default.
func (c Config) withDefaults() Config {
	c.MaxSeries = cmp.Or(max(c.MaxSeries, 0), DefaultMaxSeries)
	c.MaxLabelValues = min(cmp.Or(max(c.MaxLabelValues, 0), DefaultMaxLabelValues), c.MaxSeries) // no metric may keep more
	c.GridDegrees = cmp.Or(max(c.GridDegrees, 0), DefaultGridDegrees)
	c.interned, c.latest = map[string]Value{}, c.clock().Add(MaxFutureSkew)
	return c
}

// clock reads Now, or time.Now if it is nil.
func (c *Config) clock() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// InvalidFields lists e's field labels of global_stability_invalid_values.
func (e *Endpoint) InvalidFields() []string {
	var out []string
	for _, f := range e.Fields {
		if f.Metric != nil && !slices.Contains(out, f.counted()) {
			out = append(out, f.counted())
		}
	}
	if e.List != nil {
		out = append(out, e.List.Name)
		for _, f := range e.List.Item {
			if f.Each {
				out = append(out, f.Name)
			}
		}
	}
	return out
}

// Metrics lists the series the endpoint's data becomes, each once: fields
// may share one (each pillar's score), folds never (their series would collide).
func (e *Endpoint) Metrics() []*Metric {
	var out []*Metric
	for _, f := range e.Fields {
		if f.Metric != nil && !slices.Contains(out, f.Metric) {
			out = append(out, f.Metric)
		}
	}
	if e.List != nil {
		for _, fold := range e.List.Folds {
			out = append(out, fold.metrics()...)
		}
	}
	return out
}

// itemIndex panics for a field the list does not read (TestDescriptions).
func (l *List) itemIndex(name string) int {
	if i := index(l.Item, name); i >= 0 {
		return i
	}
	panic(fmt.Sprintf("list %s reads no field %q", l.Name, name))
}
