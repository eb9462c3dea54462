// Small helpers for Grafana panels, in the classic JSON model (schemaVersion
// 39, Grafana 11 and 12). Plain jsonnet: grafonnet cannot be fetched where
// this is built, and these few functions are all the dashboards need.
local datasource = { type: 'prometheus', uid: '${datasource}' };

// The endpoints and pillars, from their descriptions (endpoint/api.go, see
// ../endpoints.json).
local endpoints = import '../endpoints.json';

// Colours of distinct hues: the pillars', in the pillars' order, then the
// other endpoints', in theirs (no two alike, such as a blue and a light
// blue).
local pillarPalette = ['red', 'purple', 'orange', 'blue'];
local otherPalette = ['yellow', 'green', '#ff9da7', '#9c755f', '#19b3b3'];
local others = [e.label for e in endpoints.endpoints if e.label != endpoints.overview && !std.objectHas(e, 'pillar')];
assert std.length(endpoints.pillars) <= std.length(pillarPalette) : 'panels.libsonnet: more pillars than pillarPalette has colours: add one';
assert std.length(others) <= std.length(otherPalette) : 'panels.libsonnet: more endpoints than otherPalette has colours: add one';

{
  datasource: datasource,
  endpoints: endpoints,

  // One fixed colour per pillar, the same in every panel.
  pillarColors: { [endpoints.pillars[i]]: pillarPalette[i] for i in std.range(0, std.length(endpoints.pillars) - 1) },

  // One fixed colour per endpoint, in every panel with a series per
  // endpoint: Grafana's classic palette repeated colours among that many.
  // The overview's is the text colour, a drilldown's its pillar's.
  endpointColors:: {
    [e.label]: if e.label == endpoints.overview then 'text'
    else if std.objectHas(e, 'pillar') then $.pillarColors[e.pillar]
    else otherPalette[std.find(e.label, others)[0]]
    for e in endpoints.endpoints
  },

  // The endpoint that exports metric.
  endpointOf(metric):: [e.label for e in endpoints.endpoints if std.member(e.metrics, metric)][0],

  // A query. instant for panels that show the value now.
  target(expr, legend='', refId='A', instant=false, table=false):: {
    datasource: datasource,
    expr: expr,
    legendFormat: legend,
    refId: refId,
    range: !instant,
    instant: instant,
  } + (if table then { format: 'table' } else {}),

  thresholds(steps):: {
    mode: 'absolute',
    steps: [{ color: steps[0], value: null }] + [
      { color: s[1], value: s[0] }
      for s in steps[1:]
    ],
  },

  // A count per hour: Grafana has no such unit, and a bare number on an
  // axis does not say what it counts over. Every rate is shown per hour,
  // so that neighbouring panels agree.
  perHour:: 'suffix: /h',

  // A pillar's delta_24h against GlobalStabilityPillarSurge's threshold:
  // a small rise is not an alarm.
  surgeThresholds(c):: self.thresholds(['green', [c.pillarSurge / 2, 'orange'], [c.pillarSurge, 'red']]),

  // An age in seconds, read as minutes and seconds, not 1.14 min.
  age:: 'dtdurations',

  // Overrides that give each series named in colors its own colour. In a
  // row of one account, several clusters name theirs first (inRow): the
  // override then matches the name after any cluster.
  colorOverrides(c, colors):: [
    {
      matcher: if c.showMultiCluster then { id: 'byRegexp', options: '(.+ )?' + name } else { id: 'byName', options: name },
      properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: colors[name] } }],
    }
    for name in std.objectFields(colors)
  ],

  // HTTP status codes by class, one colour each, whichever account or
  // cluster a series is of (its name ends with its code): later overrides
  // win. Failures go on an axis of their own, with points, so that a few
  // 429s an hour stand out beside a thousand 200s instead of lying on the
  // zero line.
  statusColors:: [
    ['2[0-9][0-9]', 'green'],
    ['4[0-9][0-9]', 'orange'],
    ['304', 'blue'],
    ['401|403', 'red'],
    ['429', 'purple'],
    ['5[0-9][0-9]', 'red'],
    ['error', 'dark-red'],
  ],
  statusOverrides:: [
    {
      matcher: { id: 'byRegexp', options: '(.+ )?(%s)' % s[0] },
      properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: s[1] } }] + (
        if std.member(['green', 'blue'], s[1]) then [] else [
          { id: 'custom.axisPlacement', value: 'right' },
          { id: 'custom.axisLabel', value: 'failed' },
          { id: 'custom.showPoints', value: 'always' },
        ]
      ),
    }
    for s in $.statusColors
  ],

  // What a stat, gauge or bar shows without a value: text, in a neutral
  // colour, never a threshold's (Grafana colours a missing value with the
  // base step, green). The mapping says it too: for a NaN, Grafana would
  // print "NaN" rather than noValue.
  neutral:: '#8e8e8e',
  noValue(text):: {
    noValue: text,
    mappings+: [{ type: 'special', options: { match: 'null+nan', result: { text: text, color: $.neutral, index: 90 } } }],
  },

  // The reasons orWhy gives for a value missing, as mappings: red where
  // its endpoint (what) fails or the account is not scraped, orange where
  // the endpoint answered without it, neutral with no account at all.
  why(what):: {
    noValue: 'no account',
    mappings+: [
      { type: 'value', options: {
        '-1': { text: what + ' failing', color: 'red', index: 80 },
        '-2': { text: 'not scraped', color: 'red', index: 81 },
      } },
      { type: 'special', options: { match: 'nan', result: { text: 'not in the answer', color: 'orange', index: 82 } } },
      { type: 'special', options: { match: 'null', result: { color: $.neutral, index: 83 } } },
    ],
  },

  // Value mappings for a 1/0 health gauge.
  okFailed:: [{
    type: 'value',
    options: {
      '1': { text: 'OK', color: 'green', index: 0 },
      '0': { text: 'FAILED', color: 'red', index: 1 },
    },
  }],

  // The labels that tell the accounts apart, for aggregations: the
  // instance, after the cluster with several.
  account(c):: if c.showMultiCluster then '%s, instance' % c.clusterLabel else 'instance',
  // An account as legends name it: the instance (or the target of the
  // exporter's own series), after its cluster with several, so that prod
  // of two clusters reads as two.
  accountName(c, label='instance'):: if c.showMultiCluster then '{{%s}}/{{%s}}' % [c.clusterLabel, label] else '{{%s}}' % label,
  // A legend in the row of one account, which shows it in every cluster
  // chosen: the cluster first, with several.
  inRow(c, legend):: if c.showMultiCluster then '{{%s}} %s' % [c.clusterLabel, legend] else legend,

  // Every account shown, expr's value where it has one, else why not
  // (mappings why(endpoint)): -1 its endpoint failing, -2 the account not
  // scraped, NaN the endpoint answering without the value. So an account
  // in trouble is never missing from a panel that shows them all.
  orWhy(c, expr, endpoint)::
    local by = $.account(c), sel = $.selector(c);
    std.join(' or ', [
      expr,
      'on (%s) max by (%s) (global_stability_scrape_success{%s, endpoint="%s"} == 0) - 1' % [by, by, sel, endpoint],
      'on (%s) max by (%s) (up{%s} == 0) - 2' % [by, by, sel],
      'on (%s) max by (%s) (up{%s}) * NaN' % [by, by, sel],
    ]),

  panel(type, title, description, pos, targets, unit='none', defaults={}, overrides=[], options={}):: {
    type: type,
    title: title,
    description: description,
    datasource: datasource,
    gridPos: { x: pos[0], y: pos[1], w: pos[2], h: pos[3] },
    targets: [targets[i] { refId: std.char(std.codepoint('A') + i) } for i in std.range(0, std.length(targets) - 1)],
    fieldConfig: { defaults: { unit: unit } + defaults, overrides: overrides },
    options: options,
  },

  reduce:: { reduceOptions: { calcs: ['lastNotNull'], fields: '', values: false } },

  stat(title, description, pos, targets, unit='none', defaults={}, overrides=[], options={}, colorMode='value', textMode='auto')::
    self.panel('stat', title, description, pos, targets, unit, defaults, overrides,
               self.reduce { colorMode: colorMode, graphMode: 'none', textMode: textMode, justifyMode: 'auto', orientation: 'auto' } + options),

  gauge(title, description, pos, targets, unit='none', defaults={})::
    self.panel('gauge', title, description, pos, targets, unit, defaults, [],
               self.reduce { showThresholdMarkers: true, showThresholdLabels: false, orientation: 'auto' }),

  barGauge(title, description, pos, targets, unit='none', defaults={}, overrides=[], options={})::
    // min 0: with Grafana's automatic min and max, equal values draw as empty bars.
    self.panel('bargauge', title, description, pos, targets, unit, { min: 0 } + defaults, overrides,
               self.reduce { displayMode: 'basic', orientation: 'horizontal', showUnfilled: true, valueMode: 'color', namePlacement: 'auto' } + options),

  // A time series. Series are told apart by colour (the classic palette,
  // or overrides); thresholds, if any, are dashed lines, never the colour
  // of the series.
  //
  // A panel of several accounts (accounts) colours each by its name, the
  // same in every panel, and lists them in a table to the right with
  // their last value: a legend below had room for three.
  timeSeries(title, description, pos, targets, unit='none', defaults={}, overrides=[], thresholdLines=null, accounts=false)::
    self.panel('timeseries', title, description, pos, targets, unit,
               {
                 color: { mode: if accounts then 'palette-classic-by-name' else 'palette-classic' },
                 custom: {
                   drawStyle: 'line',
                   lineWidth: 2,
                   fillOpacity: 0,
                   showPoints: 'never',
                   spanNulls: false,
                   thresholdsStyle: { mode: if thresholdLines == null then 'off' else 'dashed' },
                 },
                 [if thresholdLines != null then 'thresholds']: thresholdLines,
               } + defaults,
               overrides,
               {
                 legend: if accounts then { showLegend: true, displayMode: 'table', placement: 'right', calcs: ['lastNotNull'] }
                 else { showLegend: true, displayMode: 'list', placement: 'bottom' },
                 tooltip: { mode: 'multi', sort: 'desc' },
               }),

  stateTimeline(title, description, pos, targets, mappings)::
    self.panel('state-timeline', title, description, pos, targets, 'none',
               { color: { mode: 'thresholds' }, thresholds: $.thresholds(['red', [1, 'green']]), mappings: mappings, custom: { fillOpacity: 80, lineWidth: 0 } },
               [],
               { showValue: 'never', mergeValues: true, alignValue: 'left', rowHeight: 0.8, legend: { showLegend: false } }),

  table(title, description, pos, targets, unit='none', transformations=[], overrides=[])::
    self.panel('table', title, description, pos, targets, unit, {}, overrides, { showHeader: true, cellHeight: 'sm' })
    + { transformations: transformations },

  // A row repeated for each instance the dashboard shows: the panels after
  // it show that instance only, and the row's title names it.
  instanceRow(y):: {
    type: 'row',
    title: '$instance',
    collapsed: false,
    gridPos: { x: 0, y: y, w: 24, h: 1 },
    panels: [],
    repeat: 'instance',
  },

  // The matcher of the clusters the dashboard shows, when it shows some of
  // several (showMultiCluster); '' otherwise. Appended to a selector.
  cluster(c):: if c.showMultiCluster then ', %s=~"$cluster"' % c.clusterLabel else '',

  // The selector of a dashboard's series: the mixin's, in the chosen
  // cluster, of the chosen instances.
  selector(c):: '%s%s, instance=~"$instance"' % [c.selector, self.cluster(c)],

  // The variables every dashboard has: the data source, the cluster (with
  // several), and the exporter instances the selector matches in it.
  variables(c):: [
    {
      name: 'datasource',
      label: 'Data source',
      type: 'datasource',
      query: 'prometheus',
      current: {},
      hide: 0,
      refresh: 1,
      regex: '',
      options: [],
      includeAll: false,
      multi: false,
    },
  ] + (
    if c.showMultiCluster then [self.queryVariable('cluster', 'Cluster', 'label_values(global_stability_up{%s}, %s)' % [c.selector, c.clusterLabel], multi=true)] else []
  ) + [
    self.queryVariable('instance', 'Instance', 'label_values(global_stability_up{%s%s}, instance)' % [c.selector, self.cluster(c)], multi=true),
  ],

  queryVariable(name, label, query, multi=false, hide=0):: {
    name: name,
    label: label,
    type: 'query',
    datasource: datasource,
    definition: query,
    query: { query: query, refId: 'PrometheusVariableQueryEditor-VariableQuery' },
    refresh: 2,
    sort: 1,
    // A multi-value variable starts at All: every cluster, every instance,
    // and a repeated panel for every indicator.
    current: if multi then { selected: true, text: ['All'], value: ['$__all'] } else {},
    hide: hide,
    includeAll: multi,
    [if multi then 'allValue']: '.+',
    multi: multi,
    options: [],
    regex: '',
  },

  // The exporter's own series (its API requests, quota, reuse) of the
  // instances the dashboard shows, each with its account in the target
  // label. query(sel) is the query with the selector sel. With several
  // targets they are on the exporter's /metrics, each with its target's
  // name; with one account, on the instance's own scrape, without one
  // (the instance is then the account); with --demo on /metrics, there
  // too, with the demo's accounts' names.
  own(c, query)::
    local sel = c.exporterSelector + self.cluster(c);
    std.join(' or ', [
      query('%s, target=~"$instance"' % sel),
      query('%s, target!="", instance=~"$instance"' % sel),
      'label_replace(%s, "target", "$1", "instance", "(.*)")' % query('%s, target="", instance=~"$instance"' % sel),
    ]),

  // The exporter's own series of each account shown, labelled as the
  // account's own are (its instance): with several targets, the target
  // names it; with one account, the instance is the account. f(sel) is the
  // query with the selector sel.
  ownByAccount(c, f)::
    local sel = c.exporterSelector + self.cluster(c);
    'label_replace(%s, "instance", "$1", "target", "(.+)") or %s' % [f('%s, target=~"$instance"' % sel), f('%s, target="", instance=~"$instance"' % sel)],

  // Whether each account's API answers (1 every endpoint, 0 not), and
  // where it is known, why not: 401 its key refused (a 401 or 403 within
  // the hour), 429 its quota used up (a 429 within the hour, or the
  // exporter backing off after one: the counter of 429s may not move
  // again), 503 the exporter backing off as a Retry-After asked; NaN not
  // scraped.
  apiState(c)::
    local by = $.account(c), sel = $.selector(c);
    local anchor = 'max by (%s) (up{%s})' % [by, sel];
    local requests(codes, wrap) = 'sum by (%s) (%s) > 0' % [by, self.ownByAccount(c, function(s) wrap % ('global_stability_api_requests_total{%s, code=~"%s"}' % [s, codes]))];
    local backingOff = '(max by (%s) (global_stability_api_backoff_seconds{%s}) > 0)' % [by, sel];
    'max by (%s) ((%s) and %s or %s * NaN)' % [by, std.join(' or ', [
      'max by (%s) (global_stability_up{%s}) == 1' % [by, sel],
      '(%s) * 0 + 401' % requests('401|403', 'increase(%s[1h])'),
      '(%s) * 0 + 429' % requests('429', 'increase(%s[1h])'),
      '(%s and (%s)) * 0 + 429' % [backingOff, requests('429', '%s')],
      '%s * 0 + 503' % backingOff,
      'max by (%s) (global_stability_up{%s})' % [by, sel],
    ]), anchor, anchor],
  apiMappings:: [
    { type: 'value', options: {
      '1': { text: 'OK', color: 'green', index: 0 },
      '0': { text: 'FAILING', color: 'red', index: 1 },
      '401': { text: 'KEY REFUSED', color: 'red', index: 2 },
      '429': { text: 'OUT OF QUOTA', color: 'red', index: 3 },
      '503': { text: 'BACKING OFF', color: 'red', index: 4 },
    } },
    { type: 'special', options: { match: 'nan', result: { text: 'NOT SCRAPED', color: 'red', index: 5 } } },
    { type: 'special', options: { match: 'null', result: { color: $.neutral, index: 6 } } },
  ],

  // A series of the exporter's process (its mode) for the instances shown:
  // with one account, the instance's own; with several, of the exporter
  // whose /metrics names the target.
  process(c, metric)::
    local sel = c.exporterSelector + self.cluster(c);
    local on = self.account(c);
    'max by (%s) (%s{%s, instance=~"$instance"} or (%s{%s} and on (%s) global_stability_exporter_scrapes_total{%s, target=~"$instance"}))' % [on, metric, sel, metric, sel, on, sel],

  dashboard(c, uidSuffix, title, description, variables, panels):: {
    annotations: { list: [{
      builtIn: 1,
      datasource: { type: 'grafana', uid: '-- Grafana --' },
      enable: true,
      hide: true,
      iconColor: 'rgba(0, 211, 255, 1)',
      name: 'Annotations & Alerts',
      type: 'dashboard',
    }] },
    description: description,
    editable: true,
    fiscalYearStartMonth: 0,
    graphTooltip: 1,
    id: null,
    links: [{
      title: 'Global Stability',
      type: 'dashboards',
      tags: [c.dashboardTags[0]],
      asDropdown: false,
      includeVars: true,
      keepTime: true,
      icon: 'external link',
      targetBlank: false,
      tooltip: '',
      url: '',
    }],
    panels: [panels[i] { id: i + 1 } for i in std.range(0, std.length(panels) - 1)],
    refresh: c.dashboardRefresh,
    schemaVersion: 39,
    tags: c.dashboardTags,
    templating: { list: variables },
    time: { from: c.dashboardTimeFrom, to: 'now' },
    timepicker: {},
    timezone: 'browser',
    title: c.dashboardTitlePrefix + title,
    uid: '%s-%s' % [c.dashboardUIDPrefix, uidSuffix],
    version: 1,
    weekStart: '',
  },
}
