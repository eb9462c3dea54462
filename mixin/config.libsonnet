// The one place to adapt the mixin to your set-up. Override any field:
//
//   (import 'mixin.libsonnet') + { _config+:: { selector: 'job="gsx", env="prod"' } }
//
// then render as the Makefile's mixin target does.
{
  _config+:: {
    // Label matchers that select the exporter's series, in every rule,
    // alert and panel query. Also applied to up{} for the exporter's own
    // availability, so use target labels (job, env, ...), not metric labels.
    selector: 'job="global_stability"',

    // Several API accounts in one exporter (a targets' file, each target
    // scraped as /probe?target=NAME, README "Several accounts"): the
    // targets' series come from the probe job (selector), one instance per
    // target; the exporter's own series (its API requests, quota and
    // reloads, each with a target label) from the exporter's own job,
    // which exporterSelector selects. With one account, both are the same
    // job.
    multiTarget: false,
    exporterSelector: if self.multiTarget then 'job="global_stability_exporter"' else self.selector,
    // Derived: how the dashboards pick the exporter's own series of the
    // instances they show (by the target label with several targets), and
    // its series about the whole process (with several targets, of every
    // instance of the exporter's job).
    ownTargetLabel: if self.multiTarget then 'target' else 'instance',
    processSelector: if self.multiTarget then self.exporterSelector else '%s, instance=~"$instance"' % self.exporterSelector,

    // Several clusters in one store (Thanos, Mimir, Cortex, or a Prometheus
    // receiving the others' remote write), each Prometheus telling its
    // series apart by an external label, clusterLabel. With
    // showMultiCluster, every rule and alert keeps that label where it
    // aggregates or matches across series, so that a fault in one cluster
    // fires for that cluster only, and every dashboard gets a cluster
    // variable before the others, its queries selecting it. Off, the
    // rendered rules and dashboards are those of one Prometheus.
    clusterLabel: 'cluster',
    showMultiCluster: false,

    // The spec's four pillars, as the exporter's pillar label and drilldown
    // endpoints spell them (mixin_test.go checks them against the client).
    // Not a setting: the alerts that notice a pillar score or a drilldown's
    // as_of gone missing expect one series per pillar listed here.
    pillars: ['conflict', 'cyber', 'supply_chain', 'macro'],

    // How long a value the alerts read may go missing without resetting
    // them: an endpoint failing every other scrape, a score null one
    // scrape in ten, an as_of missing every fourth. The threshold alerts
    // read the lowest value of this window (one high scrape alone never
    // pages), the staleness alerts the newest as_of in it. A few scrape
    // intervals: raise it with a scrape interval above a minute.
    gapWindow: '5m',

    // Composite score thresholds (0-100, lower is more stable). The overview
    // dashboard's gauge colours at the same two values.
    scoreWarning: 60,
    scoreCritical: 75,
    scoreFor: '15m',
    // A single pillar's score.
    pillarScoreHigh: 80,
    pillarScoreFor: '15m',
    // Rise of the composite above its lowest value of the past hour, and
    // how long the rise must last: one sample is not a trend.
    rapidRise: 10,
    rapidRiseFor: '5m',
    // A pillar's delta_24h above this. The spec does not give delta_24h a
    // unit; the reference API and the simulator use score points. If your
    // API reports a ratio or a percentage, change the threshold to match.
    pillarSurge: 15,
    pillarSurgeFor: '15m',
    // Age of as_of beyond which the data counts as stale.
    dataStaleSeconds: 3600,  // overview and drilldowns
    summaryStaleSeconds: 1800,  // the summary refreshes every 15 minutes: two missed
    staleFor: '5m',
    // The exporter and the API.
    // An input of the alerts absent while the exporter answers, whatever the
    // reason (its endpoint failing, its value invalid or missing): the alerts
    // that read it are blind.
    scoreUnavailableFor: '10m',  // the composite score: every score alert is blind
    pillarScoreUnavailableFor: '15m',  // one pillar's score, from the overview
    asOfUnavailableFor: '15m',  // an as_of that DataStale or SummaryStale reads
    endpointFailingFor: '15m',  // any other endpoint failing
    exporterDownFor: '5m',
    configReloadFailedFor: '10m',  // the targets' file (--config.file) did not load
    exporterAbsentFor: '10m',
    invalidDataFor: '30m',
    // The API's quota, where it announces one (rate-limit headers): warn
    // while less than this share of it is left, unless it resets within a
    // minute anyway.
    quotaLowPercent: 10,
    quotaLowFor: '5m',
    demoDataFor: '5m',

    // Where each alert's runbook_url points: this base, then #<alertname in lower case>.
    runbookURL: 'https://github.com/global-stability/global_stability_exporter/blob/main/docs/runbooks.md',

    // Dashboards.
    dashboardUIDPrefix: 'global-stability',
    dashboardTitlePrefix: 'Global Stability / ',
    dashboardTags: ['global-stability', 'prometheus'],
    dashboardRefresh: '1m',
    dashboardTimeFrom: 'now-6h',
  },
}
