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

// Overview is the stability overview of spec 2.1 (GET /v1/global-stability).
type Overview struct {
	Score   float64 // composite score, 0–100, lower is more stable
	Trend   string  // direction of the composite score; the spec leaves the words open
	Pillars map[Pillar]float64
	AsOf    time.Time
}

// Indicator is one sub-indicator of a pillar drilldown.
type Indicator struct {
	Key   string
	Value float64
}

// Drilldown is the pillar drilldown of spec 2.2
// (GET /v1/global-stability/pillar/{pillar}).
type Drilldown struct {
	Pillar     Pillar
	Score      float64
	Delta24h   float64 // unit not given by the spec; passed through as is
	Indicators []Indicator
	AsOf       time.Time
}

// Event is a conflict event of spec 2.3 (GET /v1/conflict).
type Event struct {
	ID         string
	Lat        float64
	Lon        float64
	Actors     []string
	Category   string
	Escalation float64 // range not given by the spec; passed through as is
	OccurredAt time.Time
}

// Briefing is a daily briefing of spec 2.4 (GET /v1/briefings).
type Briefing struct {
	ID          string
	Headline    string
	Summary     string
	Tags        []string
	PublishedAt time.Time
}

// Summary is the rolling summary of spec 2.5 (GET /v1/summaries).
type Summary struct {
	Summary string
	AsOf    time.Time
}

// The wire types mirror the JSON with pointer fields, so that a missing field
// and a null (both nil) are told apart from a zero value.

type wireOverview struct {
	Score   *float64             `json:"score"`
	Trend   *string              `json:"trend"`
	Pillars *map[string]*float64 `json:"pillars"`
	AsOf    *string              `json:"as_of"`
}

type wireIndicator struct {
	Key   *string  `json:"key"`
	Value *float64 `json:"value"`
}

type wireDrilldown struct {
	Pillar     *string           `json:"pillar"`
	Score      *float64          `json:"score"`
	Delta24h   *float64          `json:"delta_24h"`
	Indicators *[]*wireIndicator `json:"indicators"`
	AsOf       *string           `json:"as_of"`
}

type wireBriefing struct {
	ID          *string   `json:"id"`
	Headline    *string   `json:"headline"`
	Summary     *string   `json:"summary"`
	Tags        *[]string `json:"tags"`
	PublishedAt *string   `json:"published_at"`
}

type wireSummary struct {
	Summary *string `json:"summary"`
	AsOf    *string `json:"as_of"`
}

// fields collects the first problem found while converting a wire value, so
// that conversion code reads as a list of fields rather than a ladder of ifs.
type fields struct {
	prefix string // "events[3]." for an item of a list
	field  string
	err    error
}

func (f *fields) fail(name string, err error) {
	if f.err == nil {
		f.field, f.err = f.prefix+name, err
	}
}

func (f *fields) str(name string, v *string) string {
	if v == nil {
		f.fail(name, errMissing)
		return ""
	}
	return *v
}

func (f *fields) num(name string, v *float64) float64 {
	if v == nil {
		f.fail(name, errMissing)
		return 0
	}
	return *v
}

func (f *fields) score(name string, v *float64) float64 {
	s := f.num(name, v)
	if v != nil && (s < 0 || s > 100) {
		f.fail(name, fmt.Errorf("%g is outside the spec's 0–100 score scale", s))
	}
	return s
}

func (f *fields) strings(name string, v *[]string) []string {
	if v == nil {
		f.fail(name, errMissing)
		return nil
	}
	return *v
}

func (f *fields) time(name string, v *string) time.Time {
	if v == nil {
		f.fail(name, errMissing)
		return time.Time{}
	}
	t, err := ParseTimestamp(*v)
	if err != nil {
		f.fail(name, err)
	}
	return t
}

func (w *wireOverview) convert() (Overview, *fields) {
	var f fields
	o := Overview{
		Score: f.score("score", w.Score),
		Trend: f.str("trend", w.Trend),
		AsOf:  f.time("as_of", w.AsOf),
	}
	if w.Pillars == nil {
		f.fail("pillars", errMissing)
		return o, &f
	}
	o.Pillars = make(map[Pillar]float64, 4)
	for _, p := range Pillars() {
		o.Pillars[p] = f.score("pillars."+string(p), (*w.Pillars)[string(p)])
	}
	return o, &f
}

func (w *wireDrilldown) convert(want Pillar) (Drilldown, *fields) {
	var f fields
	d := Drilldown{
		Pillar:   Pillar(f.str("pillar", w.Pillar)),
		Score:    f.score("score", w.Score),
		Delta24h: f.num("delta_24h", w.Delta24h),
		AsOf:     f.time("as_of", w.AsOf),
	}
	if w.Pillar != nil && d.Pillar != want {
		f.fail("pillar", fmt.Errorf("does not match the requested pillar %q", want))
	}
	if w.Indicators == nil {
		f.fail("indicators", errMissing)
		return d, &f
	}
	d.Indicators = make([]Indicator, 0, len(*w.Indicators))
	for i, wi := range *w.Indicators {
		name := fmt.Sprintf("indicators[%d]", i)
		if wi == nil {
			f.fail(name, errMissing)
			continue
		}
		d.Indicators = append(d.Indicators, Indicator{
			Key:   f.str(name+".key", wi.Key),
			Value: f.num(name+".value", wi.Value),
		})
	}
	return d, &f
}

func (w *wireBriefing) convert(f *fields) Briefing {
	return Briefing{
		ID:          f.str("id", w.ID),
		Headline:    f.str("headline", w.Headline),
		Summary:     f.str("summary", w.Summary),
		Tags:        f.strings("tags", w.Tags),
		PublishedAt: f.time("published_at", w.PublishedAt),
	}
}

func (w *wireSummary) convert() (Summary, *fields) {
	var f fields
	return Summary{
		Summary: f.str("summary", w.Summary),
		AsOf:    f.time("as_of", w.AsOf),
	}, &f
}
