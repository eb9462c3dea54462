// Alerts. Each pages once per cause: critical only when the data the score
// alerts depend on is missing or the exporter is gone; a more general alert
// is silenced (unless ...) while a more specific one explains it.
local alert(c, name, severity, expr, for_, summary, description) = {
  alert: name,
  expr: expr,
  [if for_ != '0m' then 'for']: for_,
  labels: { severity: severity },
  annotations: {
    summary: summary,
    description: description,
    runbook_url: '%s#%s' % [c.runbookURL, std.asciiLower(name)],
  },
};

// 3600 -> 1h, 1800 -> 30m: how a threshold in seconds reads in a sentence.
local human(s) = if s % 3600 == 0 then '%dh' % (s / 3600) else if s % 60 == 0 then '%dm' % (s / 60) else '%ds' % s;

{
  prometheusAlerts+:: {
    local c = $._config,
    groups+: [
      {
        name: 'global_stability.alerts',
        rules: [
          {
            // Age of each endpoint's data: dashboards and the staleness alerts share it.
            record: 'global_stability:data_age_seconds',
            expr: 'time() - global_stability_as_of_timestamp_seconds{%(selector)s}' % c,
          },
          {
            // How far the composite has risen above its lowest point of the past hour.
            record: 'global_stability:score_rise_1h',
            expr: 'global_stability_score{%(selector)s} - min_over_time(global_stability_score{%(selector)s}[1h])' % c,
          },

          alert(c, 'GlobalStabilityScoreWarning', 'warning',
                'global_stability_score{%(selector)s} > %(scoreWarning)s' % c, c.scoreFor,
                'Global stability score is {{ $value | printf "%%.0f" }} (warning above %(scoreWarning)s)' % c,
                'The composite score reported by {{ $labels.instance }} has been above %(scoreWarning)s for %(scoreFor)s; lower is more stable. Check which pillar drives it.' % c),
          alert(c, 'GlobalStabilityScoreCritical', 'critical',
                'global_stability_score{%(selector)s} > %(scoreCritical)s' % c, c.scoreFor,
                'Global stability score is {{ $value | printf "%%.0f" }} (critical above %(scoreCritical)s)' % c,
                'The composite score reported by {{ $labels.instance }} has been above %(scoreCritical)s for %(scoreFor)s; lower is more stable.' % c),
          alert(c, 'GlobalStabilityPillarScoreHigh', 'warning',
                'global_stability_pillar_score{%(selector)s} > %(pillarScoreHigh)s' % c, c.pillarScoreFor,
                'Pillar {{ $labels.pillar }} score is {{ $value | printf "%%.1f" }} (threshold %(pillarScoreHigh)s)' % c,
                'The {{ $labels.pillar }} pillar has been above %(pillarScoreHigh)s for %(pillarScoreFor)s.' % c),
          alert(c, 'GlobalStabilityRapidDeterioration', 'warning',
                'global_stability:score_rise_1h{%(selector)s} > %(rapidRise)s' % c, c.rapidRiseFor,
                'Global stability score rose {{ $value | printf "%%.0f" }} points within an hour' % c,
                'The composite score has been more than %(rapidRise)s points above its lowest value of the past hour for %(rapidRiseFor)s.' % c),
          alert(c, 'GlobalStabilityPillarSurge', 'warning',
                'global_stability_pillar_delta_24h{%(selector)s} > %(pillarSurge)s' % c, c.pillarSurgeFor,
                'Pillar {{ $labels.pillar }} rose {{ $value | printf "%%.1f" }} in 24 hours' % c,
                "The API reports a 24-hour change of the {{ $labels.pillar }} pillar above %(pillarSurge)s (in the API's units) for %(pillarSurgeFor)s." % c),
          alert(c, 'GlobalStabilityDataStale', 'warning',
                'global_stability:data_age_seconds{%(selector)s, endpoint!="summaries"} > %(dataStaleSeconds)s' % c, c.staleFor,
                'Data of {{ $labels.endpoint }} is {{ $value | humanizeDuration }} old',
                'The as_of time of {{ $labels.endpoint }} is more than %s old: the API is answering but not refreshing.' % human(c.dataStaleSeconds)),
          alert(c, 'GlobalStabilitySummaryStale', 'warning',
                'global_stability:data_age_seconds{%(selector)s, endpoint="summaries"} > %(summaryStaleSeconds)s' % c, c.staleFor,
                'Rolling summary is {{ $value | humanizeDuration }} old',
                'The summary is refreshed every 15 minutes; its as_of is more than %s old.' % human(c.summaryStaleSeconds)),
          alert(c, 'GlobalStabilityScoreUnavailable', 'critical',
                'global_stability_scrape_success{%(selector)s, endpoint="global-stability"} == 0' % c, c.scoreUnavailableFor,
                'The composite score is unavailable from {{ $labels.instance }}',
                'Requests to /v1/global-stability have failed every scrape for %(scoreUnavailableFor)s: the score, trend and pillar scores are absent, so the score alerts cannot fire. See the exporter log for why.' % c),
          alert(c, 'GlobalStabilityEndpointFailing', 'warning',
                |||
                  global_stability_scrape_success{%(selector)s, endpoint!="global-stability"} == 0
                  unless ignoring (endpoint)
                  global_stability_scrape_success{%(selector)s, endpoint="global-stability"} == 0
                ||| % c, c.endpointFailingFor,
                'Endpoint {{ $labels.endpoint }} is failing on {{ $labels.instance }}',
                'Requests to /v1/{{ $labels.endpoint }} have failed every scrape for %(endpointFailingFor)s; its series are absent meanwhile. (Quiet while GlobalStabilityScoreUnavailable fires for the same exporter.)' % c),
          alert(c, 'GlobalStabilityInvalidData', 'warning',
                'sum without (field) (global_stability_invalid_values{%(selector)s}) > 0' % c, c.invalidDataFor,
                '{{ $labels.endpoint }} sends invalid values',
                'For %(invalidDataFor)s, {{ $value }} values of /v1/{{ $labels.endpoint }} per scrape were missing, null, of the wrong type or implausible; they are left out of the export. global_stability_invalid_values says which fields.' % c),
          alert(c, 'GlobalStabilityDemoData', 'warning',
                'global_stability_exporter_demo{%(selector)s} == 1' % c, c.demoDataFor,
                '{{ $labels.instance }} exports made-up demo data',
                'The exporter at {{ $labels.instance }} runs with --demo: every global_stability value it exports comes from its built-in simulator. Every other alert on it is meaningless.'),
          alert(c, 'GlobalStabilityExporterDown', 'critical',
                'up{%(selector)s} == 0' % c, c.exporterDownFor,
                'global_stability_exporter {{ $labels.instance }} is down',
                'Prometheus could not scrape the exporter for %(exporterDownFor)s; every global_stability series of it is absent.' % c),
          alert(c, 'GlobalStabilityExporterAbsent', 'critical',
                'absent(up{%(selector)s})' % c, c.exporterAbsentFor,
                'No global_stability_exporter target is being scraped',
                'Prometheus has had no target matching {%(selector)s} for %(exporterAbsentFor)s: the exporter is gone from service discovery or the scrape configuration.' % c),
        ],
      },
    ],
  },
}
