// SPDX-License-Identifier: Apache-2.0

package endpoint

import (
	"time"

	"github.com/global-stability/global_stability_exporter/client"
)

// The one description of what the exporter knows of the API (docs/api.md):
// the rest follows from it (docs/development.md, "Adding an endpoint").

// Pillars are the four pillars of the composite score, in the spec's order.
var Pillars = []string{"conflict", "cyber", "supply_chain", "macro"}

// The series of the API's data; names, labels and help texts are a contract.
var (
	Score = &Metric{Name: "global_stability_score",
		Help: "Composite global stability score, 0-100, lower is more stable (GET /v1/global-stability, field score)."}
	Trend = &Metric{Name: "global_stability_trend", Labels: []string{"trend"},
		Help: "Always 1; the trend label carries the direction of the composite score as the API words it (GET /v1/global-stability, field trend)."}
	PillarScore = &Metric{Name: "global_stability_pillar_score", Labels: []string{"pillar"},
		Help: "Score of each pillar, 0-100, lower is more stable (GET /v1/global-stability, field pillars)."}
	AsOf = &Metric{Name: "global_stability_as_of_timestamp_seconds", Labels: []string{"endpoint"},
		Help: "Time the endpoint's data refers to, as Unix seconds (field as_of of GET /v1/global-stability, /v1/global-stability/pillar/{pillar} and /v1/summaries)."}
	PillarDelta = &Metric{Name: "global_stability_pillar_delta_24h", Labels: []string{"pillar"},
		Help: "Change of the pillar's score over the last 24 hours, in the API's units (GET /v1/global-stability/pillar/{pillar}, field delta_24h)."}
	PillarIndicator = &Metric{Name: "global_stability_pillar_indicator", Labels: []string{"pillar", "indicator"}, Capped: true,
		Help: "Value of each sub-indicator of a pillar, each in its own unit as the API sends it, so not to be summed or averaged across indicators (GET /v1/global-stability/pillar/{pillar}, field indicators; indicator is its key)."}
	ConflictEvents = &Metric{Name: "global_stability_conflict_events",
		Help: "Number of recent conflict events returned, over all pages (GET /v1/conflict)."}
	ConflictEventsByCategory = &Metric{Name: "global_stability_conflict_events_by_category", Labels: []string{"category"}, Capped: true,
		Help: "Number of recent conflict events per category, over all pages (GET /v1/conflict, field category)."}
	ConflictEventsByActor = &Metric{Name: "global_stability_conflict_events_by_actor", Labels: []string{"actor"}, Capped: true,
		Help: "Number of recent conflict events naming each actor, over all pages; an event counts once per distinct actor it names (GET /v1/conflict, field actors)."}
	ConflictEventsByCell = &Metric{Name: "global_stability_conflict_events_by_cell", Labels: []string{"lat", "lon"}, Capped: true,
		Help: "Number of recent conflict events per grid cell of --collector.conflict.grid-degrees, labelled with the cell's centre (GET /v1/conflict, fields lat and lon). Only non-empty cells."}
	ConflictEscalationMaxByCell = &Metric{Name: "global_stability_conflict_escalation_max_by_cell", Labels: []string{"lat", "lon"}, Capped: true,
		Help: "Highest escalation score among recent conflict events per grid cell, labelled with the cell's centre (GET /v1/conflict). Only non-empty cells."}
	ConflictEscalationMax = &Metric{Name: "global_stability_conflict_escalation_max",
		Help: "Highest escalation score among recent conflict events (GET /v1/conflict, field escalation). Absent when there are no events."}
	ConflictEscalationMean = &Metric{Name: "global_stability_conflict_escalation_mean",
		Help: "Mean escalation score of recent conflict events (GET /v1/conflict, field escalation). Absent when there are no events."}
	ConflictLatest = &Metric{Name: "global_stability_conflict_latest_event_timestamp_seconds",
		Help: "Time of the newest recent conflict event, as Unix seconds (GET /v1/conflict, field occurred_at). Absent when there are no events."}
	Briefings = &Metric{Name: "global_stability_briefings",
		Help: "Number of briefings returned, over all pages (GET /v1/briefings)."}
	BriefingsByTag = &Metric{Name: "global_stability_briefings_by_tag", Labels: []string{"tag"}, Capped: true,
		Help: "Number of briefings carrying each tag, over all pages (GET /v1/briefings, field tags)."}
	BriefingLatest = &Metric{Name: "global_stability_briefing_latest_published_timestamp_seconds",
		Help: "Publication time of the newest briefing, as Unix seconds (GET /v1/briefings, field published_at). Absent when there are no briefings."}
)

// Overview is GET /v1/global-stability.
var Overview = &Endpoint{
	Label: "global-stability",
	Limit: client.DocumentLimit,
	Fields: append([]Field{
		{Name: "score", Rule: ScoreRule, Metric: Score},
		{Name: "trend", Rule: LabelValue, Metric: Trend, AsLabel: "trend"},
		{Name: "as_of", Rule: Timestamp, Metric: AsOf},
	}, pillarScores()...),
}

// pillarScores are the members of the overview's pillars object.
func pillarScores() []Field {
	var fs []Field
	for _, p := range Pillars {
		fs = append(fs, Field{Name: "pillars." + p, Rule: ScoreRule, Metric: PillarScore, Labels: map[string]string{"pillar": p}})
	}
	return fs
}

// Drilldown is GET /v1/global-stability/pillar/{pillar}. Its
// score is not read: pillar_score comes from the overview only.
func Drilldown(pillar string) *Endpoint {
	return &Endpoint{
		Label:  "global-stability/pillar/" + pillar,
		Group:  "pillars",
		Limit:  client.DocumentLimit,
		Labels: map[string]string{"pillar": pillar},
		Fields: []Field{
			// Checked only: another pillar's drilldown is the wrong answer.
			{Name: "pillar", Rule: LabelValue, Must: pillar},
			{Name: "delta_24h", Rule: Number, Metric: PillarDelta},
			{Name: "as_of", Rule: Timestamp, Metric: AsOf},
		},
		List: &List{
			Name: "indicators",
			Item: []Field{{Name: "key", Rule: LabelValue}, {Name: "value", Rule: Number}},
			// The first keys: no measure says which matter more.
			Folds: []Fold{FirstKeys{Metric: PillarIndicator, Key: "key", Value: "value"}},
		},
	}
}

// Conflict is GET /v1/conflict: recent events, paged.
var Conflict = &Endpoint{
	Label: "conflict",
	Group: "conflict",
	Limit: client.PageLimit,
	Paged: true,
	List: &List{
		Name: "events",
		Item: []Field{
			// Counts once an event a shifting list puts on two pages.
			{Name: "id", Rule: ID, Optional: true},
			{Name: "lat", Rule: Latitude},
			{Name: "lon", Rule: Longitude},
			{Name: "actors", Rule: LabelValue, Each: true},
			{Name: "category", Rule: LabelValue},
			{Name: "escalation", Rule: Number},
			{Name: "occurred_at", Rule: Timestamp},
		},
		Unique: "id",
		Folds: []Fold{
			Count{Metric: ConflictEvents},
			CountBy{Metric: ConflictEventsByCategory, Field: "category"},
			CountBy{Metric: ConflictEventsByActor, Field: "actors"},
			Cells{Count: ConflictEventsByCell, Max: ConflictEscalationMaxByCell, Lat: "lat", Lon: "lon", Value: "escalation"},
			Max{Metric: ConflictEscalationMax, Field: "escalation"},
			Mean{Metric: ConflictEscalationMean, Field: "escalation"},
			Newest{Metric: ConflictLatest, Field: "occurred_at"},
		},
	},
}

// BriefingsList is GET /v1/briefings: publication times and tags.
var BriefingsList = &Endpoint{
	Label: "briefings",
	Group: "briefings",
	Limit: client.PageLimit,
	Paged: true,
	List: &List{
		Name:  "briefings",
		Item:  []Field{{Name: "tags", Rule: LabelValue, Each: true}, {Name: "published_at", Rule: Timestamp}},
		Folds: []Fold{Count{Metric: Briefings}, CountBy{Metric: BriefingsByTag, Field: "tags"}, Newest{Metric: BriefingLatest, Field: "published_at"}},
	},
}

// Summary is GET /v1/summaries: its as_of shows the refresh.
var Summary = &Endpoint{
	Label:   "summaries",
	Group:   "summary",
	Limit:   client.DocumentLimit,
	Fields:  []Field{{Name: "as_of", Rule: Timestamp, Metric: AsOf}},
	Refresh: 15 * time.Minute, // "a rolling summary refreshed every 15 minutes"
}

// All returns every endpoint, in a stable order.
func All() []*Endpoint {
	all := []*Endpoint{Overview}
	for _, p := range Pillars {
		all = append(all, Drilldown(p))
	}
	return append(all, Conflict, BriefingsList, Summary)
}
