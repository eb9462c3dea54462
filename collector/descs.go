package collector

import "github.com/prometheus/client_golang/prometheus"

const namespace = "global_stability"

func newDesc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(namespace, "", name), help, labels, nil)
}

// cappedDesc is a metric whose label values come from upstream data, so
// its series count against --collector.max-label-values.
type cappedDesc struct {
	name string
	desc *prometheus.Desc
}

func newCappedDesc(name, help string, labels ...string) cappedDesc {
	return cappedDesc{name: prometheus.BuildFQName(namespace, "", name), desc: newDesc(name, help, labels...)}
}

// Every descriptor is declared once, here: metric names and labels are a
// contract with users' alerts and dashboards (see README, "Metrics").
var (
	upDesc = newDesc("up",
		"1 when every request of this scrape to the Global Stability API succeeded, else 0.")
	scrapeSuccessDesc = newDesc("scrape_success",
		"1 when all requests to this endpoint (all pages) succeeded in this scrape, else 0.", "endpoint")
	scrapeDurationDesc = newDesc("scrape_duration_seconds",
		"Wall time of this endpoint's requests (all pages) in this scrape.", "endpoint")
	backoffDesc = newDesc("api_backoff_seconds",
		"Time left before the exporter calls this endpoint again, after the API answered 429 or 503 with Retry-After; 0 when not backing off.", "endpoint")
	labelValuesDroppedDesc = newDesc("label_values_dropped",
		"Series left out of this scrape because the metric reached --collector.max-label-values distinct label values (per pillar for indicators), keeping those with the most events; or because the API repeated an indicator key.", "metric")
	invalidValuesDesc = newDesc("invalid_values",
		"Values of this endpoint's response left out of this scrape because they were missing, null, of the wrong type or implausible, by the spec's field (for lists: items left out). 0 when all were valid; absent when the endpoint failed.", "endpoint", "field")

	scoreDesc = newDesc("score",
		"Composite global stability score, 0-100, lower is more stable (GET /v1/global-stability, field score).")
	trendDesc = newDesc("trend",
		"Always 1; the trend label carries the direction of the composite score as the API words it (GET /v1/global-stability, field trend).", "trend")
	pillarScoreDesc = newDesc("pillar_score",
		"Score of each pillar, 0-100, lower is more stable (GET /v1/global-stability, field pillars).", "pillar")
	asOfDesc = newDesc("as_of_timestamp_seconds",
		"Time the endpoint's data refers to, as Unix seconds (field as_of of the overview, each drilldown and the summary).", "endpoint")

	pillarDeltaDesc = newDesc("pillar_delta_24h",
		"Change of the pillar's score over the last 24 hours, in the API's units (GET /v1/global-stability/pillar/{pillar}, field delta_24h).", "pillar")
	pillarIndicatorDesc = newCappedDesc("pillar_indicator",
		"Value of each sub-indicator of a pillar, in the API's units (GET /v1/global-stability/pillar/{pillar}, field indicators; indicator is its key).", "pillar", "indicator")

	conflictEventsDesc = newDesc("conflict_events",
		"Number of recent conflict events returned, over all pages (GET /v1/conflict).")
	conflictEventsByCategoryDesc = newCappedDesc("conflict_events_by_category",
		"Number of recent conflict events per category, over all pages (GET /v1/conflict, field category).", "category")
	conflictEventsByCellDesc = newCappedDesc("conflict_events_by_cell",
		"Number of recent conflict events per grid cell of --collector.conflict.grid-degrees, labelled with the cell's centre (GET /v1/conflict, fields lat and lon). Only non-empty cells.", "lat", "lon")
	conflictEscalationMaxByCellDesc = newCappedDesc("conflict_escalation_max_by_cell",
		"Highest escalation score among recent conflict events per grid cell, labelled with the cell's centre (GET /v1/conflict). Only non-empty cells.", "lat", "lon")
	conflictEscalationMaxDesc = newDesc("conflict_escalation_max",
		"Highest escalation score among recent conflict events (GET /v1/conflict, field escalation). Absent when there are no events.")
	conflictEscalationMeanDesc = newDesc("conflict_escalation_mean",
		"Mean escalation score of recent conflict events (GET /v1/conflict, field escalation). Absent when there are no events.")
	conflictLatestDesc = newDesc("conflict_latest_event_timestamp_seconds",
		"Time of the newest recent conflict event, as Unix seconds (GET /v1/conflict, field occurred_at). Absent when there are no events.")

	briefingsDesc = newDesc("briefings",
		"Number of briefings returned, over all pages (GET /v1/briefings).")
	briefingLatestDesc = newDesc("briefing_latest_published_timestamp_seconds",
		"Publication time of the newest briefing, as Unix seconds (GET /v1/briefings, field published_at). Absent when there are no briefings.")
)

// allDescs is what Exporter.Describe announces.
var allDescs = []*prometheus.Desc{
	upDesc, scrapeSuccessDesc, scrapeDurationDesc, backoffDesc, labelValuesDroppedDesc, invalidValuesDesc,
	scoreDesc, trendDesc, pillarScoreDesc, asOfDesc,
	pillarDeltaDesc, pillarIndicatorDesc.desc,
	conflictEventsDesc, conflictEventsByCategoryDesc.desc, conflictEventsByCellDesc.desc, conflictEscalationMaxByCellDesc.desc, conflictEscalationMaxDesc, conflictEscalationMeanDesc, conflictLatestDesc,
	briefingsDesc, briefingLatestDesc,
}

// cappedDescs lists every capped metric, for the dropped-values gauge.
var cappedDescs = []cappedDesc{pillarIndicatorDesc, conflictEventsByCategoryDesc, conflictEventsByCellDesc, conflictEscalationMaxByCellDesc}
