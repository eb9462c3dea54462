// Alerts. Each pages once per cause: critical only when the data the score
// alerts depend on is missing or the exporter is gone; a more general alert
// is silenced (unless ...) while a more specific one explains it.
//
// Every series an alert reads can vanish while the exporter answers: its
// endpoint fails, or the endpoint answers with the value null, missing or
// invalid (the exporter leaves it out and counts it). Each such input has an
// alert for its absence, whatever the reason, built as "the series the
// exporter would export, unless the ones it did": scrape_success is there
// every scrape the exporter answers, so it gives the expected set.
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

// The endpoints, from their descriptions (endpoint/api.go, see endpoints.json).
local endpoints = import 'endpoints.json';
local asOf = 'global_stability_as_of_timestamp_seconds';

{
  prometheusAlerts+:: {
    local c = $._config,
    local sel = c.selector,
    local overview = 'global_stability_scrape_success{%s, endpoint="%s"}' % [sel, endpoints.overview],
    local score = 'global_stability_score{%s}' % sel,
    local lowest = $._expr.lowest,
    // The labels a match across series keeps: none with one Prometheus,
    // the cluster's with several in one store.
    local clusterOn = if c.showMultiCluster then c.clusterLabel else '',
    // Endpoints whose as_of a staleness alert reads, other than the overview.
    local asOfEndpoints = std.join('|', [e.label for e in endpoints.endpoints if std.member(e.metrics, asOf) && e.label != endpoints.overview]),
    local summary = 'endpoint="%s"' % endpoints.summary,
    // Fields of global_stability_invalid_values whose absence has its own
    // alert: InvalidData leaves them out, so one bad value pages once.
    local ownAlertFields = 'score|pillars|as_of',
    groups+: [
      {
        name: 'global_stability.alerts',
        rules: [
          alert(c, 'GlobalStabilityScoreWarning', 'warning',
                '%s > %s' % [lowest('global_stability_score'), c.scoreWarning], c.scoreFor,
                'Global stability score is {{ $value | printf "%%.0f" }} (warning above %(scoreWarning)s)' % c,
                'The composite score reported by {{ $labels.instance }} has been above %(scoreWarning)s for %(scoreFor)s; lower is more stable. Check which pillar drives it.' % c),
          alert(c, 'GlobalStabilityScoreCritical', 'critical',
                '%s > %s' % [lowest('global_stability_score'), c.scoreCritical], c.scoreFor,
                'Global stability score is {{ $value | printf "%%.0f" }} (critical above %(scoreCritical)s)' % c,
                'The composite score reported by {{ $labels.instance }} has been above %(scoreCritical)s for %(scoreFor)s; lower is more stable.' % c),
          alert(c, 'GlobalStabilityPillarScoreHigh', 'warning',
                '%s > %s' % [lowest('global_stability_pillar_score'), c.pillarScoreHigh], c.pillarScoreFor,
                'Pillar {{ $labels.pillar }} score is {{ $value | printf "%%.1f" }} (threshold %(pillarScoreHigh)s)' % c,
                'The {{ $labels.pillar }} pillar has been above %(pillarScoreHigh)s for %(pillarScoreFor)s.' % c),
          alert(c, 'GlobalStabilityRapidDeterioration', 'warning',
                '%s > %s' % [$._expr.scoreRise1h, c.rapidRise], c.rapidRiseFor,
                'Global stability score rose {{ $value | printf "%%.0f" }} points within an hour' % c,
                'The composite score has been more than %(rapidRise)s points above its lowest value of the past hour for %(rapidRiseFor)s.' % c),
          alert(c, 'GlobalStabilityPillarSurge', 'warning',
                '%s > %s' % [lowest('global_stability_pillar_delta_24h'), c.pillarSurge], c.pillarSurgeFor,
                'Pillar {{ $labels.pillar }} rose {{ $value | printf "%%.1f" }} in 24 hours' % c,
                "The API reports a 24-hour change of the {{ $labels.pillar }} pillar above %(pillarSurge)s (in the API's units) for %(pillarSurgeFor)s." % c),
          alert(c, 'GlobalStabilityDataStale', 'warning',
                '%s > %s' % [$._expr.dataAge('endpoint!="%s"' % endpoints.summary), c.dataStaleSeconds], c.staleFor,
                'Data of {{ $labels.endpoint }} is {{ $value | humanizeDuration }} old',
                'The as_of time of {{ $labels.endpoint }} is more than %s old: the API is answering but not refreshing.' % human(c.dataStaleSeconds)),
          alert(c, 'GlobalStabilitySummaryStale', 'warning',
                '%s > %s' % [$._expr.dataAge(summary), c.summaryStaleSeconds], c.staleFor,
                'Rolling summary is {{ $value | humanizeDuration }} old',
                'The summary is refreshed every 15 minutes; its as_of is more than %s old.' % human(c.summaryStaleSeconds)),
          // The composite absent while the exporter answers: the overview
          // failing (value 0) or answering without a valid score (value 1).
          alert(c, 'GlobalStabilityScoreUnavailable', 'critical',
                |||
                  %s
                  unless ignoring (endpoint)
                  %s
                ||| % [overview, score], c.scoreUnavailableFor,
                'The composite score is unavailable from {{ $labels.instance }}',
                'global_stability_score has been absent for %(scoreUnavailableFor)s while the exporter answers, so the score alerts cannot fire. {{ if eq $value 0.0 }}Requests to /v1/global-stability fail: see the exporter log for why.{{ else }}/v1/global-stability answers, but without a valid score (null, missing or outside 0-100): global_stability_invalid_values says which fields were left out.{{ end }}' % c),
          // One expected series per pillar while the overview answers, unless
          // the exporter has that pillar's score; quiet while the composite
          // is absent too (ScoreUnavailable is then the page).
          alert(c, 'GlobalStabilityPillarScoreUnavailable', 'warning',
                |||
                  (
                    %s
                  )
                  unless ignoring (endpoint)
                  global_stability_pillar_score{%s}
                  and ignoring (endpoint, pillar)
                  %s
                ||| % [
                  std.join('\n  or\n  ', [
                    'label_replace(%s == 1, "pillar", "%s", "", "")' % [overview, p]
                    for p in endpoints.pillars
                  ]),
                  sel,
                  score,
                ], c.pillarScoreUnavailableFor,
                'The {{ $labels.pillar }} pillar score is unavailable from {{ $labels.instance }}',
                '/v1/global-stability has answered for %(pillarScoreUnavailableFor)s with a composite score but without a valid {{ $labels.pillar }} score (null, missing or outside 0-100), so GlobalStabilityPillarScoreHigh cannot fire for that pillar.' % c),
          // Each endpoint whose as_of a staleness alert reads, while it
          // answers, unless the exporter has its as_of. The overview only while
          // its score is there (ScoreUnavailable is the page otherwise); an
          // endpoint that fails is ScoreUnavailable's or EndpointFailing's.
          alert(c, 'GlobalStabilityAsOfUnavailable', 'warning',
                |||
                  (
                    global_stability_scrape_success{%s, endpoint=~"%s"} == 1
                    or
                    %s == 1 and ignoring (endpoint) %s
                  )
                  unless
                  global_stability_as_of_timestamp_seconds{%s}
                ||| % [sel, asOfEndpoints, overview, score, sel], c.asOfUnavailableFor,
                'The as_of of {{ $labels.endpoint }} is unavailable from {{ $labels.instance }}',
                '/v1/{{ $labels.endpoint }} has answered for %(asOfUnavailableFor)s without a valid as_of (null, missing, unparsable or more than an hour ahead): the age of its data is unknown, so {{ if eq $labels.endpoint "%(summary)s" }}GlobalStabilitySummaryStale{{ else }}GlobalStabilityDataStale{{ end }} cannot fire for it.' % (c { summary: endpoints.summary })),
          alert(c, 'GlobalStabilityEndpointFailing', 'warning',
                |||
                  global_stability_scrape_success{%s, endpoint!="%s"} == 0
                  unless ignoring (endpoint)
                  %s == 0
                ||| % [sel, endpoints.overview, overview], c.endpointFailingFor,
                'Endpoint {{ $labels.endpoint }} is failing on {{ $labels.instance }}',
                'Requests to /v1/{{ $labels.endpoint }} have failed every scrape for %(endpointFailingFor)s; its series are absent meanwhile. (Quiet while /v1/global-stability fails too: GlobalStabilityScoreUnavailable is then the page.)' % c),
          // Quiet for the overview while its score is absent: one bad
          // document (every value null, say) pages once, as ScoreUnavailable.
          alert(c, 'GlobalStabilityInvalidData', 'warning',
                |||
                  sum without (field) (min_over_time(global_stability_invalid_values{%s, field!~"%s"}[%s])) > 0
                  unless
                  (%s unless ignoring (endpoint) %s)
                ||| % [sel, ownAlertFields, c.gapWindow, overview, score], c.invalidDataFor,
                '{{ $labels.endpoint }} sends invalid values',
                'For %(invalidDataFor)s, {{ $value }} values of /v1/{{ $labels.endpoint }} per scrape were missing, null, of the wrong type or implausible; they are left out of the export. global_stability_invalid_values says which fields (score, pillars and as_of are not counted here: their own alerts cover them; nor, while the composite score is absent, the overview).' % c),
          // One quota per account, read from the headers of every endpoint
          // (some fetched less often than others, the summary every 15
          // minutes): one alert per exporter or target, at the lowest share
          // any endpoint announces, so that a late reading is no new alert.
          alert(c, 'GlobalStabilityAPIQuotaLow', 'warning',
                |||
                  min without (endpoint) (
                    100 * global_stability_api_rate_limit_remaining{%(exporterSelector)s} / global_stability_api_rate_limit_limit{%(exporterSelector)s}
                    unless
                    global_stability_api_rate_limit_reset_timestamp_seconds{%(exporterSelector)s} - time() < 60
                  ) < %(quotaLowPercent)s
                ||| % c, c.quotaLowFor,
                'Only {{ $value | printf "%.1f" }}% of the API quota is left{{ with $labels.target }} (target {{ . }}){{ end }}',
                'The API announces (rate-limit headers) that less than %(quotaLowPercent)s%% of its quota has been left for %(quotaLowFor)s (the lowest share any endpoint\'s answers give), and that window does not reset within a minute. Once it runs out, the API answers 429 and every endpoint fails until the reset.' % c),
          alert(c, 'GlobalStabilityDemoData', 'warning',
                'global_stability_exporter_demo{%(exporterSelector)s} == 1' % c, c.demoDataFor,
                '{{ $labels.instance }} exports made-up demo data',
                'The exporter at {{ $labels.instance }} runs with --demo: every global_stability value it exports comes from its built-in simulator. Every other alert on it is meaningless.'),
          // With several targets, each is a scrape of its own (a probe, its
          // target label set by the scrape configuration): one failing is
          // that target's page, unless the exporter itself is down, which
          // is then the one page. The exporter's own scrape has no target
          // label, whether it serves one account or several.
          alert(c, 'GlobalStabilityExporterDown', 'critical',
                |||
                  up{%(selector)s, target!=""} == 0 unless on (%(clusterOn)s) up{%(exporterSelector)s, target=""} == 0
                  or
                  up{%(exporterSelector)s, target=""} == 0
                ||| % (c { clusterOn: clusterOn }), c.exporterDownFor,
                'global_stability_exporter {{ $labels.instance }} is down',
                'Prometheus could not scrape {{ $labels.instance }} for %(exporterDownFor)s: the exporter is down or unreachable (or, for a target of a targets\' file, /probe refused it: a name the file does not hold); every global_stability series of it is absent.' % c),
          alert(c, 'GlobalStabilityConfigReloadFailed', 'warning',
                'global_stability_exporter_config_last_reload_successful{%(exporterSelector)s} == 0' % c, c.configReloadFailedFor,
                'The targets\' file of {{ $labels.instance }} did not reload',
                'The last reload of the exporter\'s targets\' file (--config.file) failed %(configReloadFailedFor)s ago or more: the targets loaded before are still served, and what the file changes is not. The exporter\'s log says which target and field.' % c),
          // absent() knows no cluster: in a store of several, it fires only
          // when every cluster has lost the exporter. There, a job of a
          // cluster (and namespace, on Kubernetes) scraped within the past
          // day and no longer; one never scraped is not known.
          if c.showMultiCluster then
            alert(c, 'GlobalStabilityExporterAbsent', 'critical',
                  |||
                    group by (%(clusterLabel)s, namespace, job) (max_over_time(up{%(selector)s}[1d]))
                    unless on (%(clusterLabel)s, namespace, job)
                    up{%(selector)s}
                  ||| % c, c.exporterAbsentFor,
                  'No global_stability_exporter target is being scraped in {{ $labels.%(clusterLabel)s }}' % c,
                  'The Prometheus of {{ $labels.%(clusterLabel)s }} has had no target matching {%(selector)s} for %(exporterAbsentFor)s, after scraping one within the past day: the exporter is gone from service discovery or the scrape configuration.' % c)
          else
            alert(c, 'GlobalStabilityExporterAbsent', 'critical',
                  'absent(up{%(selector)s})' % c, c.exporterAbsentFor,
                  'No global_stability_exporter target is being scraped',
                  'Prometheus has had no target matching {%(selector)s} for %(exporterAbsentFor)s: the exporter is gone from service discovery or the scrape configuration.' % c),
        ],
      },
    ],
  },
}
