// Global Stability / Pillar: one pillar at a time, through the pillar
// variable; each indicator in its own small panel, since indicators come in
// units that do not share an axis.
local p = import 'panels.libsonnet';

function(c)
  local sel = p.selector(c);
  local ofPillar = '%s, pillar="$pillar"' % sel;
  local endpoint = '%s, endpoint="global-stability/pillar/$pillar"' % sel;
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
                p.stat('Change over 24h', "delta_24h from the drilldown, in the API's units. Red when rising (worse), green when falling or flat. GlobalStabilityPillarSurge fires above %(pillarSurge)s." % c,
                       [6, 0, 6, 6], [p.target('global_stability_pillar_delta_24h{%s}' % ofPillar, '{{instance}}', instant=true)],
                       defaults={ decimals: 1, color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [1e-9, 'red']]) }, colorMode='background'),
                p.stat('Data age', "How old the drilldown's as_of is. Red past %(dataStaleSeconds)ss, the GlobalStabilityDataStale threshold. Reads the recording rule global_stability:data_age_seconds (group global_stability.recording of the mixin's rules): empty unless that group is loaded." % c,
                       [12, 0, 6, 6], [p.target('global_stability:data_age_seconds{%s}' % endpoint, '{{instance}}', instant=true)],
                       unit='s', defaults={ color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.dataStaleSeconds, 'red']]) }),
                p.stat('Endpoint status', 'Whether the last scrape of this drilldown succeeded (global_stability_scrape_success).',
                       [18, 0, 6, 6], [p.target('global_stability_scrape_success{%s}' % endpoint, '{{instance}}', instant=true)],
                       defaults={ mappings: p.okFailed, color: { mode: 'thresholds' }, thresholds: p.thresholds(['red', [1, 'green']]) }, colorMode='background'),
                p.timeSeries('Score over time', "The pillar's score beside the composite; the dashed line is the GlobalStabilityPillarScoreHigh threshold.",
                             [0, 6, 12, 8],
                             [p.target('global_stability_pillar_score{%s}' % ofPillar, '$pillar'), p.target('global_stability_score{%s}' % sel, 'composite')],
                             defaults={ min: 0, max: 100 },
                             overrides=p.pillarColorOverrides(p.pillarColors) + [{ matcher: { id: 'byName', options: 'composite' }, properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: 'text' } }, { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } }] }],
                             thresholdLines=p.thresholds(['transparent', [c.pillarScoreHigh, 'red']])),
                p.table('Indicators now', "Every sub-indicator of the pillar and its latest value (global_stability_pillar_indicator), in the API's units.",
                        [12, 6, 12, 8], [p.target('global_stability_pillar_indicator{%s}' % ofPillar, instant=true, table=true)],
                        transformations=[{ id: 'organize', options: { excludeByName: { Time: true, __name__: true, job: true, pillar: true }, renameByName: { Value: 'value' } } }]),
                // One panel per indicator (repeated over $indicator): an index
                // near 1 and a count in thousands cannot share an axis.
                p.timeSeries('$indicator', "One sub-indicator over time (global_stability_pillar_indicator), on its own axis: indicators come in different units. The axis always holds zero, so that a steady value is a flat line at its height, not noise magnified.",
                             [0, 14, 6, 7], [p.target('global_stability_pillar_indicator{%s, indicator=~"$indicator"}' % ofPillar, '{{indicator}} ({{instance}})')],
                             defaults={ custom+: { axisSoftMin: 0, axisSoftMax: 0 } })
                + { repeat: 'indicator', repeatDirection: 'h', maxPerRow: 4 },
                p.timeSeries('Request duration', "Wall time of the drilldown's request in each scrape (global_stability_scrape_duration_seconds).",
                             [0, 21, 12, 6], [p.target('global_stability_scrape_duration_seconds{%s}' % endpoint, '{{instance}}')], unit='s'),
                p.timeSeries('Requests by status code', 'Requests per second to the drilldown by HTTP status code (recording rule global_stability:api_requests:rate5m).',
                             [12, 21, 12, 6], [p.target('sum by (code) (global_stability:api_requests:rate5m{%s, endpoint="global-stability/pillar/$pillar"})' % p.own(c), '{{code}}')], unit='reqps'),
              ])
