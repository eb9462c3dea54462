// Global Stability / Overview: the score, pillars, conflict events,
// briefings, data freshness and the exporter's health.
local p = import 'panels.libsonnet';

function(c)
  local sel = p.selector(c);
  local q(metric, extra='') = '%s{%s%s}' % [metric, sel, extra];
  // The exporter's own series of the instance shown: its requests, reuse, quota.
  local own(metric, wrap='%s') = p.own(c, function(s) wrap % ('%s{%s}' % [metric, s]));
  local event = 'global_stability_conflict_latest_event_timestamp_seconds';
  local briefing = 'global_stability_briefing_latest_published_timestamp_seconds';
  local perHour(metric, by='') = if by == '' then 'sum(%s) * 3600' % own(metric, 'rate(%s[5m])') else 'sum by (%s) (%s) * 3600' % [by, own(metric, 'rate(%s[5m])')];
  p.dashboard(c, 'overview', 'Overview',
              'Composite score, pillars, conflict events, briefings, data freshness and exporter health from global_stability_exporter: every instance shown at the top, then a row per instance.',
              p.variables(c),
              [
                // Every instance shown, side by side: each value named by its instance.
                p.gauge('Composite score',
                        'Composite global stability score, 0-100, lower is more stable (global_stability_score). Orange from %(scoreWarning)s and red from %(scoreCritical)s: the thresholds of the GlobalStabilityScoreWarning and GlobalStabilityScoreCritical alerts.' % c,
                        [0, 0, 6, 8], [p.target(q('global_stability_score'), '{{instance}}', instant=true)],
                        defaults={ min: 0, max: 100, decimals: 0, color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.scoreWarning, 'orange'], [c.scoreCritical, 'red']]) }),
                // A table: the word is a label, and a stat that shows a
                // label as its name cannot say "No data" when there is none.
                p.table('Trend',
                        "The API's own trend word per instance (global_stability_trend). Deteriorating is red, stable blue, improving green; a word the spec does not name is grey.",
                        [6, 0, 6, 8], [p.target('max by (instance, trend) (%s)' % q('global_stability_trend'), instant=true, table=true)],
                        transformations=[{ id: 'organize', options: { excludeByName: { Time: true, Value: true }, indexByName: { instance: 0, trend: 1 } } }],
                        overrides=[{
                          matcher: { id: 'byName', options: 'trend' },
                          properties: [
                            { id: 'custom.cellOptions', value: { type: 'color-background' } },
                            { id: 'color', value: { mode: 'fixed', fixedColor: 'text' } },
                            { id: 'mappings', value: [{
                              type: 'value',
                              options: {
                                [word[0]]: { color: word[1], index: word[2] }
                                for word in [['deteriorating', 'red', 0], ['worsening', 'red', 1], ['stable', 'blue', 2], ['improving', 'green', 3]]
                              },
                            }] },
                          ],
                        }]),
                p.stat('Rise above the hour\'s low',
                       'How far the composite is above its lowest value of the past hour (global_stability:score_rise_1h): the quantity GlobalStabilityRapidDeterioration watches. Red above %(rapidRise)s; the alert fires when that lasts %(rapidRiseFor)s.' % c,
                       [12, 0, 4, 8], [p.target('global_stability:score_rise_1h{%s}' % sel, '{{instance}}', instant=true)],
                       defaults={ decimals: 1, color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.rapidRise / 2, 'orange'], [c.rapidRise, 'red']]) }),
                p.timeSeries('Composite score history',
                             'global_stability_score over time; the dashed lines are the warning and critical alert thresholds.',
                             [16, 0, 8, 8], [p.target(q('global_stability_score'), '{{instance}}')],
                             defaults={ min: 0, max: 100 },
                             thresholdLines=p.thresholds(['transparent', [c.scoreWarning, 'orange'], [c.scoreCritical, 'red']])),

                // Then one row per instance: what multiplies with them.
                p.instanceRow(8),

                // Pillars.
                p.barGauge('Pillar scores',
                           'Each pillar score from the overview (global_stability_pillar_score), 0-100, lower is more stable. Red from %(pillarScoreHigh)s, the GlobalStabilityPillarScoreHigh threshold.' % c,
                           [0, 9, 8, 8], [p.target(q('global_stability_pillar_score'), '{{pillar}}', instant=true)],
                           defaults={ max: 100, decimals: 1, color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.pillarScoreHigh * 0.75, 'orange'], [c.pillarScoreHigh, 'red']]) }),
                p.timeSeries('Pillar scores over time',
                             'Each pillar score over time, one fixed colour per pillar (the same in every panel); the dashed line is the GlobalStabilityPillarScoreHigh threshold.',
                             [8, 9, 10, 8], [p.target(q('global_stability_pillar_score'), '{{pillar}}')],
                             defaults={ min: 0, max: 100 },
                             overrides=p.pillarColorOverrides(p.pillarColors),
                             thresholdLines=p.thresholds(['transparent', [c.pillarScoreHigh, 'red']])),
                p.stat('Pillar change over 24h',
                       "Each pillar's delta_24h from its drilldown, in the API's units; rising is worse (lower is more stable). Coloured against GlobalStabilityPillarSurge, which fires above %(pillarSurge)s: orange from half of it, red from it." % c,
                       [18, 9, 6, 8], [p.target(q('global_stability_pillar_delta_24h'), '{{pillar}}', instant=true)],
                       defaults={ decimals: 1, color: { mode: 'thresholds' }, thresholds: p.surgeThresholds(c) },
                       colorMode='background', options={ orientation: 'horizontal', textMode: 'value_and_name' }),

                // Conflict events and briefings.
                p.stat('Conflict events', 'Recent conflict events returned by /v1/conflict, all pages (global_stability_conflict_events).',
                       [0, 17, 4, 4], [p.target(q('global_stability_conflict_events'), '{{instance}}', instant=true)],
                       defaults={ color: { mode: 'fixed', fixedColor: 'text' } }),
                p.stat('Escalation', 'Highest and mean escalation over the recent events (global_stability_conflict_escalation_max and _mean); the spec gives escalation no range.',
                       [0, 21, 4, 4], [p.target(q('global_stability_conflict_escalation_max'), 'max', instant=true), p.target(q('global_stability_conflict_escalation_mean'), 'mean', instant=true)],
                       defaults={ decimals: 2, color: { mode: 'fixed', fixedColor: 'text' } }, textMode='value_and_name'),
                p.barGauge('Events by category', 'Recent conflict events per category (global_stability_conflict_events_by_category), busiest first.',
                           [4, 17, 8, 8], [p.target('sort_desc(%s)' % q('global_stability_conflict_events_by_category'), '{{category}}', instant=true)],
                           defaults={ color: { mode: 'fixed', fixedColor: 'blue' } }),
                p.panel('geomap', 'Where conflict events cluster',
                        'Recent conflict events counted per grid cell (global_stability_conflict_events_by_cell; cell size set by --collector.conflict.grid-degrees). Bubble size and the number on it: events in the cell; colour: the highest escalation in it (global_stability_conflict_escalation_max_by_cell, green 0 to red 1). Hover for the cell, its count and escalation. Readable without map tiles too.',
                        [12, 17, 12, 12],
                        // Both queries aggregated to the same labels (no __name__,
                        // no job): Grafana's merge joins rows whose every label
                        // column is equal, so that each cell's row carries both
                        // its count and its escalation.
                        [
                          p.target('sum by (instance, lat, lon) (%s)' % q('global_stability_conflict_events_by_cell'), instant=true, table=true),
                          p.target('max by (instance, lat, lon) (%s)' % q('global_stability_conflict_escalation_max_by_cell'), instant=true, table=true),
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
                       [0, 25, 4, 4], [p.target(q(event) + ' * 1000', '{{instance}}', instant=true)],
                       unit='dateTimeFromNow', defaults={ color: { mode: 'fixed', fixedColor: 'text' } }),
                p.stat('Briefings', 'Daily briefings returned by /v1/briefings, all pages (global_stability_briefings).',
                       [4, 25, 3, 4], [p.target(q('global_stability_briefings'), '{{instance}}', instant=true)],
                       defaults={ color: { mode: 'fixed', fixedColor: 'text' } }),
                p.stat('Latest briefing', 'published_at of the newest briefing (global_stability_briefing_latest_published_timestamp_seconds).',
                       [7, 25, 5, 4], [p.target(q(briefing) + ' * 1000', '{{instance}}', instant=true)],
                       unit='dateTimeFromNow', defaults={ color: { mode: 'fixed', fixedColor: 'text' } }),

                // Freshness.
                p.barGauge('Data age by endpoint',
                           'How old each endpoint\'s as_of is. Orange past %(summaryStaleSeconds)ss, red past %(dataStaleSeconds)ss: GlobalStabilitySummaryStale and GlobalStabilityDataStale. Reads the recording rule global_stability:data_age_seconds (group global_stability.recording of the mixin\'s rules): empty unless that group is loaded.' % c,
                           [0, 29, 12, 10], [p.target('global_stability:data_age_seconds{%s}' % sel, '{{endpoint}}', instant=true)],
                           unit=p.age, defaults={ color: { mode: 'thresholds' }, thresholds: p.thresholds(['green', [c.summaryStaleSeconds, 'orange'], [c.dataStaleSeconds, 'red']]) },
                           // Names above their bars: beside them, Grafana 12.4 cut
                           // the longest (global-stability/pillar/supply_ch…).
                           options={ namePlacement: 'top' }),
                // Two linear axes, each in the unit its ages come in, so the
                // ticks read as minutes and hours: a log axis ticks at powers
                // of ten seconds (1.67 min, 16.7 min, 2.78 hours), whatever
                // the unit prints them as.
                p.timeSeries('Data age over time',
                             "Age of each endpoint's as_of in minutes (left axis), and of the newest conflict event and the latest briefing in hours (right axis): the endpoints' are minutes old when all is well, the daily briefing's up to a day. The endpoints' ages read the recording rule global_stability:data_age_seconds (group global_stability.recording of the mixin's rules): without that group, only the event and briefing lines show.",
                             [12, 29, 12, 10],
                             [
                               p.target('global_stability:data_age_seconds{%s} / 60' % sel, '{{endpoint}}'),
                               p.target('(time() - %s) / 3600' % q(event), 'newest conflict event'),
                               p.target('(time() - %s) / 3600' % q(briefing), 'latest briefing'),
                             ],
                             unit='m', defaults={ min: 0, custom+: { axisLabel: 'endpoints' } },
                             overrides=[{
                               matcher: { id: 'byRegexp', options: '^(newest conflict event|latest briefing)$' },
                               properties: [{ id: 'unit', value: 'h' }, { id: 'custom.axisPlacement', value: 'right' }, { id: 'custom.axisLabel', value: 'event, briefing' }],
                             }] + p.pillarColorOverrides({
                               [e.label]: p.endpointColors[e.label]
                               for e in p.endpoints.endpoints
                               if std.member(e.metrics, 'global_stability_as_of_timestamp_seconds')
                             } + {
                               // The endpoints of the newest event and briefing
                               // have no as_of: these ages take their colours.
                               'newest conflict event': p.endpointColors[p.endpointOf(event)],
                               'latest briefing': p.endpointColors[p.endpointOf(briefing)],
                             })),

                // The exporter and the API.
                p.stat('API reachable', '1 when every endpoint answered in the last scrape (global_stability_up).',
                       [0, 39, 4, 4], [p.target(q('global_stability_up'), '{{instance}}', instant=true)],
                       defaults={ mappings: p.okFailed, color: { mode: 'thresholds' }, thresholds: p.thresholds(['red', [1, 'green']]) }, colorMode='background'),
                p.stat('Exporter scraped', "Prometheus' own up for the instance: FAILED when it cannot be scraped (with several targets, its probe).",
                       [4, 39, 4, 4], [p.target('up{%s}' % sel, '{{instance}}', instant=true)],
                       defaults={ mappings: p.okFailed, color: { mode: 'thresholds' }, thresholds: p.thresholds(['red', [1, 'green']]) }, colorMode='background'),
                p.stat('Data source', 'global_stability_exporter_demo of the exporter that serves the instance: DEMO when it runs with --demo and every value here is made up.',
                       [8, 39, 4, 4], [p.target(p.process(c, 'global_stability_exporter_demo'), '{{instance}}', instant=true)],
                       defaults={
                         mappings: [{ type: 'value', options: { '1': { text: 'DEMO', color: 'red', index: 0 }, '0': { text: 'real API', color: 'green', index: 1 } } }],
                         color: { mode: 'thresholds' },
                         thresholds: p.thresholds(['green', [1, 'red']]),
                       }, colorMode='background', textMode='value'),
                p.timeSeries('Endpoint request duration', "Wall time of each endpoint's requests in a scrape, all pages (global_stability_scrape_duration_seconds).",
                             [12, 39, 12, 8], [p.target(q('global_stability_scrape_duration_seconds'), '{{endpoint}}')], unit='s',
                             overrides=p.endpointColorOverrides),
                p.stateTimeline('Endpoint success', 'Per endpoint, whether each scrape succeeded (global_stability_scrape_success): green OK, red FAILED. A failed endpoint has none of its series in that scrape.',
                                [0, 43, 12, 9], [p.target(q('global_stability_scrape_success'), '{{endpoint}}')], p.okFailed),
                p.timeSeries('API requests by status code', 'Requests to the API per hour by HTTP status code, "error" when no response arrived (recording rule global_stability:api_requests:rate5m).',
                             [12, 47, 12, 5], [p.target('sum by (code) (%s) * 3600' % own('global_stability:api_requests:rate5m'), '{{code}}')],
                             unit=p.perHour, defaults={ min: 0 }),

                // What the exporter costs the API, and what the API allows.
                p.timeSeries('API requests per hour',
                             "Requests sent to the API (304s included) against scrapes served (global_stability_exporter_scrapes_total; an HA pair serves twice the scrapes of one server), per hour. Requests fall below scrapes when answers are reused: fresh by the API's Cache-Control, confirmed by a 304, or inside the summary's refresh interval.",
                             [0, 52, 6, 8], [
                               p.target(perHour('global_stability_api_requests_total'), 'requests sent'),
                               p.target(perHour('global_stability_exporter_scrapes_total'), 'scrapes served'),
                             ],
                             unit=p.perHour, defaults={ min: 0 }),
                p.timeSeries('API bytes received per hour', 'Body bytes received from the API, per hour (global_stability_api_received_bytes_total): what the exporter downloads.',
                             [6, 52, 6, 8], [p.target(perHour('global_stability_api_received_bytes_total'), 'bytes received')],
                             unit='bytes', defaults={ min: 0, custom+: { axisLabel: 'per hour' } }),
                p.timeSeries('API answers reused per hour', 'Endpoints whose stored answer was reused instead of downloaded, per hour, by reason (global_stability_api_responses_reused_total): fresh (no request), not_modified (a 304), refresh_interval (no request).',
                             [12, 52, 6, 8], [p.target(perHour('global_stability_api_responses_reused_total', 'reason'), '{{reason}}')],
                             unit=p.perHour, defaults={ min: 0 }),
                // One line per account, as the alert has one: its quota is
                // the account's, at the lowest share any endpoint announces.
                p.timeSeries('API quota left',
                             "The share of its quota the API says is left (global_stability_api_rate_limit_remaining / _limit, from its rate-limit headers), at the lowest any endpoint's answers announce, as GlobalStabilityAPIQuotaLow reads it; the dashed line is that alert's threshold. Empty while the API announces no quota.",
                             [18, 52, 6, 8],
                             [p.target('min by (target) (%s)' % p.own(c, function(s) '100 * global_stability_api_rate_limit_remaining{%s} / global_stability_api_rate_limit_limit{%s}' % [s, s]), '{{target}}')],
                             unit='percent', defaults={ min: 0, max: 100 },
                             thresholdLines=p.thresholds(['transparent', [c.quotaLowPercent, 'red']])),
              ])
