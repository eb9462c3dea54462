// Global Stability / Pillar: one pillar at a time, through the pillar
// variable; each indicator in its own panel, since indicators come in
// units that do not share an axis.
local p = import 'panels.libsonnet';

function(c)
  local sel = p.selector(c);
  local by = p.account(c);
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
                // Every account shown, the one without a value saying why.
                p.stat('Score', "The pillar's score from the overview (global_stability_pillar_score), 0-100, lower is more stable. Red from %(pillarScoreHigh)s, the GlobalStabilityPillarScoreHigh threshold." % c,
                       [0, 0, 6, 6], [p.target(p.orWhy(c, 'max by (%s) (global_stability_pillar_score{%s})' % [by, ofPillar], p.endpoints.overview), p.accountName(c), instant=true)],
                       defaults={ decimals: 1, color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.pillarScoreHigh * 0.75, 'orange'], [c.pillarScoreHigh, 'red']]) } + p.why('/v1/' + p.endpoints.overview)),
                p.stat('Change over 24h', "delta_24h from the drilldown, in the API's units; rising is worse. Coloured against GlobalStabilityPillarSurge, which fires above %(pillarSurge)s: orange from half of it, red from it." % c,
                       [6, 0, 6, 6], [p.target(p.orWhy(c, 'max by (%s) (global_stability_pillar_delta_24h{%s})' % [by, ofPillar], drilldown), p.accountName(c), instant=true)],
                       defaults={ decimals: 1, color: { mode: 'thresholds' }, thresholds: p.surgeThresholds(c) } + p.why('the drilldown'), colorMode='background'),
                p.stat('Data age', "How old the drilldown's as_of is: the newest within a day, so that a failing drilldown's data keeps ageing. Red past %(dataStaleSeconds)ss, the GlobalStabilityDataStale threshold." % c,
                       [12, 0, 6, 6], [p.target(p.orWhy(c, 'max by (%s) (time() - max_over_time(global_stability_as_of_timestamp_seconds{%s}[1d]))' % [by, endpoint], drilldown), p.accountName(c), instant=true)],
                       unit=p.age, defaults={ color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.dataStaleSeconds, 'red']]) } + p.why('the drilldown')),
                p.stat('Endpoint status', 'Whether the last scrape of this drilldown succeeded (global_stability_scrape_success).',
                       [18, 0, 6, 6], [p.target(p.orWhy(c, 'max by (%s) (global_stability_scrape_success{%s})' % [by, endpoint], drilldown), p.accountName(c), instant=true)],
                       defaults={ mappings: p.okFailed, color: { mode: 'thresholds' }, thresholds: p.thresholds(['red', [1, 'green']]) } + p.why('the drilldown'), colorMode='background'),
                // A line per account in its colour, the pillar's solid; the
                // composites dashed and grey, a reference, not an account.
                p.timeSeries('Score over time', "The pillar's score of each account, in the account's colour, beside its composite (dashed, grey); the dashed red line is the GlobalStabilityPillarScoreHigh threshold.",
                             [0, 6, 12, 8],
                             [p.target('global_stability_pillar_score{%s}' % ofPillar, p.accountName(c)), p.target('global_stability_score{%s}' % sel, p.accountName(c) + ' composite')],
                             defaults={ min: 0, max: 100 },
                             // Grafana anchors a regexp matcher: ^.* composite$.
                             overrides=[{ matcher: { id: 'byRegexp', options: '.* composite' }, properties: [
                               { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
                               { id: 'color', value: { mode: 'fixed', fixedColor: p.neutral } },
                             ] }],
                             thresholdLines=p.thresholds(['transparent', [c.pillarScoreHigh, 'red']]), accounts=true),
                p.table('Indicators now', "Every sub-indicator of the pillar and its latest value (global_stability_pillar_indicator), in the API's units, per account.",
                        [12, 6, 12, 8], [p.target('max by (%s, indicator) (global_stability_pillar_indicator{%s})' % [by, ofPillar], instant=true, table=true)],
                        transformations=[{ id: 'organize', options: { excludeByName: { Time: true }, indexByName: { [c.clusterLabel]: 0, instance: 1, indicator: 2, Value: 3 }, renameByName: { instance: 'account', Value: 'value' } } }]),
                // One panel per indicator (repeated over $indicator), named in
                // its title: an index near 1 and a count in thousands cannot
                // share an axis. Its lines are the accounts', in their colours.
                p.timeSeries('$indicator', "One sub-indicator over time (global_stability_pillar_indicator), on its own axis: indicators come in different units. The axis always holds zero, so that a steady value is a flat line at its height, not noise magnified.",
                             [0, 14, 12, 7], [p.target('global_stability_pillar_indicator{%s, indicator=~"$indicator"}' % ofPillar, p.accountName(c))],
                             defaults={ custom+: { axisSoftMin: 0, axisSoftMax: 0 } }, accounts=true)
                + { repeat: 'indicator', repeatDirection: 'h', maxPerRow: 2 },
                p.timeSeries('Request duration', "Wall time of the drilldown's request in each scrape (global_stability_scrape_duration_seconds); none while the exporter backs off after a 429 or 503.",
                             [0, 21, 12, 7], [p.target('global_stability_scrape_duration_seconds{%s} unless global_stability_api_backoff_seconds{%s} > 0' % [endpoint, endpoint], p.accountName(c))], unit='s', accounts=true),
                p.timeSeries('Requests by status code', 'Requests to the drilldown per hour by HTTP status code (recording rule global_stability:api_requests:rate5m), per account. One colour per class: 2xx green, 304 blue, 4xx orange, 401 and 403 red, 429 purple, 5xx red, error dark red; failures on their own axis (right), with points.',
                             [12, 21, 12, 7],
                             [p.target('sum by (%s) (%s) * 3600' % [std.join(', ', (if c.showMultiCluster then [c.clusterLabel] else []) + ['target', 'code']), p.own(c, function(s) 'global_stability:api_requests:rate5m{%s, endpoint="%s"}' % [s, drilldown])], p.accountName(c, 'target') + ' {{code}}')],
                             unit=p.perHour, defaults={ min: 0 }, overrides=p.statusOverrides, accounts=true),
              ])
