// SPDX-License-Identifier: Apache-2.0

package simulator

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// The world is a pure function of (seed, time): nothing is stored, so any
// number of events costs no memory and every request for the same instant
// agrees with every other.

// pillarModel describes how one pillar's score wanders and what it is made of.
type pillarModel struct {
	name       string
	mean       float64 // centre of the walk
	weight     float64 // weight in the composite
	indicators []indicatorModel
}

// indicatorModel derives an indicator from its pillar's score:
// base + perPoint*score + noise, rounded to decimals.
type indicatorModel struct {
	key      string
	base     float64
	perPoint float64
	noise    float64
	decimals int
}

var pillarModels = []pillarModel{
	{name: "conflict", mean: 62, weight: 0.30, indicators: []indicatorModel{
		{key: "active_conflicts", base: 20, perPoint: 0.6, noise: 1, decimals: 0},
		{key: "fatalities_7d", base: 400, perPoint: 60, noise: 150, decimals: 0},
		{key: "displacement_index", base: 0.1, perPoint: 0.008, noise: 0.02, decimals: 3},
		{key: "escalation_index", base: 0.05, perPoint: 0.009, noise: 0.03, decimals: 3},
	}},
	{name: "cyber", mean: 55, weight: 0.25, indicators: []indicatorModel{
		{key: "ransomware_incidents_7d", base: 30, perPoint: 2.2, noise: 6, decimals: 0},
		{key: "critical_cves_7d", base: 5, perPoint: 0.4, noise: 2, decimals: 0},
		{key: "ddos_intensity_gbps", base: 80, perPoint: 9, noise: 25, decimals: 1},
		{key: "infrastructure_outages", base: 0, perPoint: 0.12, noise: 1, decimals: 0},
	}},
	{name: "supply_chain", mean: 45, weight: 0.25, indicators: []indicatorModel{
		{key: "shipping_cost_index", base: 900, perPoint: 35, noise: 40, decimals: 0},
		{key: "port_congestion_pct", base: 5, perPoint: 0.35, noise: 1.5, decimals: 1},
		{key: "chokepoint_disruptions", base: 0, perPoint: 0.08, noise: 0.6, decimals: 0},
		{key: "semiconductor_lead_time_weeks", base: 10, perPoint: 0.2, noise: 0.5, decimals: 1},
	}},
	{name: "macro", mean: 40, weight: 0.20, indicators: []indicatorModel{
		{key: "inflation_pct", base: 1.5, perPoint: 0.06, noise: 0.1, decimals: 2},
		{key: "sovereign_spread_bps", base: 80, perPoint: 4, noise: 6, decimals: 0},
		{key: "equity_volatility_index", base: 11, perPoint: 0.25, noise: 1, decimals: 1},
		{key: "commodity_volatility", base: 0.1, perPoint: 0.006, noise: 0.02, decimals: 3},
	}},
}

func pillarIndex(name string) int {
	for i, p := range pillarModels {
		if p.name == name {
			return i
		}
	}
	return -1
}

// The walk is a mean-reverting AR(1) process on one step per minute:
// x(m) = phi*x(m-1) + sigma*noise(m). Summing the last walkMemory steps
// gives the same value at minute m whichever request computes it (the
// older steps weigh less than phi^walkMemory ≈ 0.0006), with no state.
const (
	walkPhi    = 0.995
	walkSigma  = 0.6 // stationary spread ≈ sigma/sqrt(1-phi²) ≈ 6 points
	walkMemory = 1500
)

// pillarScore is the unrounded score of pillar i at minute m.
func (w *world) pillarScore(i int, m int64) float64 {
	if w.course == "steady" {
		return pillarModels[i].mean
	}
	x := 0.0
	for j := int64(walkMemory); j >= 0; j-- {
		x = walkPhi*x + walkSigma*w.gauss(uint64(i), uint64(m-j))
	}
	return clamp(pillarModels[i].mean+x+w.drift(m), 1, 99)
}

// Trends are the courses Config.Trend may script.
var Trends = []string{"rising", "falling", "steady"}

// drift is how far a rising or falling trend has moved every score by
// minute m: a point a minute since the start, none before it; so the
// composite crosses the warning and rises fast enough for the alerts on
// both within the first half hour.
func (w *world) drift(m int64) float64 {
	d := float64(max(m-w.start, 0))
	switch w.course {
	case "rising":
		return d
	case "falling":
		return -d
	}
	return 0
}

func (w *world) composite(m int64) float64 {
	c := 0.0
	for i, p := range pillarModels {
		c += p.weight * w.pillarScore(i, m)
	}
	return c
}

// trendThreshold is the change of the composite over an hour that counts
// as movement rather than noise.
const trendThreshold = 1.5

// trend words: lower scores are more stable, so a rising score deteriorates.
func (w *world) trend(m int64) string {
	switch d := w.composite(m) - w.composite(m-60); {
	case d >= trendThreshold:
		return "deteriorating"
	case d <= -trendThreshold:
		return "improving"
	default:
		return "stable"
	}
}

// world is the simulated world of one seed; a scripted trend (Config.Trend)
// moves its scores from minute start on.
type world struct {
	seed   uint64
	course string // Config.Trend
	start  int64
}

// hash is splitmix64 over the seed and a stream of keys: a cheap,
// well-mixed, stateless source of randomness.
func (w *world) hash(keys ...uint64) uint64 {
	h := w.seed
	for _, k := range keys {
		h += 0x9e3779b97f4a7c15 ^ k
		h ^= h >> 30
		h *= 0xbf58476d1ce4e5b9
		h ^= h >> 27
		h *= 0x94d049bb133111eb
		h ^= h >> 31
	}
	return h
}

// uniform returns a number in [0, 1).
func (w *world) uniform(keys ...uint64) float64 {
	return float64(w.hash(keys...)>>11) / (1 << 53)
}

// gauss approximates a standard normal draw by the sum of four uniforms.
func (w *world) gauss(stream, k uint64) float64 {
	s := 0.0
	for j := range uint64(4) {
		s += w.uniform(stream, k, j)
	}
	return (s - 2) * math.Sqrt(3)
}

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

func round(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

// --- resources, shaped exactly as spec section 2 ---

type overviewJSON struct {
	Score   float64            `json:"score"`
	Trend   string             `json:"trend"`
	Pillars map[string]float64 `json:"pillars"`
	AsOf    string             `json:"as_of"`
}

type indicatorJSON struct {
	Key   string  `json:"key"`
	Value float64 `json:"value"`
}

type drilldownJSON struct {
	Pillar     string          `json:"pillar"`
	Score      float64         `json:"score"`
	Delta24h   float64         `json:"delta_24h"`
	Indicators []indicatorJSON `json:"indicators"`
	AsOf       string          `json:"as_of"`
}

type eventJSON struct {
	ID         string   `json:"id"`
	Lat        float64  `json:"lat"`
	Lon        float64  `json:"lon"`
	Actors     []string `json:"actors"`
	Category   string   `json:"category"`
	Escalation float64  `json:"escalation"`
	OccurredAt string   `json:"occurred_at"`
}

type briefingJSON struct {
	ID          string   `json:"id"`
	Headline    string   `json:"headline"`
	Summary     string   `json:"summary"`
	Tags        []string `json:"tags"`
	PublishedAt string   `json:"published_at"`
}

type summaryJSON struct {
	Summary string `json:"summary"`
	AsOf    string `json:"as_of"`
}

func minute(t time.Time) int64 { return t.Unix() / 60 }

func minuteStart(m int64) string { return time.Unix(m*60, 0).UTC().Format(time.RFC3339) }

func (w *world) overview(now time.Time) overviewJSON {
	m := minute(now)
	o := overviewJSON{
		Score:   math.Round(w.composite(m)),
		Trend:   w.trend(m),
		Pillars: make(map[string]float64, len(pillarModels)),
		AsOf:    minuteStart(m),
	}
	for i, p := range pillarModels {
		o.Pillars[p.name] = round(w.pillarScore(i, m), 1)
	}
	return o
}

func (w *world) drilldown(i int, now time.Time) drilldownJSON {
	m := minute(now)
	score := w.pillarScore(i, m)
	d := drilldownJSON{
		Pillar:   pillarModels[i].name,
		Score:    round(score, 1),
		Delta24h: round(score-w.pillarScore(i, m-24*60), 1),
		AsOf:     minuteStart(m),
	}
	for k, ind := range pillarModels[i].indicators {
		v := ind.base + ind.perPoint*score + ind.noise*w.gauss(uint64(100+i*10+k), uint64(m))
		d.Indicators = append(d.Indicators, indicatorJSON{Key: ind.key, Value: round(math.Max(0, v), ind.decimals)})
	}
	return d
}

// summary is regenerated once per 15-minute window, with as_of at the
// window's start, as spec endpoint note 5 says.
func (w *world) summary(now time.Time) summaryJSON {
	window := now.UTC().Truncate(15 * time.Minute)
	m := minute(window)
	o := w.overview(window)
	lead, leadScore := "", -1.0
	for _, p := range pillarModels {
		if s := o.Pillars[p.name]; s > leadScore {
			lead, leadScore = p.name, s
		}
	}
	text := fmt.Sprintf(
		"As of %s UTC the composite global stability score is %.0f and %s over the past hour. "+
			"%s is the most stressed pillar at %.1f; conflict %.1f, cyber %.1f, supply chain %.1f, macro %.1f. "+
			"The conflict picture is driven by %s.",
		window.Format("15:04"), o.Score, o.Trend,
		strings.ToUpper(lead[:1])+strings.ReplaceAll(lead[1:], "_", " "), leadScore,
		o.Pillars["conflict"], o.Pillars["cyber"], o.Pillars["supply_chain"], o.Pillars["macro"],
		hotspots[w.hash(uint64(m))%uint64(len(hotspots))].place,
	)
	return summaryJSON{Summary: text, AsOf: window.Format(time.RFC3339)}
}
