// Global Stability / Pillar: one pillar at a time, through the pillar
// variable; each indicator in its own small panel, since indicators come in
// units that do not share an axis.
local p = import 'panels.libsonnet';

function(c)
  local sel = p.selector(c);
  local ofPillar = '%s, pillar="$pillar"' % sel;
  // The drilldown's endpoint label, with $pillar for its pillar.
  local drilldown = [std.strReplace(e.label, e.pillar, '$pillar') for e in p.endpoints.endpoints if std.objectHas(e, 'pillar')][0];
  local endpoint = '%s, endpoint="%s"' % [sel, drilldown];
  p.dashboard(c, 'pillar', 'Pillar',
              'One pillar of the global stability score: its score, 24h change, every indicator, and the health of its drilldown endpoint, from global_stability_exporter.',
              p.variables(c) + [
                p.queryVariable('pillar', 'Pillar', 'label_values(global_stability_pillar_score{%s}, pillar)' % sel),
                // Hidden: it only drives the repeated indicator panels.
                p.queryVariable('indicator', 'Indicator', 'label_values(global_stability_pillar_indicator{%s}, indicator)' % ofPillar, multi=true, hide=2),
              ],
              [
                p.stat('Score', "The pillar's score from the overview (global_stability_pillar_score), 0-100, lower is more stable. Red from %(pillarScoreHigh)s, the GlobalStabilityPillarScoreHigh threshold." % c,
                       [0, 0, 6, 6], [p.target('global_stability_pillar_score{%s}' % ofPillar, '{{instance}}', instant=true)],
                       defaults={ decimals: 1, color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.pillarScoreHigh * 0.75, 'orange'], [c.pillarScoreHigh, 'red']]) }),
                p.stat('Change over 24h', "delta_24h from the drilldown, in the API's units; rising is worse. Coloured against GlobalStabilityPillarSurge, which fires above %(pillarSurge)s: orange from half of it, red from it." % c,
                       [6, 0, 6, 6], [p.target('global_stability_pillar_delta_24h{%s}' % ofPillar, '{{instance}}', instant=true)],
                       defaults={ decimals: 1, color: { mode: 'thresholds' }, thresholds: p.surgeThresholds(c) }, colorMode='background'),
                p.stat('Data age', "How old the drilldown's as_of is. Red past %(dataStaleSeconds)ss, the GlobalStabilityDataStale threshold. Reads the recording rule global_stability:data_age_seconds (group global_stability.recording of the mixin's rules): empty unless that group is loaded." % c,
                       [12, 0, 6, 6], [p.target('global_stability:data_age_seconds{%s}' % endpoint, '{{instance}}', instant=true)],
                       unit=p.age, defaults={ color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.dataStaleSeconds, 'red']]) }),
                p.stat('Endpoint status', 'Whether the last scrape of this drilldown succeeded (global_stability_scrape_success).',
                       [18, 0, 6, 6], [p.target('global_stability_scrape_success{%s}' % endpoint, '{{instance}}', instant=true)],
                       defaults={ mappings: p.okFailed, color: { mode: 'thresholds' }, thresholds: p.thresholds(['red', [1, 'green']]) }, colorMode='background'),
                // A line per instance: the pillar's solid, the composite's
                // dashed, each named by its instance.
                p.timeSeries('Score over time', "The pillar's score beside the composite (dashed); the dashed red line is the GlobalStabilityPillarScoreHigh threshold.",
                             [0, 6, 12, 8],
                             [p.target('global_stability_pillar_score{%s}' % ofPillar, '{{instance}} $pillar'), p.target('global_stability_score{%s}' % sel, '{{instance}} composite')],
                             defaults={ min: 0, max: 100 },
                             overrides=[{ matcher: { id: 'byRegexp', options: ' composite$' }, properties: [{ id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } }] }],
                             thresholdLines=p.thresholds(['transparent', [c.pillarScoreHigh, 'red']])),
                p.table('Indicators now', "Every sub-indicator of the pillar and its latest value (global_stability_pillar_indicator), in the API's units, per instance.",
                        [12, 6, 12, 8], [p.target('max by (instance, indicator) (global_stability_pillar_indicator{%s})' % ofPillar, instant=true, table=true)],
                        transformations=[{ id: 'organize', options: { excludeByName: { Time: true }, indexByName: { instance: 0, indicator: 1, Value: 2 }, renameByName: { Value: 'value' } } }]),
                // One panel per indicator (repeated over $indicator): an index
                // near 1 and a count in thousands cannot share an axis.
                p.timeSeries('$indicator', "One sub-indicator over time (global_stability_pillar_indicator), on its own axis: indicators come in different units. The axis always holds zero, so that a steady value is a flat line at its height, not noise magnified.",
                             [0, 14, 6, 7], [p.target('global_stability_pillar_indicator{%s, indicator=~"$indicator"}' % ofPillar, '{{indicator}} ({{instance}})')],
                             defaults={ custom+: { axisSoftMin: 0, axisSoftMax: 0 } })
                + { repeat: 'indicator', repeatDirection: 'h', maxPerRow: 4 },
                p.timeSeries('Request duration', "Wall time of the drilldown's request in each scrape (global_stability_scrape_duration_seconds).",
                             [0, 21, 12, 6], [p.target('global_stability_scrape_duration_seconds{%s}' % endpoint, '{{instance}}')], unit='s'),
                p.timeSeries('Requests by status code', 'Requests to the drilldown per hour by HTTP status code (recording rule global_stability:api_requests:rate5m), per account.',
                             [12, 21, 12, 6],
                             [p.target('sum by (target, code) (%s) * 3600' % p.own(c, function(s) 'global_stability:api_requests:rate5m{%s, endpoint="%s"}' % [s, drilldown]), '{{target}} {{code}}')],
                             unit=p.perHour, defaults={ min: 0 }),
              ])
