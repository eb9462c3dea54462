// Global Stability / Overview: every account's state at the top, trouble
// first, then the score, pillars, conflict events, briefings, data
// freshness and the exporter's health of each.
local p = import 'panels.libsonnet';

function(c)
  local sel = p.selector(c);
  local by = p.account(c);
  local q(metric, extra='') = '%s{%s%s}' % [metric, sel, extra];
  // The busiest few series of a metric of names, per cluster with several.
  local top(metric) = 'sort_desc(topk%s (8, %s))' % [if c.showMultiCluster then ' by (%s)' % c.clusterLabel else '', q(metric)];
  // Every account shown: Prometheus' up of its scrape, there while it is
  // scraped or failing to be.
  local anchor = 'max by (%s) (up{%s})' % [by, sel];
  // The exporter's own series of the instance shown: its requests, reuse, quota.
  local own(metric, wrap='%s') = p.own(c, function(s) wrap % ('%s{%s}' % [metric, s]));
  local event = 'global_stability_conflict_latest_event_timestamp_seconds';
  local briefing = 'global_stability_briefing_latest_published_timestamp_seconds';
  local asOf = 'global_stability_as_of_timestamp_seconds';
  local asOfEndpoints = std.join('|', [e.label for e in p.endpoints.endpoints if std.member(e.metrics, asOf)]);
  // A rate of the instance shown per hour, by its cluster with several.
  local perHour(metric, by='') =
    local keep = std.join(', ', (if c.showMultiCluster then [c.clusterLabel] else []) + (if by == '' then [] else [by]));
    if keep == '' then 'sum(%s) * 3600' % own(metric, 'rate(%s[5m])') else 'sum by (%s) (%s) * 3600' % [keep, own(metric, 'rate(%s[5m])')];
  // The columns of the accounts' table, each with a value for every
  // account, so that none is ever missing from it: -1 where the value is
  // not there.
  local age = 'max by (%s) (time() - max_over_time(%s{%s}[1d])) or %s * 0 - 1' % [by, asOf, sel, anchor];
  local score = 'max by (%s) (global_stability_score{%s}) or %s * 0 - 1' % [by, sel, anchor];
  // Alerts firing about each account: on its series, or on the exporter's
  // own series of it (the quota), by its target. The demo alert is about
  // the exporter, whose own panel says DEMO.
  local alerts(extra='') =
    local firing = 'alertstate="firing", alertname!="GlobalStabilityDemoData"' + extra;
    'count by (%s) (ALERTS{%s, %s} or label_replace(ALERTS{%s%s, target=~"$instance", %s}, "instance", "$1", "target", "(.+)")) and %s or %s * 0' % [by, sel, firing, c.exporterSelector, p.cluster(c), firing, anchor, anchor];
  // Trouble first: 10 for each thing that is wrong, 1 for each that is
  // worth a look; the sum sorts the table.
  local state = std.join(' + ', [
    '10 * (%s < bool 1)' % anchor,
    '10 * (%s != bool 1)' % p.apiState(c),
    '10 * ((%s) < bool 0)' % age,
    '((%s) > bool %d)' % [age, c.summaryStaleSeconds],
    '9 * ((%s) > bool %d)' % [age, c.dataStaleSeconds],
    '((%s) < bool 0)' % score,
    '((%s) >= bool %s)' % [score, c.scoreWarning],
    '9 * ((%s) >= bool %s)' % [score, c.scoreCritical],
    '(%s)' % alerts(),
    '9 * ((%s) > bool 0)' % alerts(', severity="critical"'),
  ]);
  local column(name, properties) = {
    matcher: { id: 'byName', options: name },
    properties: [{ id: 'custom.cellOptions', value: { type: 'color-background' } }, { id: 'color', value: { mode: 'thresholds' } }] + properties,
  };
  local missing(text, color) = [{ type: 'value', options: { '-1': { text: text, color: color, index: 0 } } }, { type: 'special', options: { match: 'null+nan', result: { color: p.neutral, index: 1 } } }];
  p.dashboard(c, 'overview', 'Overview',
              'Every account from global_stability_exporter at a glance, trouble first: scraped, API answering, data fresh, score, alerts firing. Then the score of each, and a row per account with its pillars, conflict events, briefings, data freshness and exporter health.',
              p.variables(c),
              [
                // One row per account, trouble first, none missing.
                p.table('Accounts',
                        'One row per account shown, trouble first. state: TROUBLE (red) when something is wrong, WARNING (orange) when something is worth a look. scraped: Prometheus could scrape it (its probe, with several accounts). API: every endpoint answered, or why not: its key refused (401 or 403 within the hour), out of quota (429 within the hour), the exporter backing off as a Retry-After asked, failing. oldest data: the age of its oldest as_of, orange past %(summaryStaleSeconds)ss, red past %(dataStaleSeconds)ss, still counting while its endpoint fails; none in a day is red. score: the composite, orange from %(scoreWarning)s, red from %(scoreCritical)s. alerts firing: the mixin\'s alerts firing about it (ALERTS: needs the alerting rules loaded where these series are).' % c,
                        [0, 0, 14, 9], [
                          p.target('max by (%s) (%s)' % [by, state], instant=true, table=true),
                          p.target(anchor, instant=true, table=true),
                          p.target(p.apiState(c), instant=true, table=true),
                          p.target('max by (%s) (%s)' % [by, age], instant=true, table=true),
                          p.target('max by (%s) (%s)' % [by, score], instant=true, table=true),
                          p.target('max by (%s) (%s)' % [by, alerts()], instant=true, table=true),
                        ],
                        transformations=[
                          { id: 'merge', options: {} },
                          { id: 'organize', options: {
                            excludeByName: { Time: true },
                            indexByName: { [c.clusterLabel]: 0, instance: 1, 'Value #A': 2, 'Value #B': 3, 'Value #C': 4, 'Value #D': 5, 'Value #E': 6, 'Value #F': 7 },
                            renameByName: { instance: 'account', 'Value #A': 'state', 'Value #B': 'scraped', 'Value #C': 'API', 'Value #D': 'oldest data', 'Value #E': 'score', 'Value #F': 'alerts firing' },
                          } },
                          { id: 'sortBy', options: { fields: {}, sort: [{ field: 'state', desc: true }] } },
                        ],
                        overrides=[
                          column('state', [
                            { id: 'thresholds', value: p.thresholds(['green', [1, 'orange'], [10, 'red']]) },
                            { id: 'mappings', value: [
                              { type: 'range', options: { from: 0, to: 0, result: { text: 'OK', index: 0 } } },
                              { type: 'range', options: { from: 1, to: 9.5, result: { text: 'WARNING', index: 1 } } },
                              { type: 'range', options: { from: 10, to: 1e9, result: { text: 'TROUBLE', index: 2 } } },
                              { type: 'special', options: { match: 'null+nan', result: { color: p.neutral, index: 3 } } },
                            ] },
                          ]),
                          column('scraped', [
                            { id: 'thresholds', value: p.thresholds(['red', [1, 'green']]) },
                            { id: 'mappings', value: [{ type: 'value', options: { '1': { text: 'OK', color: 'green', index: 0 }, '0': { text: 'DOWN', color: 'red', index: 1 } } }, { type: 'special', options: { match: 'null+nan', result: { color: p.neutral, index: 2 } } }] },
                          ]),
                          column('API', [{ id: 'mappings', value: p.apiMappings }]),
                          column('oldest data', [
                            { id: 'unit', value: p.age },
                            { id: 'thresholds', value: p.thresholds(['green', [c.summaryStaleSeconds, 'orange'], [c.dataStaleSeconds, 'red']]) },
                            { id: 'mappings', value: missing('none in a day', 'red') },
                          ]),
                          column('score', [
                            { id: 'decimals', value: 0 },
                            { id: 'thresholds', value: p.thresholds(['green', [c.scoreWarning, 'orange'], [c.scoreCritical, 'red']]) },
                            { id: 'mappings', value: missing('none', 'orange') },
                          ]),
                          column('alerts firing', [
                            { id: 'thresholds', value: p.thresholds(['green', [1, 'orange']]) },
                            { id: 'mappings', value: [{ type: 'special', options: { match: 'null+nan', result: { color: p.neutral, index: 0 } } }] },
                          ]),
                        ]),
                p.barGauge('Composite score',
                           'Composite global stability score of each account, 0-100, lower is more stable (global_stability_score). Orange from %(scoreWarning)s and red from %(scoreCritical)s: the thresholds of the GlobalStabilityScoreWarning and GlobalStabilityScoreCritical alerts. An account without a score says why.' % c,
                           [14, 0, 10, 9], [p.target(p.orWhy(c, 'max by (%s) (global_stability_score{%s})' % [by, sel], p.endpoints.overview), p.accountName(c), instant=true)],
                           defaults={ max: 100, decimals: 0, color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.scoreWarning, 'orange'], [c.scoreCritical, 'red']]) } + p.why('/v1/' + p.endpoints.overview),
                           options={ namePlacement: 'top' }),
                p.timeSeries('Composite score history',
                             'global_stability_score of each account over time, one colour per account in every panel; the dashed lines are the warning and critical alert thresholds. An account without a score is listed, unavailable.',
                             [0, 9, 14, 8], [p.target('max by (%s) (global_stability_score{%s}) or on (%s) %s * NaN' % [by, sel, by, anchor], p.accountName(c))],
                             defaults={ min: 0, max: 100, mappings: [{ type: 'special', options: { match: 'nan', result: { text: 'unavailable', color: 'orange', index: 0 } } }] },
                             thresholdLines=p.thresholds(['transparent', [c.scoreWarning, 'orange'], [c.scoreCritical, 'red']]), accounts=true),
                // A table: the word is a label, and a stat that shows a
                // label as its name cannot say "No data" when there is none.
                p.table('Trend',
                        "The API's own trend word per account (global_stability_trend). Deteriorating is red, stable blue, improving green; unavailable (no answer with a trend) orange; a word the spec does not name is grey.",
                        [14, 9, 5, 8], [p.target('max by (%s, trend) (%s) or on (%s) label_replace(%s, "trend", "unavailable", "", "")' % [by, q('global_stability_trend'), by, anchor], instant=true, table=true)],
                        transformations=[{ id: 'organize', options: { excludeByName: { Time: true, Value: true }, indexByName: { [c.clusterLabel]: 0, instance: 1, trend: 2 }, renameByName: { instance: 'account' } } }],
                        overrides=[{
                          matcher: { id: 'byName', options: 'trend' },
                          properties: [
                            { id: 'custom.cellOptions', value: { type: 'color-background' } },
                            { id: 'color', value: { mode: 'fixed', fixedColor: 'text' } },
                            { id: 'mappings', value: [{
                              type: 'value',
                              options: {
                                [word[0]]: { color: word[1], index: word[2] }
                                for word in [['deteriorating', 'red', 0], ['worsening', 'red', 1], ['stable', 'blue', 2], ['improving', 'green', 3], ['unavailable', 'orange', 4]]
                              },
                            }] },
                          ],
                        }]),
                p.barGauge('Rise over the hour\'s low',
                           'How far the composite of each account is above its lowest value of the past hour (global_stability:score_rise_1h): the quantity GlobalStabilityRapidDeterioration watches. Red above %(rapidRise)s; the alert fires when that lasts %(rapidRiseFor)s.' % c,
                           [19, 9, 5, 8], [p.target(p.orWhy(c, 'max by (%s) (global_stability:score_rise_1h{%s})' % [by, sel], p.endpoints.overview), p.accountName(c), instant=true)],
                           defaults={ max: 2 * c.rapidRise, decimals: 1, color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.rapidRise / 2, 'orange'], [c.rapidRise, 'red']]) } + p.why('/v1/' + p.endpoints.overview),
                           options={ namePlacement: 'top' }),

                // Then one row per account: what multiplies with them.
                p.instanceRow(17),

                // Pillars.
                p.barGauge('Pillar scores',
                           'Each pillar score from the overview (global_stability_pillar_score), 0-100, lower is more stable. Red from %(pillarScoreHigh)s, the GlobalStabilityPillarScoreHigh threshold.' % c,
                           [0, 18, 8, 8], [p.target(q('global_stability_pillar_score'), p.inRow(c, '{{pillar}}'), instant=true)],
                           defaults={ max: 100, decimals: 1, color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.pillarScoreHigh * 0.75, 'orange'], [c.pillarScoreHigh, 'red']]) } + p.noValue('none: /v1/%s failing or without them' % p.endpoints.overview)),
                p.timeSeries('Pillar scores over time',
                             'Each pillar score over time, one fixed colour per pillar (the same in every panel); the dashed line is the GlobalStabilityPillarScoreHigh threshold.',
                             [8, 18, 10, 8], [p.target(q('global_stability_pillar_score'), p.inRow(c, '{{pillar}}'))],
                             defaults={ min: 0, max: 100 },
                             overrides=p.colorOverrides(c, p.pillarColors),
                             thresholdLines=p.thresholds(['transparent', [c.pillarScoreHigh, 'red']])),
                p.stat('Pillar change over 24h',
                       "Each pillar's delta_24h from its drilldown, in the API's units; rising is worse (lower is more stable). Coloured against GlobalStabilityPillarSurge, which fires above %(pillarSurge)s: orange from half of it, red from it." % c,
                       [18, 18, 6, 8], [p.target(q('global_stability_pillar_delta_24h'), p.inRow(c, '{{pillar}}'), instant=true)],
                       defaults={ decimals: 1, color: { mode: 'thresholds' }, thresholds: p.surgeThresholds(c) } + p.noValue('none: the drilldowns failing'),
                       colorMode='background', options={ orientation: 'horizontal', textMode: 'value_and_name' }),

                // Conflict events and briefings.
                p.stat('Conflict events', 'Recent conflict events returned by /v1/conflict, all pages (global_stability_conflict_events).',
                       [0, 26, 4, 4], [p.target(p.orWhy(c, q('global_stability_conflict_events'), 'conflict'), p.accountName(c), instant=true)],
                       defaults={ color: { mode: 'fixed', fixedColor: 'text' } } + p.why('/v1/conflict')),
                p.stat('Escalation', 'Highest and mean escalation over the recent events (global_stability_conflict_escalation_max and _mean); the spec gives escalation no range.',
                       [0, 30, 4, 4], [p.target(q('global_stability_conflict_escalation_max'), p.inRow(c, 'max'), instant=true), p.target(q('global_stability_conflict_escalation_mean'), p.inRow(c, 'mean'), instant=true)],
                       defaults={ decimals: 2, color: { mode: 'fixed', fixedColor: 'text' } } + p.noValue('none: /v1/conflict failing or without events'), textMode='value_and_name'),
                // Names above their bars: beside them, Grafana cut the
                // longest (explosions_remote_viol…).
                p.barGauge('Events by category', 'Recent conflict events per category (global_stability_conflict_events_by_category), busiest first.',
                           [4, 26, 8, 8], [p.target('sort_desc(%s)' % q('global_stability_conflict_events_by_category'), p.inRow(c, '{{category}}'), instant=true)],
                           defaults={ color: { mode: 'fixed', fixedColor: 'blue' } } + p.noValue('none: /v1/conflict failing or without events'),
                           options={ namePlacement: 'top' }),
                p.panel('geomap', 'Where conflict events cluster',
                        'Recent conflict events counted per grid cell (global_stability_conflict_events_by_cell; cell size set by --collector.conflict.grid-degrees). Bubble size and the number on it: events in the cell; colour: the highest escalation in it (global_stability_conflict_escalation_max_by_cell, green 0 to red 1). Hover for the cell, its count and escalation. Readable without map tiles too.',
                        [12, 26, 12, 12],
                        // Both queries aggregated to the same labels (no __name__,
                        // no job): Grafana's merge joins rows whose every label
                        // column is equal, so that each cell's row carries both
                        // its count and its escalation.
                        [
                          p.target('sum by (%s, lat, lon) (%s)' % [by, q('global_stability_conflict_events_by_cell')], instant=true, table=true),
                          p.target('max by (%s, lat, lon) (%s)' % [by, q('global_stability_conflict_escalation_max_by_cell')], instant=true, table=true),
                        ],
                        defaults={ color: { mode: 'continuous-GrYlRd' }, thresholds: p.thresholds(['green', [0.4, 'yellow'], [0.7, 'red']]) },
                        overrides=[{ matcher: { id: 'byName', options: 'max escalation' }, properties: [{ id: 'min', value: 0 }, { id: 'max', value: 1 }, { id: 'decimals', value: 2 }] }],
                        options={
                          view: { id: 'coords', lat: 20, lon: 20, zoom: 1.3, allLayers: true },
                          controls: { showZoom: true, mouseWheelZoom: false, showAttribution: true, showScale: false },
                          basemap: { type: 'default', name: 'Basemap', config: {} },
                          layers: [{
                            type: 'markers',
                            // The legend shows the colour scale under the layer's name.
                            name: 'Highest escalation',
                            tooltip: true,
                            location: { mode: 'coords', latitude: 'lat', longitude: 'lon' },
                            config: {
                              showLegend: true,
                              style: {
                                size: { field: 'events', fixed: 5, min: 6, max: 30 },
                                color: { field: 'max escalation', fixed: 'dark-green' },
                                opacity: 0.8,
                                symbol: { mode: 'fixed', fixed: 'img/icons/marker/circle.svg' },
                                text: { mode: 'field', field: 'events', fixed: '' },
                                textConfig: { fontSize: 10, textAlign: 'center', textBaseline: 'middle', offsetX: 0, offsetY: 0 },
                              },
                            },
                          }],
                          tooltip: { mode: 'details' },
                        }) + {
                  transformations: [
                    { id: 'merge', options: {} },
                    { id: 'convertFieldType', options: { conversions: [{ targetField: 'lat', destinationType: 'number' }, { targetField: 'lon', destinationType: 'number' }], fields: {} } },
                    { id: 'organize', options: { excludeByName: { Time: true }, renameByName: { 'Value #A': 'events', 'Value #B': 'max escalation' } } },
                  ],
                },
                p.stat('Newest conflict event', 'occurred_at of the newest recent event (global_stability_conflict_latest_event_timestamp_seconds).',
                       [0, 34, 4, 4], [p.target(p.orWhy(c, q(event) + ' * 1000', 'conflict'), p.accountName(c), instant=true)],
                       unit='dateTimeFromNow', defaults={ color: { mode: 'fixed', fixedColor: 'text' } } + p.why('/v1/conflict')),
                p.stat('Briefings', 'Daily briefings returned by /v1/briefings, all pages (global_stability_briefings).',
                       [4, 34, 3, 4], [p.target(p.orWhy(c, q('global_stability_briefings'), 'briefings'), p.accountName(c), instant=true)],
                       defaults={ color: { mode: 'fixed', fixedColor: 'text' } } + p.why('/v1/briefings')),
                p.stat('Latest briefing', 'published_at of the newest briefing (global_stability_briefing_latest_published_timestamp_seconds).',
                       [7, 34, 5, 4], [p.target(p.orWhy(c, q(briefing) + ' * 1000', 'briefings'), p.accountName(c), instant=true)],
                       unit='dateTimeFromNow', defaults={ color: { mode: 'fixed', fixedColor: 'text' } } + p.why('/v1/briefings')),

                // Who drives the events and what the briefings are about: the
                // busiest few of each account, in each cluster shown.
                p.barGauge('Top actors', 'The actors named by most recent conflict events (global_stability_conflict_events_by_actor; an event counts once for each actor it names), busiest first: who drives the events.',
                           [0, 38, 12, 12], [p.target(top('global_stability_conflict_events_by_actor'), p.inRow(c, '{{actor}}'), instant=true)],
                           defaults={ color: { mode: 'fixed', fixedColor: 'blue' } } + p.noValue('none: /v1/conflict failing or naming no actors'),
                           options={ namePlacement: 'top' }),
                p.barGauge('Briefing tags', 'The tags carried by most briefings (global_stability_briefings_by_tag), busiest first: what the briefings are about.',
                           [12, 38, 12, 12], [p.target(top('global_stability_briefings_by_tag'), p.inRow(c, '{{tag}}'), instant=true)],
                           defaults={ color: { mode: 'fixed', fixedColor: 'blue' } } + p.noValue('none: /v1/briefings failing or without tags'),
                           options={ namePlacement: 'top' }),

                // Freshness: the newest as_of of a day, so that a failing
                // endpoint's data keeps ageing here instead of vanishing
                // (the recording rule's window is a few minutes).
                p.barGauge('Data age by endpoint',
                           "How old each endpoint's as_of is: the newest within a day (global_stability_as_of_timestamp_seconds), so that the data of a failing endpoint keeps ageing. Orange past %(summaryStaleSeconds)ss, red past %(dataStaleSeconds)ss: GlobalStabilitySummaryStale and GlobalStabilityDataStale. An endpoint scraped without an as_of for a day says so, in red." % c,
                           [0, 50, 12, 10], [p.target('max by (%s, endpoint) (time() - max_over_time(%s{%s}[1d])) or on (%s, endpoint) max by (%s, endpoint) (global_stability_scrape_success{%s, endpoint=~"%s"}) * 0 - 1' % [by, asOf, sel, by, by, sel, asOfEndpoints], p.inRow(c, '{{endpoint}}'), instant=true)],
                           unit=p.age, defaults={ color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.summaryStaleSeconds, 'orange'], [c.dataStaleSeconds, 'red']]), mappings: [{ type: 'value', options: { '-1': { text: 'no as_of in a day', color: 'red', index: 0 } } }] } + p.noValue('no endpoint with an as_of answered'),
                           // Names above their bars: beside them, Grafana 12.4 cut
                           // the longest (global-stability/pillar/supply_ch…).
                           options={ namePlacement: 'top' }),
                // Two linear axes, each in the unit its ages come in, so the
                // ticks read as minutes and hours: a log axis ticks at powers
                // of ten seconds (1.67 min, 16.7 min, 2.78 hours), whatever
                // the unit prints them as.
                p.timeSeries('Data age over time',
                             "Age of each endpoint's as_of in minutes (left axis), the newest within the hour, so that a failing endpoint's line keeps rising; and of the newest conflict event and the latest briefing in hours (right axis): the endpoints' are minutes old when all is well, the daily briefing's up to a day.",
                             [12, 50, 12, 10],
                             [
                               p.target('(time() - max_over_time(%s{%s}[1h])) / 60' % [asOf, sel], p.inRow(c, '{{endpoint}}')),
                               p.target('(time() - %s) / 3600' % q(event), p.inRow(c, 'newest conflict event')),
                               p.target('(time() - %s) / 3600' % q(briefing), p.inRow(c, 'latest briefing')),
                             ],
                             unit='m', defaults={ min: 0, custom+: { axisLabel: 'endpoints' } },
                             overrides=[{
                               matcher: { id: 'byRegexp', options: '(.+ )?(newest conflict event|latest briefing)' },
                               properties: [{ id: 'unit', value: 'h' }, { id: 'custom.axisPlacement', value: 'right' }, { id: 'custom.axisLabel', value: 'event, briefing' }],
                             }] + p.colorOverrides(c, {
                               [e.label]: p.endpointColors[e.label]
                               for e in p.endpoints.endpoints
                               if std.member(e.metrics, asOf)
                             } + {
                               // The endpoints of the newest event and briefing
                               // have no as_of: these ages take their colours.
                               'newest conflict event': p.endpointColors[p.endpointOf(event)],
                               'latest briefing': p.endpointColors[p.endpointOf(briefing)],
                             })),

                // The exporter and the API.
                p.stat('API reachable', '1 when every endpoint answered in the last scrape (global_stability_up); else why not where it is known: the key refused (a 401 or 403 within the hour), out of quota (a 429 within the hour), the exporter backing off as a Retry-After asked; or FAILING.',
                       [0, 60, 4, 4], [p.target(p.apiState(c), p.accountName(c), instant=true)],
                       defaults={ mappings: p.apiMappings, noValue: 'no account', color: { mode: 'thresholds' }, thresholds: p.thresholds(['red', [1, 'green']]) }, colorMode='background'),
                p.stat('Exporter scraped', "Prometheus' own up for the instance: FAILED when it cannot be scraped (with several targets, its probe).",
                       [4, 60, 4, 4], [p.target('up{%s}' % sel, p.accountName(c), instant=true)],
                       defaults={ mappings: p.okFailed, color: { mode: 'thresholds' }, thresholds: p.thresholds(['red', [1, 'green']]) } + p.noValue('not scraped'), colorMode='background'),
                p.stat('Data source', 'global_stability_exporter_demo of the exporter that serves the instance: DEMO when it runs with --demo and every value here is made up.',
                       [8, 60, 4, 4], [p.target(p.process(c, 'global_stability_exporter_demo'), p.accountName(c), instant=true)],
                       defaults={
                         mappings: [{ type: 'value', options: { '1': { text: 'DEMO', color: 'red', index: 0 }, '0': { text: 'real API', color: 'green', index: 1 } } }],
                         color: { mode: 'thresholds' },
                         thresholds: p.thresholds(['green', [1, 'red']]),
                       } + p.noValue('exporter not scraped'), colorMode='background', textMode='value'),
                // While the exporter backs off, no request is made: no line,
                // rather than one at 0 s.
                p.timeSeries('Endpoint request duration', "Wall time of each endpoint's requests in a scrape, all pages (global_stability_scrape_duration_seconds); none while the exporter backs off after a 429 or 503 (global_stability_api_backoff_seconds).",
                             [12, 60, 12, 8], [p.target('%s unless %s > 0' % [q('global_stability_scrape_duration_seconds'), q('global_stability_api_backoff_seconds')], p.inRow(c, '{{endpoint}}'))], unit='s',
                             overrides=p.colorOverrides(c, p.endpointColors)),
                p.stateTimeline('Endpoint success', 'Per endpoint, whether each scrape succeeded (global_stability_scrape_success): green OK, red FAILED. A failed endpoint has none of its series in that scrape.',
                                [0, 64, 12, 9], [p.target(q('global_stability_scrape_success'), p.inRow(c, '{{endpoint}}'))], p.okFailed),
                p.timeSeries('API requests by status code', 'Requests to the API per hour by HTTP status code, "error" when no response arrived (recording rule global_stability:api_requests:rate5m). One colour per class: 2xx green, 304 blue, 4xx orange, 401 and 403 red, 429 purple, 5xx red, error dark red; failures on their own axis (right), with points, so that a few stand out beside many answers.',
                             [12, 68, 12, 5], [p.target('sum by (%s) (%s) * 3600' % [std.join(', ', (if c.showMultiCluster then [c.clusterLabel] else []) + ['code']), own('global_stability:api_requests:rate5m')], p.inRow(c, '{{code}}'))],
                             unit=p.perHour, defaults={ min: 0 }, overrides=p.statusOverrides),

                // What the exporter costs the API, and what the API allows.
                p.timeSeries('API requests per hour',
                             "Requests sent to the API (304s included) against scrapes served (global_stability_exporter_scrapes_total; an HA pair serves twice the scrapes of one server), per hour. Requests fall below scrapes when answers are reused: fresh by the API's Cache-Control, confirmed by a 304, or inside the summary's refresh interval.",
                             [0, 73, 6, 8], [
                               p.target(perHour('global_stability_api_requests_total'), p.inRow(c, 'requests sent')),
                               p.target(perHour('global_stability_exporter_scrapes_total'), p.inRow(c, 'scrapes served')),
                             ],
                             unit=p.perHour, defaults={ min: 0 }),
                p.timeSeries('API bytes received per hour', 'Body bytes received from the API, per hour (global_stability_api_received_bytes_total): what the exporter downloads.',
                             [6, 73, 6, 8], [p.target(perHour('global_stability_api_received_bytes_total'), p.inRow(c, 'bytes received'))],
                             unit='bytes', defaults={ min: 0, custom+: { axisLabel: 'per hour' } }),
                p.timeSeries('API answers reused per hour', 'Endpoints whose stored answer was reused instead of downloaded, per hour, by reason (global_stability_api_responses_reused_total): fresh (no request), not_modified (a 304), refresh_interval (no request).',
                             [12, 73, 6, 8], [p.target(perHour('global_stability_api_responses_reused_total', 'reason'), p.inRow(c, '{{reason}}'))],
                             unit=p.perHour, defaults={ min: 0 }),
                // One line per account, as the alert has one: its quota is
                // the account's, at the lowest share any endpoint announces.
                p.timeSeries('API quota left',
                             "The share of its quota the API says is left (global_stability_api_rate_limit_remaining / _limit, from its rate-limit headers), at the lowest any endpoint's answers announce, as GlobalStabilityAPIQuotaLow reads it; the dashed line is that alert's threshold. Empty while the API announces no quota.",
                             [18, 73, 6, 8],
                             [p.target('min by (%s) (%s)' % [std.join(', ', (if c.showMultiCluster then [c.clusterLabel] else []) + ['target']), p.own(c, function(s) '100 * global_stability_api_rate_limit_remaining{%s} / global_stability_api_rate_limit_limit{%s}' % [s, s])], p.accountName(c, 'target'))],
                             unit='percent', defaults={ min: 0, max: 100 },
                             thresholdLines=p.thresholds(['transparent', [c.quotaLowPercent, 'red']])),
              ])
