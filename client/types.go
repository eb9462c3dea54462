package client

import (
	"fmt"
	"slices"
	"time"
)

// Pillar names one of the four pillars of the composite score.
type Pillar string

// The four pillars of spec section 1.
const (
	PillarConflict    Pillar = "conflict"
	PillarCyber       Pillar = "cyber"
	PillarSupplyChain Pillar = "supply_chain"
	PillarMacro       Pillar = "macro"
)

// Pillars returns the four pillars in the spec's order.
func Pillars() []Pillar {
	return []Pillar{PillarConflict, PillarCyber, PillarSupplyChain, PillarMacro}
}

// Valid reports whether p is one of the four pillars of the spec.
func (p Pillar) Valid() bool { return slices.Contains(Pillars(), p) }

// ParsePillar returns the pillar named s, or an error listing the valid names.
func ParsePillar(s string) (Pillar, error) {
	if p := Pillar(s); p.Valid() {
		return p, nil
	}
	return "", fmt.Errorf("unknown pillar %q: want one of %v", s, Pillars())
}

// The result types hold what the exporter exports, each value only when
// it is valid. A value that was missing, null, of the wrong JSON type or
// outside what the spec allows is left out (a nil field, an absent map key,
// an item never handed over) and counted in Invalid. Fields the exporter
// never exports (an event's actors, a briefing's headline, the summary's
// text) are skipped unread, so nothing in them can fail a response.

// Overview is the stability overview of spec 2.1 (GET /v1/global-stability).
type Overview struct {
	Score   *float64           // composite score, 0–100, lower is more stable
	Trend   *string            // direction of the composite score; the spec leaves the words open
	Pillars map[Pillar]float64 // the valid ones of the four, each 0–100
	AsOf    *time.Time
	Invalid Invalid
}

// Indicator is one sub-indicator of a pillar drilldown.
type Indicator struct {
	Key   string
	Value float64
}

// Drilldown is the pillar drilldown of spec 2.2
// (GET /v1/global-stability/pillar/{pillar}), without its indicators,
// which are handed over one by one as they are decoded.
type Drilldown struct {
	Pillar   Pillar   // the pillar asked for; a response naming another fails
	Delta24h *float64 // unit not given by the spec; passed through as is
	AsOf     *time.Time
	Invalid  Invalid // indicators: the items left out
}

// Event is a conflict event of spec 2.3 (GET /v1/conflict): the fields the
// exporter aggregates, all valid.
type Event struct {
	Lat        float64 // -90 to 90
	Lon        float64 // -180 to 180
	Category   string
	Escalation float64 // range not given by the spec; passed through as is
	OccurredAt time.Time
}

// Briefing is a daily briefing of spec 2.4 (GET /v1/briefings): its
// publication time, which is all the exporter uses.
type Briefing struct {
	PublishedAt time.Time
}

// Summary is the rolling summary of spec 2.5 (GET /v1/summaries): when it
// was last refreshed. Its text is not read.
type Summary struct {
	AsOf    *time.Time
	Invalid Invalid
}

// Walk is what a walk through the pages of a list left out.
type Walk struct {
	Pages      int
	Invalid    Invalid // events or briefings: the items left out
	Duplicates int     // events whose id an earlier event of the walk had
}

// Invalid counts the values of a response that were left out, by the
// spec's name of the field or list they belong to ("score", "pillars",
// "indicators", "events"…), and describes the first of them. Its zero
// value means nothing was left out.
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
